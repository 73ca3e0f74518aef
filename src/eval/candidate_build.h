// Building a candidate from a .ucut program for `ucutlass eval` and `ucutlass export`: checked,
// emitted and built in this process through the one build path every command shares
// (build/program_build.h, then build_libraries and its cache), into
// <build_root>/<first 16 hex of the program text's SHA-256>/. A program that does not check or a
// failed build is a compile_error candidate (its record says why), never an exception.
#pragma once

#include <string>

#include "eval/evaluate.h"

namespace ucut::eval {

BuiltLibrary candidate_build(const std::string& program, const std::string& build_root);

}  // namespace ucut::eval
