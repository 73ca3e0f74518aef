// `ucutlass extract problem.py -o problem.json`: the Problem IR (docs/problem-ir.md) of a
// KernelBench-format problem, a folder of them, or a KernelBench checkout. The tracing is PyTorch's,
// so this command runs `python -m ucutlass_torch.extract` (support/python.h picks the interpreter and
// PYTHONPATH) and shows its diagnostics and progress notes as they come; it never imports PyTorch
// itself. The time limit is per problem (--timeout, $UCUTLASS_EXTRACT_TIMEOUT, default 120 s): the
// extractor stops a problem at it and names the line it was in.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "eval/sol_link.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut {
namespace {

struct ExtractOptions {
  std::string path;
  std::string output;
  int seed = 42;
  bool keep_going = false;
  int timeout_s = 0;  // 0: eval::extract_timeout_s()
};

// The last `n` lines of `text` (a Python traceback's tail names the failure).
std::string tail_lines(const std::string& text, int n) {
  size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n')) --pos;
  size_t end = pos;
  for (int i = 0; i < n && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return text.substr(pos == 0 ? 0 : pos + 1, end - (pos == 0 ? 0 : pos + 1));
}

int run_extract(const ExtractOptions& o) {
  std::error_code ec;
  if (!std::filesystem::exists(o.path, ec))
    return cli_fail("extract", make_error(ErrorCode::not_found, o.path + ": no such file or folder",
                                          "pass a KernelBench-format .py file, a folder of them, or a KernelBench checkout"));
  const int limit = o.timeout_s > 0 ? o.timeout_s : eval::extract_timeout_s();
  ProcessSpec spec;
  std::string python = python_interpreter();
  spec.argv = {python, "-m", "ucutlass_torch.extract", o.path, "--seed", std::to_string(o.seed),
               "--timeout", std::to_string(limit)};
  if (!o.output.empty()) {
    spec.argv.push_back("-o");
    spec.argv.push_back(o.output);
  }
  if (o.keep_going) spec.argv.push_back("--keep-going");
  spec.env_set = python_env();
  // A folder's problems each get the limit; a single file's hung interpreter is killed after it.
  if (!std::filesystem::is_directory(o.path)) spec.timeout = std::chrono::seconds(limit + kExtractBackstopS);
  spec.on_err = [](std::string_view chunk) { std::fwrite(chunk.data(), 1, chunk.size(), stderr); };

  auto run = subprocess_run(spec);
  if (!run)
    return cli_fail("extract", make_error(ErrorCode::subprocess,
                                          "cannot start the Python extractor (" + python + "): " + run.error().message,
                                          "set UCUTLASS_PYTHON to a Python with PyTorch installed, or run scripts/setup"));
  const ProcessResult& r = *run;
  if (!r.out.empty()) std::fwrite(r.out.data(), 1, r.out.size(), stdout);
  if (r.timed_out) {
    return cli_fail("extract", make_error(ErrorCode::timeout,
                                          o.path + ": extraction did not finish within " + std::to_string(limit) + " s",
                                          "check that Model(), get_inputs() and forward() finish on a CPU, or raise "
                                          "--timeout"));
  }
  if (r.signaled) {
    return cli_fail("extract", make_error(ErrorCode::subprocess, o.path + ": the Python extractor was killed by signal " +
                                                                     std::to_string(r.signal) + "\n" + tail_lines(r.err, 5)));
  }
  if (python_lacks_package(r.err))
    return cli_fail("extract", make_error(ErrorCode::subprocess, python + " cannot run the extractor: " + tail_lines(r.err, 1),
                                          "set UCUTLASS_PYTHON to a Python with PyTorch, or run `pip install -e python` with it"));
  // The extractor's finished diagnostics ("file:line: error: ...\nhint: ...") were shown as they came.
  if (r.exit_code == 0) return kExitOk;
  if (r.exit_code == 2) return kExitEnvironment;  // e.g. PyTorch missing, already explained
  if (r.err.find("Traceback (most recent call last)") != std::string::npos)
    std::fprintf(stderr, "error: the extractor failed unexpectedly (above); please report it with the problem file\n");
  return kExitFailed;
}

}  // namespace

CommandRun cmd_extract(CLI::App& sub) {
  auto o = std::make_shared<ExtractOptions>();
  sub.add_option("problem", o->path, "KernelBench-format problem .py, a folder of them, or a KernelBench checkout")
      ->required();
  cli_add_output_file_option(sub, o->output,
                             "output problem.json (a folder when the input is a folder); default: standard output");
  sub.add_option("--seed", o->seed, "seed recorded as init_seed for Model(*get_init_inputs())")->capture_default_str();
  sub.add_flag("--keep-going", o->keep_going, "for folders: report bad problems and continue");
  sub.add_option("--timeout", o->timeout_s,
                 "time limit in seconds per problem file (default 120); the extractor stops a problem at it and "
                 "names the line it was in")
      ->envname("UCUTLASS_EXTRACT_TIMEOUT")
      ->check(CLI::Range(1, 86400));
  return [o] { return run_extract(*o); };
}

}  // namespace ucut
