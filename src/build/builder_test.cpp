// The build pool and cache with the fake compiler: hits skip the compiler, keys change with the
// source and compiler version, failures become results, and the pool builds everything.
#include "build/builder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "support/fs.h"

namespace ucut::build {
namespace {

struct TmpDir {
  std::string path;
  TmpDir() {
    path = std::filesystem::temp_directory_path() / ("ucut_build_test_" + std::to_string(::getpid()) + "_" +
                                                     std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TmpDir() { std::filesystem::remove_all(path); }
  static inline int counter = 0;
};

FakeCompiler ok_compiler() {
  return FakeCompiler([](const CompileJob& job) {
    CompileOutcome o;
    o.ok = fs_write_atomic(job.output_path, "SO of " + job.source_path).ok();
    return o;
  });
}

TEST(Builder, CacheHitSkipsTheCompiler) {
  TmpDir dir;
  FakeCompiler fake = ok_compiler();
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  BuildRequest req{"lib", "// source", dir.path + "/out", {}};
  auto r1 = build_libraries(fake, {req}, opts);
  ASSERT_TRUE(r1[0].ok) << r1[0].message;
  EXPECT_FALSE(r1[0].cache_hit);
  EXPECT_TRUE(fs_exists(dir.path + "/out/lib.so"));
  EXPECT_TRUE(fs_exists(dir.path + "/out/lib.cu"));
  auto r2 = build_libraries(fake, {req}, opts);
  ASSERT_TRUE(r2[0].ok);
  EXPECT_TRUE(r2[0].cache_hit);
  EXPECT_EQ(fake.calls(), 1);
  opts.use_cache = false;
  auto r3 = build_libraries(fake, {req}, opts);
  EXPECT_FALSE(r3[0].cache_hit);
  EXPECT_EQ(fake.calls(), 2);
}

TEST(Builder, KeyDependsOnSourceNotPaths) {
  FakeCompiler fake = ok_compiler();
  BuildOptions opts;
  BuildRequest a{"a", "x", "/tmp/one", {}}, b{"b", "x", "/tmp/two", {}}, c{"a", "y", "/tmp/one", {}};
  EXPECT_EQ(build_cache_key(fake, a, opts), build_cache_key(fake, b, opts));
  EXPECT_NE(build_cache_key(fake, a, opts), build_cache_key(fake, c, opts));
  BuildOptions other = opts;
  other.cutlass_version = "4.3.0";
  EXPECT_NE(build_cache_key(fake, a, opts), build_cache_key(fake, a, other));
}

// A runtime header the source includes keys the cache by its contents: editing it rebuilds.
TEST(Builder, KeyDependsOnTheContentsOfKeyFiles) {
  FakeCompiler fake = ok_compiler();
  BuildOptions opts;
  std::string dir = std::filesystem::temp_directory_path() / ("ucut-keyfiles-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(fs_write_atomic(dir + "/rt.cuh", "float acc;").ok());
  BuildRequest a{"a", "x", "/tmp/one", {}, {dir + "/rt.cuh"}};
  std::string before = build_cache_key(fake, a, opts);
  EXPECT_EQ(before, build_cache_key(fake, a, opts));
  ASSERT_TRUE(fs_write_atomic(dir + "/rt.cuh", "double acc;").ok());
  EXPECT_NE(before, build_cache_key(fake, a, opts));
  BuildRequest none{"a", "x", "/tmp/one", {}};
  EXPECT_NE(build_cache_key(fake, none, opts), build_cache_key(fake, a, opts));
  std::filesystem::remove_all(dir);
}

TEST(Builder, FailureIsAResultWithTheMessage) {
  TmpDir dir;
  FakeCompiler fake([](const CompileJob& job) {
    CompileOutcome o;
    o.message = job.source_path + ": nvcc failed (exit 1):\nx.cu(3): error: identifier \"foo\" is undefined\n";
    return o;
  });
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  auto r = build_libraries(fake, {{"bad", "src", dir.path, {}}}, opts);
  ASSERT_FALSE(r[0].ok);
  EXPECT_NE(r[0].message.find("identifier \"foo\" is undefined"), std::string::npos);
  EXPECT_NE(r[0].message.find("bad.cu"), std::string::npos);
  EXPECT_FALSE(fs_exists(dir.path + "/bad.so"));
  // A failure is not cached: the next build runs the compiler again.
  build_libraries(fake, {{"bad", "src", dir.path, {}}}, opts);
  EXPECT_EQ(fake.calls(), 2);
}

TEST(Builder, PoolBuildsEveryRequestInOrder) {
  TmpDir dir;
  FakeCompiler fake = ok_compiler();
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  opts.jobs = 4;
  std::vector<BuildRequest> reqs;
  for (int i = 0; i < 10; ++i) reqs.push_back({"k" + std::to_string(i), "src" + std::to_string(i), dir.path, {}});
  auto rs = build_libraries(fake, reqs, opts);
  ASSERT_EQ(rs.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(rs[i].ok);
    EXPECT_EQ(rs[i].name, "k" + std::to_string(i));
  }
  EXPECT_EQ(fake.calls(), 10);
}

TEST(Builder, DefaultJobsIsPositive) { EXPECT_GE(build_default_jobs(), 1); }

TEST(Compiler, NvccCommandHasTheMeasuredFlags) {
  NvccOptions o;
  o.nvcc = "nvcc";
  o.lock_path = "/tmp/x.lock";
  auto c = build_nvcc_compiler(o);
  auto argv = c->command({"a.cu", "a.so", {"/inc"}});
  std::string joined;
  for (auto& a : argv) joined += a + " ";
  for (const char* f : {"flock /tmp/x.lock nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-DNDEBUG", "-shared",
                        "-fvisibility=hidden", "-cudart static", "-I/inc", "-o a.so a.cu"})
    EXPECT_NE(joined.find(f), std::string::npos) << f << " in " << joined;
}

TEST(Compiler, SummarizesErrorsAndPtxasSerialization) {
  std::string log = "x.cu(1): warning: meh\nx.cu(7): error: no instance of overloaded function\nok\n";
  EXPECT_EQ(build_summarize_log(log), "x.cu(7): error: no instance of overloaded function\n");
  EXPECT_TRUE(build_log_has_wgmma_serialization("ptxas warning : (C7510) Potential Performance Loss"));
  EXPECT_FALSE(build_log_has_wgmma_serialization(log));
}

}  // namespace
}  // namespace ucut::build
