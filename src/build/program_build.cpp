#include "build/program_build.h"

#include "codegen/library.h"
#include "codegen/simt_common.h"
#include "support/fs.h"

namespace ucut::build {

Result<ProgramRequest> program_build_request(const dsl::Program& p, const std::string& input_name,
                                             const std::string& hash, const std::string& out_dir,
                                             const std::string& cutlass_dir) {
  auto lib = codegen::codegen_emit_library(p, {input_name, hash});
  if (!lib) return lib.error();
  ProgramRequest out;
  out.request = BuildRequest{p.name, lib->source, out_dir, {}};
  for (const auto& u : lib->units) out.request.units.push_back({u.name, u.source, u.stored, u.host_only});
  if (lib->needs_cutlass) {
    out.needs_cutlass = true;
    out.request.include_dirs = {cutlass_dir + "/include", cutlass_dir + "/tools/util/include"};
  }
  if (lib->needs_simt_runtime) {
    out.request.include_dirs.push_back(codegen::simt_runtime_include_dir());
    out.request.key_files = codegen::simt_runtime_headers();
  }
  out.config_names = lib->config_names;
  return out;
}

bool cutlass_present(const std::string& cutlass_dir) {
  return fs_exists(cutlass_dir + "/include/cutlass/version.h");
}

Error cutlass_missing_error(const std::string& cutlass_dir) {
  return make_error(ErrorCode::not_found, "CUTLASS headers not found under " + cutlass_dir,
                    "run scripts/setup, or set UCUTLASS_CUTLASS_DIR (compile: --cutlass-dir)");
}

}  // namespace ucut::build
