// The build pool and cache (see builder.h).
#include "build/builder.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "build/cache_gc.h"
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

// A name for a file being written in the cache: unique per process and thread.
std::string building_name(const std::string& stem, const std::string& ext) {
  return stem + ".building." + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 100000) + ext;
}

// Objects this process is compiling: a second thread that needs one waits for the first.
class InFlight {
 public:
  // true: the caller compiles `key` and calls done(key); false: another thread was compiling it
  // and has finished (its object is in the cache unless it failed).
  bool claim(const std::string& key) {
    std::unique_lock<std::mutex> lock(mu_);
    if (keys_.insert(key).second) return true;
    cv_.wait(lock, [&] { return keys_.count(key) == 0; });
    return false;
  }
  void done(const std::string& key) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      keys_.erase(key);
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> keys_;
};

InFlight& objects_in_flight() {
  static InFlight f;
  return f;
}

// A plain counting pool (build_libraries lends its idle jobs to the units of its requests).
class CountingSlots : public JobSlots {
 public:
  explicit CountingSlots(int n) : free_(n) {}
  bool try_acquire() override {
    int f = free_.load();
    while (f > 0)
      if (free_.compare_exchange_weak(f, f - 1)) return true;
    return false;
  }
  void release() override { ++free_; }

 private:
  std::atomic<int> free_;
};

struct UnitBuild {
  const BuildUnit* unit = nullptr;
  std::string cu, key, obj;
  bool ok = false, cached = false;
  std::string message;
};

// The cache's kernels folder: BuildOptions::cache_dir, else fs_cache_dir() + "/kernels".
std::string kernels_dir(const BuildOptions& opts) {
  return opts.cache_dir.empty() ? fs_cache_dir() + "/kernels" : opts.cache_dir;
}

std::mutex g_stats_mu;
BuildStats g_stats;

void stats_add(const std::function<void(BuildStats&)>& f) {
  std::lock_guard<std::mutex> lock(g_stats_mu);
  f(g_stats);
}

// Runs `job` into a unique temporary beside its output_path, then renames it into place, so a
// killed run never leaves a half-written cache entry. Returns "" or what failed.
std::string compile_and_publish(Compiler& compiler, CompileJob job) {
  const std::string final_path = job.output_path;
  const std::string ext = std::filesystem::path(final_path).extension().string();
  job.output_path = building_name(final_path.substr(0, final_path.size() - ext.size()), ext);
  auto out = compiler.compile(job);
  const double seconds = out ? out->seconds : 0;
  stats_add([&](BuildStats& s) {
    ++s.nvcc_jobs;
    s.nvcc_s += seconds;
  });
  std::string message = !out ? out.error().render() : !out->ok ? out->message : "";
  std::error_code ec;
  if (message.empty()) {
    std::filesystem::rename(job.output_path, final_path, ec);
    if (ec) message = "cannot store " + final_path + ": " + ec.message();
  }
  if (!message.empty()) std::filesystem::remove(job.output_path, ec);
  return message;
}

void build_unit(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts, UnitBuild& u) {
  InFlight& inflight = objects_in_flight();
  for (;;) {
    if (opts.use_cache && fs_exists(u.obj)) {
      cache_touch(u.obj);  // recently used: cleaning evicts it last
      u.ok = u.cached = true;
      stats_add([&](BuildStats& s) { ++(u.unit->stored ? s.stored_reused : s.objects_reused); });
      return;
    }
    if (inflight.claim(u.key)) break;
  }
  u.message = compile_and_publish(compiler, {u.cu, u.obj, req.include_dirs, CompileJob::Mode::object, {}, u.unit->host_only});
  u.ok = u.message.empty();
  if (u.ok) stats_add([&](BuildStats& s) { ++(u.unit->stored ? s.stored_built : s.objects_built); });
  inflight.done(u.key);
}

// Compiles a library's units whose objects are not cached (after a miss on the whole library),
// on this thread and on the extra slots it can take. Returns the objects to link; a failure is
// in r.message.
std::vector<std::string> build_units(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts,
                                     const std::string& cache_dir, BuildResult& r) {
  const std::string unit_dir = req.out_dir + "/" + req.name + ".units";
  if (auto st = fs_mkdirs(unit_dir); !st) {
    r.message = st.error().render();
    return {};
  }
  for (const char* sub : {"/obj", "/stage"})
    if (auto st = fs_mkdirs(cache_dir + sub); !st) {
      r.message = st.error().render();
      return {};
    }
  std::vector<UnitBuild> units(req.units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    UnitBuild& u = units[i];
    u.unit = &req.units[i];
    u.cu = unit_dir + "/" + u.unit->name + ".cu";
    u.key = build_unit_cache_key(compiler, req, *u.unit, opts);
    u.obj = cache_dir + (u.unit->stored ? "/stage/" : "/obj/") + u.key + ".o";
    if (auto st = fs_write_atomic(u.cu, u.unit->source); !st) {
      r.message = st.error().render();
      return {};
    }
  }
  // In the request's order (the longest compile first, BuildRequest::units).
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < units.size();) build_unit(compiler, req, opts, units[i]);
  };
  std::vector<std::thread> extra;
  for (size_t k = 1; k < units.size() && opts.slots && opts.slots->try_acquire(); ++k)
    extra.emplace_back([&] {
      worker();
      opts.slots->release();
    });
  worker();
  for (auto& t : extra) t.join();

  r.units = static_cast<int>(units.size());
  std::vector<std::string> objects;
  for (const auto& u : units) {
    r.units_cached += u.cached ? 1 : 0;
    objects.push_back(u.obj);
    if (!u.ok) r.message += (r.message.empty() ? "" : "\n") + u.message;
  }
  return objects;
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
    cache_touch(cached);
    stats_add([](BuildStats& s) { ++s.libraries_reused; });
    if (auto st = copy_file(cached, r.so_path); !st) {
      r.message = st.error().render();
      return r;
    }
    r.ok = true;
    r.cache_hit = true;
    r.seconds = seconds_since(t0);
    return r;
  }
  // Compile into the cache folder, published atomically (compile_and_publish).
  if (auto st = fs_mkdirs(cache_dir); !st) {
    r.message = st.error().render();
    return r;
  }
  CompileJob job{r.cu_path, cached, req.include_dirs};
  if (!req.units.empty() && build_split_units())
    job = {"", cached, {}, CompileJob::Mode::link, build_units(compiler, req, opts, cache_dir, r)};
  if (r.message.empty()) r.message = compile_and_publish(compiler, job);
  if (r.message.empty()) {
    if (auto st = copy_file(cached, r.so_path); !st) r.message = st.error().render();
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

bool build_split_units() {
  const char* e = std::getenv("UCUTLASS_SPLIT_UNITS");
  return !(e && std::string(e) == "0");
}

namespace {

void hash_toolchain(Sha256& h, Compiler& compiler, const BuildRequest& req, const BuildOptions& opts,
                    CompileJob::Mode mode, bool with_key_files = true, bool host_only = false) {
  CompileJob probe{"IN.cu", "OUT.so", {}, mode, {}, host_only};  // flags only: paths must not change the key
  auto argv = compiler.command(probe);
  // Neither a compile lock (UCUTLASS_NVCC_LOCK's `flock PATH`) nor the folder nvcc is installed in
  // changes the object (the version is hashed below): keys, so the kernel store, are the same on
  // every machine with the same toolchain.
  size_t first = argv.size() >= 2 && argv[0] == "flock" ? 2 : 0;
  for (size_t i = first; i < argv.size(); ++i)
    h.field(i == first ? argv[i].substr(argv[i].find_last_of('/') + 1) : argv[i]);
  h.field(compiler.version());
  h.field(opts.cutlass_version);
  if (!with_key_files) return;
  for (const auto& f : req.key_files) {
    auto text = fs_read(f);
    h.field(f.substr(f.find_last_of('/') + 1));
    h.field(text ? *text : std::string("<unreadable>"));  // unreadable: nvcc will say why
  }
}

}  // namespace

std::string build_cache_key(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts) {
  Sha256 h;
  h.field("ucutlass-kernel-cache-v1");
  h.field(req.source);
  hash_toolchain(h, compiler, req, opts, CompileJob::Mode::library);
  return h.hex();
}

std::string build_unit_cache_key(Compiler& compiler, const BuildRequest& req, const BuildUnit& unit,
                                 const BuildOptions& opts) {
  Sha256 h;
  h.field(unit.stored ? "ucutlass-kernel-store-v1" : "ucutlass-object-cache-v1");
  h.field(unit.source);
  hash_toolchain(h, compiler, req, opts, CompileJob::Mode::object, !unit.stored, unit.host_only);
  return h.hex();
}

BuildStats build_stats() {
  std::lock_guard<std::mutex> lock(g_stats_mu);
  return g_stats;
}

std::string build_store_object_path(Compiler& compiler, const BuildUnit& unit, const BuildOptions& opts) {
  return kernels_dir(opts) + "/stage/" + build_unit_cache_key(compiler, BuildRequest{}, unit, opts) + ".o";
}

StoreBuildSummary build_store_units(Compiler& compiler, const std::vector<BuildUnit>& units,
                                    const std::vector<std::string>& include_dirs, const std::string& source_dir,
                                    const BuildOptions& opts, bool pin,
                                    const std::function<void(const StoreUnitEvent&)>& on_unit) {
  StoreBuildSummary sum;
  std::mutex mu;
  const std::string cache_dir = kernels_dir(opts);
  auto report = [&](StoreUnitEvent e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!e.ok) ++sum.failed;
    else if (e.present) ++sum.present;
    else ++sum.built;
    sum.compile_seconds += e.seconds;
    if (on_unit) on_unit(e);
  };
  for (const std::string& d : {cache_dir + "/stage", source_dir})
    if (auto st = fs_mkdirs(d); !st) {
      for (size_t i = 0; i < units.size(); ++i) report({i, false, false, 0, st.error().render()});
      return sum;
    }
  const int jobs = std::max(1, opts.jobs > 0 ? opts.jobs : build_default_jobs());
  parallel_for(units.size(), static_cast<size_t>(jobs), [&](size_t i, size_t) {
    const BuildUnit& u = units[i];
    StoreUnitEvent e{i};
    const std::string obj = build_store_object_path(compiler, u, opts);
    if (!u.stored) {
      e.message = u.name + ": not a stored kernel unit";
    } else if (fs_exists(obj)) {
      e.ok = e.present = true;
    } else {
      const std::string cu = source_dir + "/" + u.name + ".cu";
      if (auto st = fs_write_atomic(cu, u.source); !st) {
        e.message = st.error().render();
      } else {
        auto t0 = std::chrono::steady_clock::now();
        e.message = compile_and_publish(compiler, {cu, obj, include_dirs, CompileJob::Mode::object, {}, u.host_only});
        e.seconds = seconds_since(t0);
        e.ok = e.message.empty();
        if (e.ok) stats_add([](BuildStats& s) { ++s.stored_built; });
      }
    }
    if (e.ok && pin)
      if (auto st = cache_pin(obj); !st) {
        e.ok = false;
        e.message = st.error().render();
      }
    report(std::move(e));
  });
  return sum;
}

std::vector<BuildResult> build_libraries(Compiler& compiler, const std::vector<BuildRequest>& reqs,
                                         const BuildOptions& opts) {
  std::string cache_dir = kernels_dir(opts);
  std::vector<BuildResult> results(reqs.size());
  int jobs = std::max(1, opts.jobs > 0 ? opts.jobs : build_default_jobs());
  // Each request's thread holds one job; the jobs no request holds go to the units.
  CountingSlots idle(std::max(0, jobs - static_cast<int>(std::min<size_t>(reqs.size(), jobs))));
  BuildOptions o = opts;
  if (!o.slots) o.slots = &idle;
  parallel_for(reqs.size(), static_cast<size_t>(jobs),
               [&](size_t i, size_t) { results[i] = build_one(compiler, reqs[i], o, cache_dir); });
  return results;
}

}  // namespace ucut::build
