// `ucutlass export prog.ucut --kernelbench --problem problem.py -o model_new.py`: writes a
// KernelBench solution file whose ModelNew runs the compiled kernel library through ctypes
// (python/ucutlass_torch/export.py renders it). `--so` exports a prebuilt library instead.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "eval/candidate_build.h"
#include "support/fs.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut {
namespace {

struct ExportArgs {
  std::string program;
  std::string so;
  std::string problem;
  std::string output;
  bool kernelbench = false;
  std::string build_dir;
};

int run_export(const ExportArgs& a) {
  if (!a.kernelbench) {
    std::fprintf(stderr, "ucutlass export: error: choose an export format\nhint: --kernelbench (the only one so far)\n");
    return 2;
  }
  if (a.program.empty() == a.so.empty()) {
    std::fprintf(stderr, "ucutlass export: error: give either a .ucut program or --so LIB.so\n");
    return 2;
  }
  if (!fs_exists(a.problem)) {
    std::fprintf(stderr, "ucutlass export: error: --problem %s: no such file\nhint: the KernelBench problem the "
                 "kernel implements; ModelNew embeds its Model to own the same parameters\n", a.problem.c_str());
    return 1;
  }
  std::string so = a.so;
  if (!a.program.empty()) {
    auto c = eval::candidate_build(a.program, a.build_dir.empty() ? fs_cache_dir() + "/build" : a.build_dir);
    if (!c.compile_error.empty()) {
      std::fprintf(stderr, "ucutlass export: error: %s\n", c.compile_error.c_str());
      return 1;
    }
    so = c.so_path;
  } else if (!fs_exists(so)) {
    std::fprintf(stderr, "ucutlass export: error: --so %s: no such file\n", so.c_str());
    return 1;
  }
  ProcessSpec ps;
  ps.argv = {python_interpreter(), "-m", "ucutlass_torch.export", "--so", std::filesystem::absolute(so).string(),
             "--problem", a.problem, "--program", a.program.empty() ? so : a.program, "-o", a.output};
  ps.env_set = python_env();
  ps.timeout = std::chrono::milliseconds(120000);
  auto r = subprocess_run(ps);
  if (!r) {
    std::fprintf(stderr, "ucutlass export: error: %s\n", r.error().render().c_str());
    return 2;
  }
  if (!r->success()) {
    std::fputs(r->err.c_str(), stderr);
    return 1;
  }
  std::printf("wrote %s (ModelNew runs %s)\n", a.output.c_str(), so.c_str());
  return 0;
}

}  // namespace

CommandRun cmd_export(CLI::App& sub) {
  auto a = std::make_shared<ExportArgs>();
  sub.add_option("program", a->program, ".ucut program to compile and export");
  sub.add_option("--so", a->so, "export this prebuilt kernel library instead of compiling a program");
  sub.add_flag("--kernelbench", a->kernelbench, "write a KernelBench solution (class ModelNew)");
  sub.add_option("--problem", a->problem, "the KernelBench problem file the kernel implements")->required();
  sub.add_option("-o,--output", a->output, "the .py file to write")->required();
  sub.add_option("--build-dir", a->build_dir, "where the program is compiled (default: the cache folder)");
  return [a] { return run_export(*a); };
}

}  // namespace ucut
