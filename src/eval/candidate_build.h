// Building a candidate from a .ucut program: runs `ucutlass compile PROG -o DIR` (this same
// executable) and finds the kernel library it wrote. Going through the command keeps the harness
// independent of the build module's internals; a failed build is a compile_error candidate.
#pragma once

#include <string>

#include "eval/evaluate.h"

namespace ucut::eval {

// DIR is <build_root>/<first 16 hex of the program's SHA-256>.
Candidate candidate_build(const std::string& program, const std::string& build_root);

}  // namespace ucut::eval
