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
  std::string problem_json;  // the Problem IR, for the reference's output shapes; extracted when empty
  bool kernelbench = false;
  std::string build_dir;
};

int run_export(const ExportArgs& a) {
  if (!a.kernelbench) return cli_usage("export", "choose an export format", "--kernelbench (the only one so far)");
  if (a.program.empty() == a.so.empty()) return cli_usage("export", "give either a .ucut program or --so LIB.so");
  if (!fs_exists(a.problem))
    return cli_fail("export", make_error(ErrorCode::not_found, "--problem " + a.problem + ": no such file",
                                         "the KernelBench problem the kernel implements; ModelNew embeds its Model "
                                         "to own the same parameters"));
  std::string so = a.so;
  if (!a.program.empty() && !fs_exists(a.program))
    return cli_fail("export", make_error(ErrorCode::not_found, a.program + ": no such file"));
  if (!a.program.empty()) {
    auto c = eval::candidate_build(a.program, a.build_dir.empty() ? fs_cache_dir() + "/build" : a.build_dir);
    if (!c.compile_error.empty()) return cli_fail("export", make_error(ErrorCode::invalid_input, c.compile_error));
    so = c.so_path;
  } else if (!fs_exists(so)) {
    return cli_fail("export", make_error(ErrorCode::not_found, "--so " + so + ": no such file"));
  }
  ProcessSpec ps;
  ps.argv = {python_interpreter(), "-m", "ucutlass_torch.export", "--so", std::filesystem::absolute(so).string(),
             "--problem", a.problem, "--program", a.program.empty() ? so : a.program, "-o", a.output};
  if (!a.problem_json.empty()) {
    if (!fs_exists(a.problem_json))
      return cli_fail("export", make_error(ErrorCode::not_found, "--problem-json " + a.problem_json + ": no such file"));
    ps.argv.insert(ps.argv.end(), {"--problem-json", a.problem_json});
  }
  ps.env_set = python_env();
  ps.timeout = std::chrono::milliseconds(120000);
  auto r = subprocess_run(ps);
  if (!r) return cli_fail("export", r.error(), kExitEnvironment);
  if (!r->success()) {
    std::fputs(r->err.c_str(), stderr);
    return kExitFailed;
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
  sub.add_option("--problem-json", a->problem_json,
                 "its Problem IR (ucutlass extract): the reference's output shapes ModelNew returns; extracted when absent");
  cli_add_output_file_option(sub, a->output, "the .py file to write")->required();
  sub.add_option("--build-dir", a->build_dir, "where the program is compiled (default: the cache folder)");
  return [a] { return run_export(*a); };
}

}  // namespace ucut
