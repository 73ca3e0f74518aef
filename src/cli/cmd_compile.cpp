// `ucutlass compile prog.ucut -o DIR`: checks the program, writes DIR/<name>.cu (the kernel
// library: every stage plus the C ABI of docs/kernel-abi.md) and builds DIR/<name>.so with nvcc
// through the build pool and cache. Prints each stage's configuration name, cache hit or miss
// and timings. `--sample N` instead generates N random valid GEMM configurations (gemm_rules)
// and builds them all in parallel: the proof that the rules only admit programs that compile.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "build/builder.h"
#include "build/program_build.h"
#include "cli/commands.h"
#include "codegen/library.h"
#include "codegen/sample_programs.h"
#include "codegen/simt_common.h"
#include "dsl/dsl.h"
#include "support/fs.h"
#include "support/paths.h"

namespace ucut {

namespace {

struct CompileOpts {
  std::string path;
  std::string out_dir;
  bool emit_only = false;
  bool no_cache = false;
  int jobs = 0;
  int sample = 0;
  uint64_t seed = 1;
  std::string cutlass_dir = paths_cutlass_dir();
};

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int build_and_report(const CompileOpts& o, std::vector<build::BuildRequest> reqs,
                     const std::vector<std::vector<std::string>>& configs) {
  if (o.emit_only) {
    for (auto& r : reqs) {
      if (auto st = fs_mkdirs(r.out_dir); !st) return cli_fail("compile", st.error());
      std::string cu = r.out_dir + "/" + r.name + ".cu";
      if (auto st = fs_write_atomic(cu, r.source); !st) return cli_fail("compile", st.error());
      std::printf("wrote %s\n", cu.c_str());
    }
    return 0;
  }
  auto compiler = build::build_nvcc_compiler();
  build::BuildOptions bo;
  bo.jobs = o.jobs;
  bo.use_cache = !o.no_cache;
  auto t0 = std::chrono::steady_clock::now();
  std::printf("building %zu librar%s with %d job%s (%s)\n", reqs.size(), reqs.size() == 1 ? "y" : "ies",
              bo.jobs > 0 ? bo.jobs : build::build_default_jobs(),
              (bo.jobs > 0 ? bo.jobs : build::build_default_jobs()) == 1 ? "" : "s", compiler->version().c_str());
  std::fflush(stdout);
  auto results = build::build_libraries(*compiler, reqs, bo);
  int failed = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::string cfg;
    for (const auto& c : configs[i]) cfg += (cfg.empty() ? "" : ", ") + c;
    if (r.ok) {
      std::string how = r.cache_hit ? "copied from cache" : "compiled";
      if (r.units > 0) how += fmt::format(" from {} units ({} from cache)", r.units, r.units_cached);
      std::printf("%s %s  [%s]  %s in %.2f s\n", r.cache_hit ? "hit " : "miss", r.so_path.c_str(), cfg.c_str(),
                  how.c_str(), r.seconds);
    } else {
      ++failed;
      std::fprintf(stderr, "FAILED %s [%s]\n%s\n", r.cu_path.c_str(), cfg.c_str(), r.message.c_str());
    }
  }
  std::printf("%zu ok, %d failed, %.1f s wall\n", results.size() - failed, failed, since(t0));
  bool built = false;
  for (const auto& r : results) built = built || !r.cache_hit;
  if (built) cli_apply_cache_cap();
  return failed ? kExitFailed : kExitOk;
}

}  // namespace

CommandRun cmd_compile(CLI::App& sub) {
  auto o = std::make_shared<CompileOpts>();
  sub.add_option("program", o->path, "the .ucut program to compile");
  cli_add_output_dir_option(sub, o->out_dir, "output folder for <name>.cu and <name>.so")->required();
  sub.add_flag("--emit-only", o->emit_only, "write the .cu and stop (no nvcc)");
  sub.add_flag("--no-cache", o->no_cache, "always run nvcc, ignoring the kernel cache")->envname("UCUTLASS_NO_CACHE");
  sub.add_option("--jobs,-j", o->jobs, "parallel nvcc jobs (default: by cores and memory, ~3.5 GB each)")
      ->envname("UCUTLASS_JOBS");
  sub.add_option("--sample", o->sample, "instead of a program: build N random valid GEMM configurations");
  sub.add_option("--seed", o->seed, "seed of --sample")->capture_default_str();
  sub.add_option("--cutlass-dir", o->cutlass_dir, "folder holding CUTLASS's include/ and tools/util/include/")
      ->envname("UCUTLASS_CUTLASS_DIR")->capture_default_str();
  return [o] {
    std::vector<build::BuildRequest> reqs;
    std::vector<std::vector<std::string>> configs;
    std::vector<dsl::Program> programs;
    std::vector<std::string> hashes, inputs;
    if (o->sample > 0) {
      programs = codegen::sample_random_programs(o->sample, o->seed);
      for (const auto& p : programs) {
        hashes.push_back(dsl::dsl_hash(p));
        inputs.push_back("ucutlass compile --sample " + std::to_string(o->sample) + " --seed " + std::to_string(o->seed));
      }
    } else {
      if (o->path.empty()) return cli_usage("compile", "no program given", "ucutlass compile prog.ucut -o DIR");
      auto text = fs_read(o->path);
      if (!text) return cli_fail("compile", text.error());
      SourceFile src{o->path, *text};
      dsl::CheckResult r = dsl::dsl_compile(src);
      std::fputs(diag_render_all(src, r.diagnostics).c_str(), stderr);
      if (!r.program) return kExitFailed;
      hashes.push_back(dsl::dsl_hash(*r.program));
      inputs.push_back(o->path);
      programs.push_back(std::move(*r.program));
    }
    bool need_cutlass = false;
    for (size_t i = 0; i < programs.size(); ++i) {
      const auto& p = programs[i];
      auto made = build::program_build_request(p, inputs[i], hashes[i], o->out_dir, o->cutlass_dir);
      if (!made)
        return cli_fail("compile", make_error(made.error().code, inputs[i] + ": " + made.error().message, made.error().hint));
      need_cutlass = need_cutlass || made->needs_cutlass;
      build::BuildRequest req = std::move(made->request);
      const std::vector<std::string>& config_names = made->config_names;
      std::printf("%s: %zu stage%s:", p.name.c_str(), p.stages.size(), p.stages.size() == 1 ? "" : "s");
      for (const auto& c : config_names) std::printf(" %s", c.c_str());
      std::printf("\n");
      configs.push_back(config_names);
      reqs.push_back(std::move(req));
    }
    if (need_cutlass && !o->emit_only && !build::cutlass_present(o->cutlass_dir))
      return cli_fail("compile", build::cutlass_missing_error(o->cutlass_dir), kExitEnvironment);
    return build_and_report(*o, std::move(reqs), configs);
  };
}

}  // namespace ucut
