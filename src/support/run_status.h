// The status of one evaluated candidate, the one definition every module uses: the evaluator's
// records (eval/run_record.h, where it is written as its name), the search's attempts
// (search/search_types.h), the journal, the reports and the agent's prompts. Its names are the
// results schema's (docs/results-schema.md).
#pragma once

#include <optional>
#include <string>

#include "support/result.h"

namespace ucut {

enum class RunStatus { ok, compile_error, launch_error, timeout, mismatch, rejected };

// "ok", "compile_error", ...
const char* run_status_name(RunStatus s);
// The status named `name`; nullopt for any other text.
std::optional<RunStatus> run_status_parse(const std::string& name);
// As run_status_parse, with an invalid_input error that lists the names (and the closest one).
Result<RunStatus> run_status_from_name(const std::string& name);

}  // namespace ucut
