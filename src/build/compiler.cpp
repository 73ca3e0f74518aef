// nvcc and the fake compiler (see compiler.h).
#include "build/compiler.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "support/subprocess.h"

namespace ucut::build {

std::vector<std::string> build_nvcc_object_flags() {
  return {"-std=c++17", "-O3", "--expt-relaxed-constexpr", "-DNDEBUG",
          "-gencode=arch=compute_90a,code=sm_90a",  // sm_90a: plain sm_90 compiles wgmma out
          "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden"};
}

std::vector<std::string> build_nvcc_link_flags() {
  return {"-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC", "-shared", "-cudart", "static"};
}

std::vector<std::string> build_nvcc_flags() {
  auto f = build_nvcc_object_flags();
  for (const char* x : {"-shared", "-cudart", "static"}) f.emplace_back(x);
  return f;
}

bool build_log_has_wgmma_serialization(const std::string& log) {
  return log.find("C7510") != std::string::npos || log.find("C7515") != std::string::npos;
}

std::string build_summarize_log(const std::string& log) {
  std::istringstream in(log);
  std::string line, out;
  int n = 0;
  while (std::getline(in, line)) {
    bool err = line.find("error") != std::string::npos || line.find("C7510") != std::string::npos ||
               line.find("C7515") != std::string::npos;
    if (err && n++ < 20) out += line + "\n";
  }
  return out;
}

namespace {

std::atomic<bool> g_abort_compiles{false};

constexpr const char* kAbortedMessage =
    "stopped before it finished: the search ended (time or attempt budget, or Ctrl-C); nothing was cached";

}  // namespace

void build_abort_compiles() { g_abort_compiles = true; }
void build_resume_compiles() { g_abort_compiles = false; }
bool build_compiles_aborted() { return g_abort_compiles.load(); }

namespace {

// The toolkit's folder of link stubs (libcuda.so), or "" when none is found.
std::string cuda_stubs_dir() {
  std::vector<std::string> roots;
  if (const char* e = std::getenv("CUDA_HOME"); e && *e) roots.emplace_back(e);
  roots.emplace_back("/usr/local/cuda");
  for (const auto& r : roots)
    if (std::filesystem::exists(r + "/lib64/stubs/libcuda.so")) return r + "/lib64/stubs";
  return "";
}

class Nvcc : public Compiler {
 public:
  explicit Nvcc(NvccOptions o) : o_(std::move(o)) {
    if (const char* e = std::getenv("UCUTLASS_NVCC")) o_.nvcc = e;
    if (o_.lock_path.empty())
      if (const char* e = std::getenv("UCUTLASS_NVCC_LOCK")) o_.lock_path = e;
  }

  std::string version() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!version_.empty()) return version_;
    ProcessSpec spec;
    spec.argv = {o_.nvcc, "--version"};
    spec.timeout = std::chrono::seconds(30);
    auto r = subprocess_run(spec);
    if (!r || !r->success()) return version_ = "nvcc unknown";
    auto pos = r->out.find("release ");
    version_ = "nvcc " + (pos == std::string::npos ? r->out : r->out.substr(pos, r->out.find('\n', pos) - pos));
    return version_;
  }

  std::vector<std::string> command(const CompileJob& job) override {
    std::vector<std::string> argv;
    if (!o_.lock_path.empty()) argv = {"flock", o_.lock_path};
    argv.push_back(o_.nvcc);
    using Mode = CompileJob::Mode;
    for (auto& f : job.mode == Mode::library  ? build_nvcc_flags()
                   : job.mode == Mode::object ? build_nvcc_object_flags()
                                              : build_nvcc_link_flags())
      argv.push_back(f);
    if (job.mode != Mode::link)
      for (auto& d : job.include_dirs) argv.push_back("-I" + d);
    // CUTLASS's fill_workspace (EVT reductions) calls the driver API (cuMemsetD32Async,
    // cuGetErrorString), so the library must name libcuda.so.1; link against the toolkit's stub.
    if (auto stubs = cuda_stubs_dir(); !stubs.empty() && job.mode != Mode::object) {
      argv.push_back("-L" + stubs);
      argv.push_back("-lcuda");
    }
    if (job.mode == Mode::object && job.host_only) {
      argv.push_back("-x");
      argv.push_back("c++");
    }
    if (job.mode == Mode::object) argv.push_back("-c");
    argv.push_back("-o");
    argv.push_back(job.output_path);
    if (job.mode == Mode::link) argv.insert(argv.end(), job.objects.begin(), job.objects.end());
    else argv.push_back(job.source_path);
    return argv;
  }

  Result<CompileOutcome> compile(const CompileJob& job) override {
    // nvcc is background work: it runs at nice 10 (inherited from this thread) so that a GPU
    // worker timing kernels on the same host keeps its CPU (a starved host leaves gaps inside
    // the timed events). Linux niceness is per thread; failures are harmless.
    static thread_local bool niced = false;
    if (!niced) {
      (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
      niced = true;
    }
    CompileOutcome out;
    const std::string& what = job.mode == CompileJob::Mode::link ? job.output_path : job.source_path;
    if (build_compiles_aborted()) {
      out.message = what + ": " + kAbortedMessage;
      return out;
    }
    ProcessSpec spec;
    spec.argv = command(job);
    spec.timeout = o_.timeout;
    spec.abort = &g_abort_compiles;
    auto r = subprocess_run(spec);
    if (!r)
      return make_error(ErrorCode::subprocess, "could not run " + o_.nvcc + ": " + r.error().message,
                        "install the CUDA toolkit or set UCUTLASS_NVCC to nvcc's path");
    out.log = r->out + r->err;
    out.seconds = r->seconds;
    if (r->aborted) {
      out.message = what + ": " + kAbortedMessage;
    } else if (r->timed_out) {
      out.message = what + ": nvcc ran past " + std::to_string(o_.timeout.count()) + " s";
    } else if (!r->success()) {
      // a link error names a symbol on lines without "error": keep the log's tail instead
      const bool link = job.mode == CompileJob::Mode::link;
      std::string detail = link ? out.log.substr(out.log.size() > 2000 ? out.log.size() - 2000 : 0)
                                : build_summarize_log(out.log);
      out.message = what + (link ? ": linking failed (exit " : ": nvcc failed (exit ") +
                    std::to_string(r->exit_code) + "):\n" + detail;
    } else if (build_log_has_wgmma_serialization(out.log)) {
      out.message = what + ": ptxas serialized wgmma (a slow kernel):\n" + build_summarize_log(out.log);
    } else {
      out.ok = true;
    }
    return out;
  }

 private:
  NvccOptions o_;
  std::mutex mu_;
  std::string version_;
};

}  // namespace

std::unique_ptr<Compiler> build_nvcc_compiler(NvccOptions opts) { return std::make_unique<Nvcc>(std::move(opts)); }

Result<CompileOutcome> FakeCompiler::compile(const CompileJob& job) {
  static std::mutex mu;
  {
    std::lock_guard<std::mutex> lock(mu);
    ++calls_;
  }
  return fn_(job);
}

}  // namespace ucut::build
