// The build pool and cache (see builder.h).
#include "build/builder.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/fs.h"
#include "support/hash.h"
#include "support/parallel.h"

namespace ucut::build {

namespace {

constexpr double kBytesPerJob = 3.5e9;  // peak RSS of one nvcc on one CUTLASS sm90 kernel (measured 3.1-3.7 GB)

double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return static_cast<double>(kb) * 1024.0;
  return 0;
}

Status copy_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::string tmp = to + ".tmp." + std::to_string(::getpid());
  std::filesystem::copy_file(from, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (!ec) std::filesystem::rename(tmp, to, ec);
  if (ec) return make_error(ErrorCode::io, "cannot copy " + from + " to " + to + ": " + ec.message());
  return ok_status();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

BuildResult build_one(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts,
                      const std::string& cache_dir) {
  auto t0 = std::chrono::steady_clock::now();
  BuildResult r;
  r.name = req.name;
  r.cu_path = req.out_dir + "/" + req.name + ".cu";
  r.so_path = req.out_dir + "/" + req.name + ".so";
  if (auto st = fs_mkdirs(req.out_dir); !st) {
    r.message = st.error().render();
    return r;
  }
  if (auto st = fs_write_atomic(r.cu_path, req.source); !st) {
    r.message = st.error().render();
    return r;
  }
  std::string key = build_cache_key(compiler, req, opts);
  std::string cached = cache_dir + "/" + key + ".so";
  if (opts.use_cache && fs_exists(cached)) {
    if (auto st = copy_file(cached, r.so_path); !st) {
      r.message = st.error().render();
      return r;
    }
    r.ok = true;
    r.cache_hit = true;
    r.seconds = seconds_since(t0);
    return r;
  }
  // Compile into the cache folder under a unique name, then publish atomically.
  if (auto st = fs_mkdirs(cache_dir); !st) {
    r.message = st.error().render();
    return r;
  }
  std::string tmp_so = cache_dir + "/" + key + ".building." + std::to_string(::getpid()) + "." +
                       std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 100000) + ".so";
  CompileJob job{r.cu_path, tmp_so, req.include_dirs};
  auto out = compiler.compile(job);
  if (!out) {
    r.message = out.error().render();
  } else if (!out->ok) {
    r.message = out->message;
    std::error_code ec;
    std::filesystem::remove(tmp_so, ec);
  } else {
    std::error_code ec;
    std::filesystem::rename(tmp_so, cached, ec);
    if (ec) r.message = "cannot store " + cached + ": " + ec.message();
    else if (auto st = copy_file(cached, r.so_path); !st) r.message = st.error().render();
    else r.ok = true;
  }
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace

int build_default_jobs() {
  // UCUTLASS_JOBS overrides: some hosts report a fraction of their memory as available until it
  // is touched (the GPU machines' MemAvailable starts at ~31 GiB of 256).
  if (const char* e = std::getenv("UCUTLASS_JOBS"); e && *e) {
    char* end = nullptr;
    long n = std::strtol(e, &end, 10);
    if (end && *end == '\0' && n > 0) return static_cast<int>(std::min(n, 512L));
  }
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores < 1) cores = 1;
  int by_mem = static_cast<int>(available_memory_bytes() / kBytesPerJob);
  int jobs = std::min(cores, by_mem > 0 ? by_mem : 1);
  return std::max(1, jobs);
}

std::string build_cache_key(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts) {
  Sha256 h;
  h.field("ucutlass-kernel-cache-v1");
  h.field(req.source);
  CompileJob probe{"IN.cu", "OUT.so", {}};  // flags only: paths must not change the key
  for (const auto& a : compiler.command(probe)) h.field(a);
  h.field(compiler.version());
  h.field(opts.cutlass_version);
  for (const auto& f : req.key_files) {
    auto text = fs_read(f);
    h.field(f.substr(f.find_last_of('/') + 1));
    h.field(text ? *text : std::string("<unreadable>"));  // unreadable: nvcc will say why
  }
  return h.hex();
}

std::vector<BuildResult> build_libraries(Compiler& compiler, const std::vector<BuildRequest>& reqs,
                                         const BuildOptions& opts) {
  std::string cache_dir = opts.cache_dir.empty() ? fs_cache_dir() + "/kernels" : opts.cache_dir;
  std::vector<BuildResult> results(reqs.size());
  int jobs = opts.jobs > 0 ? opts.jobs : build_default_jobs();
  parallel_for(reqs.size(), static_cast<size_t>(std::max(1, jobs)),
               [&](size_t i, size_t) { results[i] = build_one(compiler, reqs[i], opts, cache_dir); });
  return results;
}

}  // namespace ucut::build
