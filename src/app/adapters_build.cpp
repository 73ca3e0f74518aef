#include "app/adapters_build.h"

#include <cstdlib>

#include "build/builder.h"
#include "build/program_build.h"
#include "dsl/dsl.h"
#include "search/compile_gate.h"
#include "support/fs.h"
#include "support/subprocess.h"

namespace ucut::app {

bool nvcc_available() {
  ProcessSpec ps;
  const char* env = std::getenv("UCUTLASS_NVCC");
  ps.argv = {env && *env ? env : "nvcc", "--version"};
  ps.timeout = std::chrono::milliseconds(20000);
  auto r = subprocess_run(ps);
  return r && r->success();
}

RealCompiler::RealCompiler(RealCompilerOptions options, std::shared_ptr<build::Compiler> nvcc)
    : opt_(std::move(options)), nvcc_(std::move(nvcc)) {}

search::CompileOutcome RealCompiler::compile(const search::Candidate& c) { return build(c); }

namespace {

// The candidate's checked program: the AST the space's candidates carry, else its text (a
// journal's, the memory's, an LLM's) checked here, kept in `holder`; nullptr when the text does not
// check (its diagnostics are in holder).
const dsl::Program* candidate_program(const search::Candidate& c, const std::string& path,
                                      std::optional<dsl::CheckResult>& holder) {
  if (c.ast) return c.ast.get();
  holder = dsl::dsl_compile({path, c.program});
  return holder->program ? &*holder->program : nullptr;
}

}  // namespace

std::vector<std::string> RealCompiler::units(const search::Candidate& c) {
  if (opt_.emit_only || !nvcc_ || !opt_.use_cache) return {};
  {
    std::lock_guard<std::mutex> lock(units_mu_);
    if (auto it = units_of_.find(c.hash); it != units_of_.end()) return it->second;
  }
  std::optional<dsl::CheckResult> checked;
  const dsl::Program* p = candidate_program(c, "candidate.ucut", checked);
  if (!p) return {};
  auto made = build::program_build_request(*p, opt_.input_name, c.hash, opt_.root, opt_.cutlass_dir);
  if (!made) return {};
  std::vector<std::string> out;
  if (made->request.units.empty()) {
    // one translation unit: its own object key stands for its one compile
    out.push_back("lib/" + build::build_cache_key(*nvcc_, made->request, {}));
  } else {
    for (const auto& u : made->request.units)
      if (!u.host_only)
        out.push_back((u.stored ? "stage/" : "obj/") + build::build_unit_cache_key(*nvcc_, made->request, u, {}));
  }
  std::lock_guard<std::mutex> lock(units_mu_);
  return units_of_[c.hash] = out;
}

bool RealCompiler::stored(const std::string& unit) {
  const std::string dir = fs_cache_dir() + "/kernels/";
  if (unit.rfind("lib/", 0) == 0) return fs_exists(dir + unit.substr(4) + ".so");
  return fs_exists(dir + unit + ".o");
}

search::CompileOutcome RealCompiler::build(const search::Candidate& c) {
  search::CompileOutcome out;
  const std::string dir = opt_.root + "/" + c.hash.substr(0, 16);
  std::optional<dsl::CheckResult> checked;
  const dsl::Program* checked_program = candidate_program(c, dir + "/candidate.ucut", checked);
  if (!checked_program) {
    out.message = "the candidate program does not check:\n" +
                  diag_render_all({dir + "/candidate.ucut", c.program}, checked->diagnostics);
    return out;
  }
  const dsl::Program& p = *checked_program;
  auto made = build::program_build_request(p, opt_.input_name, c.hash, dir, opt_.cutlass_dir);
  if (!made) {
    out.message = "code generation failed: " + made.error().render();
    return out;
  }
  if (auto st = fs_mkdirs(dir); !st) {
    out.message = st.error().render();
    return out;
  }
  (void)fs_write_atomic(dir + "/" + p.name + ".ucut", c.program);
  const build::BuildRequest& req = made->request;
  if (opt_.emit_only || !nvcc_) {
    out.cu_path = dir + "/" + p.name + ".cu";
    if (auto st = fs_write_atomic(out.cu_path, req.source); !st) {
      out.message = st.error().render();
      out.cu_path.clear();
      return out;
    }
    out.ok = true;
    out.cached = true;  // nothing ran: no compile cost to count
    return out;
  }
  if (made->needs_cutlass && !build::cutlass_present(opt_.cutlass_dir)) {
    out.message = build::cutlass_missing_error(opt_.cutlass_dir).render();
    return out;
  }
  build::BuildOptions bo;
  bo.jobs = 1;  // parallelism comes from the session compiling several candidates at once
  bo.use_cache = opt_.use_cache;
  bo.slots = &search::compile_gate();  // and from a library's units, on slots no candidate waits for
  auto results = build::build_libraries(*nvcc_, {req}, bo);
  const build::BuildResult& r = results.at(0);
  out.ok = r.ok;
  out.so_path = r.so_path;
  out.cu_path = r.cu_path;
  out.message = r.message;
  out.seconds = r.seconds;
  out.cached = r.cache_hit;
  return out;
}

}  // namespace ucut::app
