// The compiler behind kernel builds: an interface with the real nvcc implementation and a fake
// for tests. nvcc flags are the ones measured to work for CUTLASS 4.2 sm_90a kernels
// (cutlass-build.md): -std=c++17 -O3 --expt-relaxed-constexpr -DNDEBUG, sm_90a via -gencode, a
// -fPIC shared library with hidden visibility (only the C ABI is exported) and static cudart.
// ptxas warnings C7510/C7515 (serialized wgmma) fail the build. A failed compile is a
// CompileOutcome with the nvcc error lines, never an exception or a crash.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/result.h"

namespace ucut::build {

struct CompileJob {
  // library: one .cu to a .so; object: one unit's .cu to a .o (-c); link: objects to a .so.
  enum class Mode { library, object, link };
  std::string source_path;                // the .cu (library, object); unused by link
  std::string output_path;                // the .so or .o to write
  std::vector<std::string> include_dirs;  // -I
  Mode mode = Mode::library;
  std::vector<std::string> objects;       // link: the .o files
  // object: the unit holds host code only (the ABI unit: no kernel), so nvcc hands it to the host
  // compiler as C++ (`-x c++`): ~0.3 s where the CUDA front ends take ~1.1 s.
  bool host_only = false;
};

struct CompileOutcome {
  bool ok = false;
  std::string message;  // on failure: "<file>: nvcc failed:" + the error lines (or the ptxas warning)
  std::string log;      // the whole compiler output
  double seconds = 0;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Identity of the toolchain for cache keys ("nvcc 13.0.88").
  virtual std::string version() = 0;
  // The command line a job runs (for messages, --dry-run and the cache key).
  virtual std::vector<std::string> command(const CompileJob& job) = 0;
  // Fails only when the compiler could not be started; a compile error is ok() with !ok.
  virtual Result<CompileOutcome> compile(const CompileJob& job) = 0;
};

struct NvccOptions {
  std::string nvcc = "nvcc";            // looked up on PATH; $UCUTLASS_NVCC overrides
  std::string lock_path;                // if set, runs under `flock lock_path` (shared build hosts)
  std::chrono::seconds timeout{900};
};

// Stops every nvcc this process runs, now and later: running ones are killed (their outputs are
// not published to the cache) and new ones fail at once with a message that says why. A search
// calls it when it stops (time budget, attempt budget, Ctrl-C): compiles still in flight are
// lookahead nobody will evaluate, and waiting for them would overrun the time budget.
// build_resume_compiles() clears it (tests; a process that searches again).
void build_abort_compiles();
void build_resume_compiles();
bool build_compiles_aborted();

// The real nvcc. `opts.lock_path` defaults to $UCUTLASS_NVCC_LOCK when empty.
std::unique_ptr<Compiler> build_nvcc_compiler(NvccOptions opts = {});

// The flags every kernel library is compiled with (without -I, -o and the input).
std::vector<std::string> build_nvcc_flags();
// The flags of one unit compiled to an object (-c, no -shared or cudart) and of the link of
// objects into a library (the architecture, -shared, static cudart).
std::vector<std::string> build_nvcc_object_flags();
std::vector<std::string> build_nvcc_link_flags();

// Turns nvcc output into a short message: the lines that say "error" (at most 20), or the ptxas
// C7510/C7515 warning. Empty when the log holds neither.
std::string build_summarize_log(const std::string& log);
// Whether the log holds a ptxas warning that means serialized wgmma (a slow kernel).
bool build_log_has_wgmma_serialization(const std::string& log);

// A fake compiler for tests: `fn` decides the outcome and writes whatever it likes; it counts calls.
class FakeCompiler : public Compiler {
 public:
  using Fn = std::function<CompileOutcome(const CompileJob&)>;
  explicit FakeCompiler(Fn fn) : fn_(std::move(fn)) {}
  std::string version() override { return "fake 1"; }
  std::vector<std::string> command(const CompileJob& job) override {
    std::vector<std::string> argv{"fake", job.mode == CompileJob::Mode::object ? "-c" : "-shared", job.source_path,
                                  "-o", job.output_path};
    argv.insert(argv.end(), job.objects.begin(), job.objects.end());
    return argv;
  }
  Result<CompileOutcome> compile(const CompileJob& job) override;
  int calls() const { return calls_; }

 private:
  Fn fn_;
  int calls_ = 0;
};

}  // namespace ucut::build
