// Building kernel libraries: a content-hash cache of built .so files and a job pool that runs
// the compiler on many libraries at once, sized by cores and memory (~3.5 GB per nvcc job on
// CUTLASS sm90 code). A library is one translation unit (one .cu, one nvcc job) or units
// compiled apart and linked (codegen decides: the CUTLASS stages, the SIMT stages, the C ABI):
// a library's units compile in parallel where slots are free, and a unit whose text did not
// change (the same stages in another candidate) comes from the object cache.
//
// Cache keys = SHA-256 of (generated source, compiler command flags, compiler version, CUTLASS
// version, the contents of key_files); libraries live in <fs_cache_dir()>/kernels/<key>.so and
// unit objects in <fs_cache_dir()>/kernels/obj/<key>.o, written atomically. A hit copies the
// .so and returns in milliseconds. Two threads of one process that need the same object compile
// it once (the second waits). UCUTLASS_SPLIT_UNITS=0 builds every library as one unit.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "build/compiler.h"
#include "support/result.h"

namespace ucut::build {

struct BuildUnit {
  std::string name;    // file name stem: <out_dir>/<library>.units/<name>.cu
  std::string source;
  // A stored kernel unit (docs/kernel-abi.md): its object lives in the kernel store,
  // <cache>/kernels/stage/<key>.o, keyed by its text and the toolchain only (not by the
  // request's key_files, which it does not include), so every library of every program that
  // holds the same unit links the same object.
  bool stored = false;
  bool host_only = false;  // no device code: compiled as C++ (CompileJob::host_only)
};

struct BuildRequest {
  std::string name;         // the library's name: writes <out_dir>/<name>.cu and <name>.so
  std::string source;       // the generated .cu (the whole library)
  std::string out_dir;
  std::vector<std::string> include_dirs;
  // Headers of ours the source includes (the non-GEMM runtime): their contents enter the cache
  // key, so editing one rebuilds every library that includes it. (CUTLASS enters by version.)
  std::vector<std::string> key_files;
  // The same library as translation units (codegen LibraryCode::units), in the order to start
  // them (the longest compile first); empty: build `source`.
  std::vector<BuildUnit> units;
};

// What this process's builds cost and reused, since it started (every build_libraries and
// build_store_units): the suite report's compile figures (nvcc core-seconds per evaluated
// candidate, units taken from the kernel store).
struct BuildStats {
  long long nvcc_jobs = 0;        // compiler runs (objects, links, one-unit libraries)
  double nvcc_s = 0;              // their wall seconds summed: each nvcc runs on one core
  long long stored_built = 0;     // stored kernel units compiled
  long long stored_reused = 0;    // stored kernel units a library took from the store
  long long objects_built = 0;    // other unit objects compiled
  long long objects_reused = 0;   // other unit objects taken from the cache
  long long libraries_reused = 0; // whole libraries taken from the cache
};
BuildStats build_stats();

// Compile slots beyond the one a build's caller holds: a library's units compile in parallel
// only on slots taken here, so the process never runs more compiles than the pool allows.
class JobSlots {
 public:
  virtual ~JobSlots() = default;
  virtual bool try_acquire() = 0;  // never blocks
  virtual void release() = 0;
};

struct BuildResult {
  std::string name;
  bool ok = false;
  bool cache_hit = false;   // the whole library came from the cache
  int units = 0;            // built in units: how many (0: one translation unit)
  int units_cached = 0;     // of those, objects that came from the cache
  std::string so_path;
  std::string cu_path;
  std::string message;      // failure: what went wrong (compiler error lines, the file)
  double seconds = 0;       // wall time of this build (hit: the copy)
};

struct BuildOptions {
  int jobs = 0;              // 0: build_default_jobs()
  bool use_cache = true;
  std::string cache_dir;     // empty: fs_cache_dir() + "/kernels"
  std::string cutlass_version = "4.2.0";
  // Extra slots for the units of one library (the caller holds one per library it builds).
  // nullptr: build_libraries lends the jobs its requests leave idle.
  JobSlots* slots = nullptr;
};

// Whether libraries with units are built in units (UCUTLASS_SPLIT_UNITS=0 turns it off).
bool build_split_units();

// min(cores, available memory / 3.5 GB), at least 1.
int build_default_jobs();

// The cache key of one request under a compiler (of its whole source: a library built in units
// is stored under the same key as the one-unit build of the same source).
std::string build_cache_key(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts);
// The object cache key of one unit of a request.
std::string build_unit_cache_key(Compiler& compiler, const BuildRequest& req, const BuildUnit& unit,
                                 const BuildOptions& opts);

// One unit of build_store_units, as it ends (from the worker thread that built it, one at a time).
struct StoreUnitEvent {
  size_t index = 0;         // into the units given
  bool ok = false;
  bool present = false;     // it was in the store already (nothing compiled)
  double seconds = 0;       // the compile's wall time (0 when present)
  std::string message;      // failure: what went wrong
};

struct StoreBuildSummary {
  int built = 0, present = 0, failed = 0;
  double compile_seconds = 0;  // sum of the compiles' wall times (each nvcc is one core, ~all of it)
};

// Compiles stored kernel units (BuildUnit::stored) straight into the kernel store
// (<cache>/kernels/stage/<key>.o), opts.jobs at a time; units already there are skipped, so an
// interrupted run resumes where it stopped. The sources go to `source_dir` (one .cu per unit).
// With `pin`, every unit built or found is pinned (cache_gc.h: the cap never evicts it).
StoreBuildSummary build_store_units(Compiler& compiler, const std::vector<BuildUnit>& units,
                                    const std::vector<std::string>& include_dirs, const std::string& source_dir,
                                    const BuildOptions& opts, bool pin,
                                    const std::function<void(const StoreUnitEvent&)>& on_unit);

// The store path of one stored unit's object (cache_dir empty: fs_cache_dir() + "/kernels").
std::string build_store_object_path(Compiler& compiler, const BuildUnit& unit, const BuildOptions& opts);

// Builds every request (in parallel up to opts.jobs); results in request order. Never throws;
// each failure is a result.
std::vector<BuildResult> build_libraries(Compiler& compiler, const std::vector<BuildRequest>& reqs,
                                         const BuildOptions& opts);

}  // namespace ucut::build
