// Printers for a SolReport: the readable text `ucutlass sol` shows and the same content as JSON
// (schema "ucutlass.sol/1"), both from the one struct so they cannot disagree.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sol/estimate.h"
#include "sol/hardware.h"

namespace ucut::sol {

inline constexpr const char* kSolReportSchema = "ucutlass.sol/1";

std::string sol_report_text(const SolReport& r, const HwSpec& hw);
nlohmann::ordered_json sol_report_json(const SolReport& r, const HwSpec& hw);

}  // namespace ucut::sol
