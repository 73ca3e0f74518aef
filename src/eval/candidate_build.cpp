#include "eval/candidate_build.h"

#include <filesystem>

#include "build/compiler.h"
#include "build/program_build.h"
#include "dsl/dsl.h"
#include "support/diagnostics.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/paths.h"

namespace ucut::eval {

BuiltLibrary candidate_build(const std::string& program, const std::string& build_root) {
  BuiltLibrary c;
  c.name = std::filesystem::path(program).filename().string();
  auto text = fs_read(program);
  if (!text) {
    c.compile_error = text.error().render();
    return c;
  }
  SourceFile src{program, *text};
  dsl::CheckResult checked = dsl::dsl_compile(src);
  if (!checked.program) {
    c.compile_error = "the program does not check:\n" + diag_render_all(src, checked.diagnostics);
    return c;
  }
  const std::string dir = build_root + "/" + sha256_hex(*text).substr(0, 16);
  const std::string cutlass = paths_cutlass_dir();
  auto made = build::program_build_request(*checked.program, program, dsl::dsl_hash(*checked.program), dir, cutlass);
  if (!made) {
    c.compile_error = "code generation failed: " + made.error().render();
    return c;
  }
  if (made->needs_cutlass && !build::cutlass_present(cutlass)) {
    c.compile_error = build::cutlass_missing_error(cutlass).render();
    return c;
  }
  if (auto st = fs_mkdirs(dir); !st) {
    c.compile_error = st.error().render();
    return c;
  }
  auto nvcc = build::build_nvcc_compiler();
  auto results = build::build_libraries(*nvcc, {made->request}, build::BuildOptions{});
  const build::BuildResult& r = results.at(0);
  if (!r.ok) {
    c.compile_error = "the build failed: " + r.message;
    return c;
  }
  c.so_path = std::filesystem::absolute(r.so_path).string();
  return c;
}

}  // namespace ucut::eval
