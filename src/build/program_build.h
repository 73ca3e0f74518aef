// The one way a checked program becomes a kernel library's build request (issue: "program -> .so
// built three ways"): code generation (codegen_emit_library), the library's units, and the include
// paths its kind needs (CUTLASS for GEMM stages, the SIMT runtime for the others). The search's
// compiler (app/adapters_build.h), `ucutlass compile` and `ucutlass eval`/`export` building a
// .ucut (eval/candidate_build.h) all go through it, then through build_libraries and its cache.
#pragma once

#include <string>
#include <vector>

#include "build/builder.h"
#include "dsl/program.h"
#include "support/result.h"

namespace ucut::build {

struct ProgramRequest {
  BuildRequest request;                   // name, source, units, out_dir, include dirs, key files
  std::vector<std::string> config_names;  // one per emitted stage
  bool needs_cutlass = false;             // the request includes CUTLASS (check cutlass_present first)
};

// `input_name` is shown in the generated source's first line; `hash` is dsl_hash(program).
// Errors: code generation refused the program (the message names the stage).
Result<ProgramRequest> program_build_request(const dsl::Program& program, const std::string& input_name,
                                             const std::string& hash, const std::string& out_dir,
                                             const std::string& cutlass_dir);

// Whether `cutlass_dir` holds the CUTLASS headers a GEMM library includes.
bool cutlass_present(const std::string& cutlass_dir);

// The error a build that needs CUTLASS gets when cutlass_present() is false.
Error cutlass_missing_error(const std::string& cutlass_dir);

}  // namespace ucut::build
