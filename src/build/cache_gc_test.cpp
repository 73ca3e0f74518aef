// The cache's disk use and cleaning on a fake cache folder: areas counted, least recently used
// entries evicted first down to the target, young entries and baselines never evicted, leftovers
// of killed builds removed, sizes parsed and printed, and a cache hit marks its entry as used.
#include "build/cache_gc.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "build/builder.h"
#include "support/fs.h"

namespace ucut::build {
namespace {

namespace fs = std::filesystem;

struct FakeCache {
  std::string root;
  FakeCache() {
    root = fs::temp_directory_path() / ("ucut_cache_gc_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter++));
    fs::remove_all(root);
  }
  ~FakeCache() { fs::remove_all(root); }
  // A file of `bytes` bytes last written `hours_ago` hours ago.
  void file(const std::string& rel, size_t bytes, double hours_ago) {
    const fs::path p = fs::path(root) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
    age(rel, hours_ago);
  }
  void age(const std::string& rel, double hours_ago) {
    fs::last_write_time(fs::path(root) / rel,
                        fs::file_time_type::clock::now() -
                            std::chrono::duration_cast<fs::file_time_type::duration>(
                                std::chrono::duration<double, std::ratio<3600>>(hours_ago)));
  }
  bool has(const std::string& rel) const { return fs::exists(fs::path(root) / rel); }
  static inline int counter = 0;
};

TEST(CacheGc, UsageCountsEveryArea) {
  FakeCache c;
  c.file("kernels/a.so", 1000, 5);
  c.file("kernels/b.so", 3000, 1);
  c.file("kernels/obj/u.o", 500, 2);
  c.file("kernels/stage/k1.o", 400, 2);
  c.file("kernels/stage/k2.o", 600, 2);
  c.file("kernels/stage/k2.pin", 0, 2);  // a zoo's
  c.file("kernels/k.building.12.3.so", 700, 3);  // a killed build's leftover
  c.file("build/c1/lib.so", 200, 4);
  c.file("build/c1/lib.cu", 100, 4);
  c.file("baselines/p.json", 50, 9);
  CacheUsage u = cache_usage(c.root);
  ASSERT_EQ(u.areas.size(), 5u);
  EXPECT_EQ(u.areas[0].name, "libraries");
  EXPECT_EQ(u.areas[0].entries, 2);
  EXPECT_EQ(u.areas[0].bytes, 4000);
  EXPECT_EQ(u.areas[1].entries, 1);
  EXPECT_EQ(u.areas[1].bytes, 500);
  EXPECT_EQ(u.areas[2].name, "store");
  EXPECT_EQ(u.areas[2].entries, 2);
  EXPECT_EQ(u.areas[2].bytes, 1000);
  EXPECT_EQ(u.areas[2].pinned, 1);
  EXPECT_EQ(u.areas[3].entries, 1);
  EXPECT_EQ(u.areas[3].bytes, 300);
  EXPECT_EQ(u.areas[4].entries, 1);
  EXPECT_EQ(u.areas[4].bytes, 50);
  EXPECT_EQ(u.stale_files, 1);
  EXPECT_EQ(u.total_bytes(), 4000 + 500 + 1000 + 300 + 50 + 700);
  // an empty or missing folder is no error
  EXPECT_EQ(cache_usage(c.root + "/nothing").total_bytes(), 0);
}

// Stored units are evicted like objects, least recently used first, except the pinned ones a zoo
// installed: only `clean --all --pinned` removes those.
TEST(CacheGc, PinnedStoredUnitsStayUnlessAskedFor) {
  FakeCache c;
  c.file("kernels/stage/zoo.o", 1000, 90);
  c.file("kernels/stage/zoo.pin", 0, 90);
  c.file("kernels/stage/old.o", 1000, 50);
  c.file("kernels/stage/new.o", 1000, 2);
  CacheCleanOptions o;
  o.max_bytes = 0;
  CacheCleanResult r = cache_clean(c.root, o);
  EXPECT_EQ(r.removed_entries, 2);
  EXPECT_TRUE(c.has("kernels/stage/zoo.o"));
  EXPECT_FALSE(c.has("kernels/stage/old.o"));
  EXPECT_FALSE(r.target_met) << "the pinned unit is over the target";
  CacheCleanOptions all;
  all.all = true;
  EXPECT_EQ(cache_clean(c.root, all).removed_entries, 0);
  EXPECT_TRUE(c.has("kernels/stage/zoo.o"));
  all.pinned = true;
  EXPECT_EQ(cache_clean(c.root, all).removed_entries, 1);
  EXPECT_FALSE(c.has("kernels/stage/zoo.o"));
  EXPECT_FALSE(c.has("kernels/stage/zoo.pin"));
  // cache_pin writes the marker
  c.file("kernels/stage/k.o", 10, 1);
  ASSERT_TRUE(cache_pin(c.root + "/kernels/stage/k.o").ok());
  EXPECT_TRUE(c.has("kernels/stage/k.pin"));
  EXPECT_EQ(cache_usage(c.root).areas[2].pinned, 1);
}

TEST(CacheGc, CleanEvictsTheLeastRecentlyUsedFirstAndKeepsBaselines) {
  FakeCache c;
  c.file("kernels/old.so", 1000, 50);
  c.file("kernels/obj/old.o", 1000, 40);
  c.file("build/cand_old/x.so", 1000, 30);
  c.file("kernels/mid.so", 1000, 20);
  c.file("kernels/new.so", 1000, 10);
  c.age("build/cand_old", 30);
  c.file("baselines/p.json", 1000, 100);  // oldest of all: measured data, never evicted
  CacheCleanOptions o;
  o.max_bytes = 3000;
  CacheCleanResult r = cache_clean(c.root, o);
  EXPECT_EQ(r.removed_entries, 3);
  EXPECT_EQ(r.removed_bytes, 3000);
  EXPECT_TRUE(r.target_met);
  EXPECT_EQ(r.total_after, 3000);
  EXPECT_FALSE(c.has("kernels/old.so"));
  EXPECT_FALSE(c.has("kernels/obj/old.o"));
  EXPECT_FALSE(c.has("build/cand_old"));
  EXPECT_TRUE(c.has("kernels/mid.so"));
  EXPECT_TRUE(c.has("kernels/new.so"));
  EXPECT_TRUE(c.has("baselines/p.json"));
  // no target: nothing more goes
  EXPECT_EQ(cache_clean(c.root, {}).removed_entries, 0);
}

TEST(CacheGc, YoungEntriesStayUnlessEverythingIsAskedFor) {
  FakeCache c;
  c.file("kernels/old.so", 1000, 5);
  c.file("kernels/young.so", 1000, 0.1);  // six minutes: another process may be reading it
  c.file("kernels/obj/young.o", 1000, 0.2);
  c.file("kernels/fresh.building.99.1.so", 1000, 0.1);  // a build in progress
  c.file("kernels/dead.building.98.1.so", 1000, 2);     // a killed one
  c.file("baselines/b.json", 10, 1);
  CacheCleanOptions o;
  o.max_bytes = 0;
  CacheCleanResult r = cache_clean(c.root, o);
  EXPECT_EQ(r.removed_entries, 1);
  EXPECT_FALSE(r.target_met);
  EXPECT_EQ(r.stale_removed, 1);
  EXPECT_FALSE(c.has("kernels/old.so"));
  EXPECT_TRUE(c.has("kernels/young.so"));
  EXPECT_TRUE(c.has("kernels/fresh.building.99.1.so"));
  EXPECT_FALSE(c.has("kernels/dead.building.98.1.so"));
  CacheCleanOptions all;
  all.all = true;
  CacheCleanResult a = cache_clean(c.root, all);
  EXPECT_EQ(a.removed_entries, 2);
  EXPECT_FALSE(c.has("kernels/young.so"));
  EXPECT_FALSE(c.has("kernels/obj/young.o"));
  EXPECT_TRUE(c.has("kernels/fresh.building.99.1.so"));  // never a build in progress
  EXPECT_TRUE(c.has("baselines/b.json"));
}

TEST(CacheGc, SizesParseAndPrint) {
  EXPECT_EQ(*cache_parse_size("20G"), int64_t{20} << 30);
  EXPECT_EQ(*cache_parse_size("512m"), int64_t{512} << 20);
  EXPECT_EQ(*cache_parse_size("1.5GiB"), int64_t{3} << 29);
  EXPECT_EQ(*cache_parse_size(" 800 KB "), 800 * 1024);
  EXPECT_EQ(*cache_parse_size("1000"), 1000);
  EXPECT_EQ(*cache_parse_size("0"), 0);
  for (const char* bad : {"", "G", "-1G", "ten", "5X", "1e30G"}) {
    auto r = cache_parse_size(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().hint.find("20G"), std::string::npos);
  }
  EXPECT_EQ(cache_format_size(900), "900 B");
  EXPECT_EQ(cache_format_size(12 * 1024), "12 KB");
  EXPECT_EQ(cache_format_size(int64_t{512} << 20), "512 MB");
  EXPECT_EQ(cache_format_size(int64_t{20} << 30), "20.0 GB");
}

TEST(CacheGc, TheCapComesFromTheEnvironment) {
  ::unsetenv("UCUTLASS_CACHE_MAX");
  EXPECT_EQ(*cache_max_bytes(), int64_t{20} << 30);
  ::setenv("UCUTLASS_CACHE_MAX", "3K", 1);
  EXPECT_EQ(*cache_max_bytes(), 3072);
  FakeCache c;
  for (int i = 0; i < 5; ++i) c.file("kernels/k" + std::to_string(i) + ".so", 1000, 10 - i);
  const std::string line = cache_enforce_cap(c.root);  // 5000 > 3072: down to 80% (2457)
  EXPECT_NE(line.find("removed 3 least recently used entries"), std::string::npos) << line;
  EXPECT_FALSE(c.has("kernels/k0.so"));
  EXPECT_TRUE(c.has("kernels/k4.so"));
  EXPECT_EQ(cache_enforce_cap(c.root), "");  // under the cap now
  ::setenv("UCUTLASS_CACHE_MAX", "lots", 1);
  EXPECT_NE(cache_enforce_cap(c.root).find("UCUTLASS_CACHE_MAX: 'lots' is not a size"), std::string::npos);
  ::setenv("UCUTLASS_CACHE_MAX", "0", 1);
  c.file("kernels/big.so", 100000, 5);
  EXPECT_EQ(cache_enforce_cap(c.root), "");  // no cap
  ::unsetenv("UCUTLASS_CACHE_MAX");
}

// A hit marks the cached library as just used, so cleaning evicts it last.
TEST(CacheGc, AHitTouchesItsEntry) {
  FakeCache c;
  FakeCompiler fake([](const CompileJob& job) {
    CompileOutcome o;
    o.ok = fs_write_atomic(job.output_path, "so").ok();
    return o;
  });
  BuildOptions opts;
  opts.cache_dir = c.root + "/kernels";
  BuildRequest req{"lib", "// source", c.root + "/out", {}};
  ASSERT_TRUE(build_libraries(fake, {req}, opts)[0].ok);
  const std::string key = build_cache_key(fake, req, opts);
  c.age("kernels/" + key + ".so", 48);
  c.file("kernels/other.so", 2, 24);
  ASSERT_TRUE(build_libraries(fake, {req}, opts)[0].cache_hit);
  CacheCleanOptions o;
  o.max_bytes = 3;
  o.min_age = std::chrono::seconds(0);
  cache_clean(c.root, o);
  EXPECT_TRUE(c.has("kernels/" + key + ".so"));
  EXPECT_FALSE(c.has("kernels/other.so"));
}

}  // namespace
}  // namespace ucut::build
