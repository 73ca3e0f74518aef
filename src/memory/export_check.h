// The schema of a memory export ({"schema": "ucutlass.memory/1", "experiences": [...],
// "priors": [...]}, what 'ucutlass memory export' writes), checked before anything is imported:
// every element's fields with their types, so an import either takes the whole file or refuses it
// with the JSON path of the first bad element ("$.priors[3].wins: expected a whole number >= 0,
// found \"x\""). experience_from_json / prior_from_json then read only checked documents.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "support/result.h"

namespace ucut::memory {

// Ok, or an invalid_input error "<source>: <JSON path>: <what is wrong>" with a hint.
Status memory_check_export(const nlohmann::json& doc, const std::string& source);

}  // namespace ucut::memory
