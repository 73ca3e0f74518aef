// Building kernel libraries: a content-hash cache of built .so files and a job pool that runs
// the compiler on many libraries at once, sized by cores and memory (~3.5 GB per nvcc job on
// CUTLASS sm90 code). One library is one translation unit (one .cu, one nvcc job): parallelism
// comes from building many libraries (the search, the compile sample) at once; a multi-stage
// program compiles its stages in one job (split per stage when programs grow large).
//
// Cache key = SHA-256 of (generated source, compiler command flags, compiler version, CUTLASS
// version); entries live in <fs_cache_dir()>/kernels/<key>.so, written atomically. A hit copies
// the .so and returns in milliseconds.
#pragma once

#include <string>
#include <vector>

#include "build/compiler.h"
#include "support/result.h"

namespace ucut::build {

struct BuildRequest {
  std::string name;         // the library's name: writes <out_dir>/<name>.cu and <name>.so
  std::string source;       // the generated .cu
  std::string out_dir;
  std::vector<std::string> include_dirs;
  // Headers of ours the source includes (the non-GEMM runtime): their contents enter the cache
  // key, so editing one rebuilds every library that includes it. (CUTLASS enters by version.)
  std::vector<std::string> key_files;
};

struct BuildResult {
  std::string name;
  bool ok = false;
  bool cache_hit = false;
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
};

// min(cores, available memory / 3.5 GB), at least 1.
int build_default_jobs();

// The cache key of one request under a compiler.
std::string build_cache_key(Compiler& compiler, const BuildRequest& req, const BuildOptions& opts);

// Builds every request (in parallel up to opts.jobs); results in request order. Never throws;
// each failure is a result.
std::vector<BuildResult> build_libraries(Compiler& compiler, const std::vector<BuildRequest>& reqs,
                                         const BuildOptions& opts);

}  // namespace ucut::build
