// The cache folder's disk use and its cleaning (`ucutlass cache`, and the size cap applied after
// every command that builds kernels). What the cache holds (fs_cache_dir()):
//   kernels/<key>.so      built libraries (builder.h), an entry each
//   kernels/obj/<key>.o   unit objects, an entry each
//   kernels/stage/<key>.o the kernel store: stored kernel units (docs/kernel-abi.md), an entry
//                         each; one with a `<key>.pin` beside it was installed by a zoo
//                         (`ucutlass warmup`, `ucutlass cache import`) and is pinned: the cap and
//                         `clean` never evict it, only `clean --all --pinned` does
//   build/<hash>/         candidate folders of the search (program, .cu, .so), an entry each
//   baselines/            measured PyTorch timings: counted, never cleaned (measured data)
// Everything but baselines can be rebuilt, so cleaning evicts the least recently used entries
// (file or folder modification time; a cache hit touches its entry) until the cache fits, and
// never an entry younger than `min_age` (another process may be about to read it) unless asked
// to remove everything. Files that end a killed build (`*.building.*`, older than an hour: nvcc
// times out after 15 minutes) are removed on every clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/result.h"

namespace ucut::build {

struct CacheArea {
  std::string name;  // "libraries", "objects", "store", "candidates", "baselines"
  std::string path;
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t pinned = 0;  // store: entries a zoo installed (never evicted by the cap)
};

struct CacheUsage {
  std::string root;
  std::vector<CacheArea> areas;  // in the order above
  int64_t stale_files = 0;       // leftovers of killed builds
  int64_t stale_bytes = 0;
  int64_t total_bytes() const;
};

CacheUsage cache_usage(const std::string& root);

struct CacheCleanOptions {
  int64_t max_bytes = -1;                 // evict down to this many bytes; < 0: no size target
  bool all = false;                       // every library, object, stored unit and candidate folder, any age
  bool pinned = false;                    // with `all`: the pinned stored units too
  std::chrono::seconds min_age{3600};     // younger entries are kept (unless `all`)
  std::chrono::seconds stale_age{3600};   // `*.building.*` files older than this are removed
};

struct CacheCleanResult {
  int64_t removed_entries = 0;
  int64_t removed_bytes = 0;
  int64_t stale_removed = 0;
  int64_t total_after = 0;  // bytes left (every area, baselines included)
  bool target_met = true;   // false: the target needs entries younger than min_age
};

CacheCleanResult cache_clean(const std::string& root, const CacheCleanOptions& opts);

// "20G", "512M", "1.5G", "800K", "1000" (bytes); "0" means no cap. Case-insensitive, an optional
// trailing "B" or "iB"; units are powers of 1024.
Result<int64_t> cache_parse_size(const std::string& text);
// "20.0 GB", "512 MB", "12 KB", "900 B" (powers of 1024).
std::string cache_format_size(int64_t bytes);

// The cap: $UCUTLASS_CACHE_MAX (cache_parse_size), else 20 GiB; 0 is no cap.
Result<int64_t> cache_max_bytes();

// After a command that built kernels: when the cache is over the cap, cleans it down to 80% of
// the cap. Returns a line for the user ("" when nothing was done), or the error in words.
std::string cache_enforce_cap(const std::string& root);

// Marks an entry as just used (its modification time := now); errors are ignored.
void cache_touch(const std::string& path);

// Pins a stored unit (`<root>/kernels/stage/<key>.o`): writes `<key>.pin` beside it.
Status cache_pin(const std::string& object_path);

}  // namespace ucut::build
