// The build pool and cache with the fake compiler: hits skip the compiler, keys change with the
// source and compiler version, failures become results, and the pool builds everything.
#include "build/builder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

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

// A fake that builds objects and links them: an object holds its source, a library its objects.
struct UnitFake {
  std::mutex mu;
  std::vector<std::string> compiled;  // unit sources compiled (object jobs)
  int links = 0, running = 0, most_running = 0;
  std::chrono::milliseconds delay{0};
  std::string fail_on;                // an object job whose source holds this fails
  FakeCompiler compiler{[this](const CompileJob& job) {
    CompileOutcome o;
    std::string text = "lib:";
    if (job.mode == CompileJob::Mode::object) {
      auto src = fs_read(job.source_path);
      {
        std::lock_guard<std::mutex> lock(mu);
        compiled.push_back(src ? *src : "?");
        most_running = std::max(most_running, ++running);
      }
      std::this_thread::sleep_for(delay);
      {
        std::lock_guard<std::mutex> lock(mu);
        --running;
      }
      if (!fail_on.empty() && src && src->find(fail_on) != std::string::npos) {
        o.message = job.source_path + ": nvcc failed (exit 1):\nunit.cu(1): error: expected a \";\"\n";
        return o;
      }
      text = "obj:" + (src ? *src : "?");
    } else if (job.mode == CompileJob::Mode::link) {
      std::lock_guard<std::mutex> lock(mu);
      ++links;
      for (const auto& obj : job.objects) text += "[" + *fs_read(obj) + "]";
    } else {
      text = "whole:" + *fs_read(job.source_path);
    }
    o.ok = fs_write_atomic(job.output_path, text).ok();
    return o;
  }};
};

BuildRequest in_units(const std::string& name, const std::string& dir, std::vector<std::string> stages) {
  BuildRequest r{name, "whole", dir, {}};
  for (size_t i = 0; i < stages.size(); ++i) {
    r.units.push_back({"s" + std::to_string(i), stages[i]});
    r.source += "|" + stages[i];
  }
  r.units.push_back({"abi", "abi of " + name + r.source});
  return r;
}

// Units compile apart and link in their order; a second library that changes one stage compiles
// that stage and its own ABI unit, and takes the rest from the object cache.
TEST(Builder, UnitsCompileApartAndUnchangedUnitsComeFromTheCache) {
  TmpDir dir;
  UnitFake fake;
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  auto r1 = build_libraries(fake.compiler, {in_units("a", dir.path + "/a", {"gemm 128x128", "softmax"})}, opts);
  ASSERT_TRUE(r1[0].ok) << r1[0].message;
  EXPECT_FALSE(r1[0].cache_hit);
  EXPECT_EQ(r1[0].units, 3);
  EXPECT_EQ(r1[0].units_cached, 0);
  EXPECT_EQ(*fs_read(r1[0].so_path), "lib:[obj:gemm 128x128][obj:softmax][obj:abi of awhole|gemm 128x128|softmax]");
  EXPECT_EQ(*fs_read(dir.path + "/a/a.units/s1.cu"), "softmax");
  EXPECT_EQ(*fs_read(dir.path + "/a/a.cu"), "whole|gemm 128x128|softmax");
  EXPECT_EQ(fake.compiled.size(), 3u);
  EXPECT_EQ(fake.links, 1);
  auto r2 = build_libraries(fake.compiler, {in_units("b", dir.path + "/b", {"gemm 128x256", "softmax"})}, opts);
  ASSERT_TRUE(r2[0].ok) << r2[0].message;
  EXPECT_EQ(r2[0].units_cached, 1);
  EXPECT_EQ(fake.compiled.size(), 5u);  // the new gemm and b's ABI unit
  EXPECT_EQ(fake.links, 2);
  // the whole library again: a hit, nothing compiled or linked
  auto r3 = build_libraries(fake.compiler, {in_units("b", dir.path + "/b", {"gemm 128x256", "softmax"})}, opts);
  EXPECT_TRUE(r3[0].cache_hit);
  EXPECT_EQ(fake.compiled.size(), 5u);
  EXPECT_EQ(fake.links, 2);
}

// A unit that fails names its file and the error; nothing is linked, and the units that
// compiled are kept: fixing the broken one compiles only it (and links).
TEST(Builder, AFailingUnitIsNamedAndTheOthersAreKept) {
  TmpDir dir;
  UnitFake fake;
  fake.fail_on = "broken";
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  auto bad = build_libraries(fake.compiler, {in_units("p", dir.path, {"gemm", "broken rowwise"})}, opts);
  ASSERT_FALSE(bad[0].ok);
  EXPECT_NE(bad[0].message.find("p.units/s1.cu: nvcc failed"), std::string::npos) << bad[0].message;
  EXPECT_NE(bad[0].message.find("expected a \";\""), std::string::npos);
  EXPECT_EQ(bad[0].message.find("s0.cu"), std::string::npos) << bad[0].message;
  EXPECT_EQ(fake.links, 0);
  EXPECT_FALSE(fs_exists(dir.path + "/p.so"));
  fake.fail_on.clear();
  const size_t before = fake.compiled.size();
  auto good = build_libraries(fake.compiler, {in_units("p", dir.path, {"gemm", "fixed rowwise"})}, opts);
  ASSERT_TRUE(good[0].ok) << good[0].message;
  EXPECT_EQ(good[0].units_cached, 1);  // the gemm
  EXPECT_EQ(fake.compiled.size(), before + 2);
}

// One library's units compile at once on the jobs its build leaves idle, never more than the
// jobs; with one job they compile one after another.
TEST(Builder, UnitsOfOneLibraryShareTheJobs) {
  for (int jobs : {1, 3}) {
    TmpDir dir;
    UnitFake fake;
    fake.delay = std::chrono::milliseconds(150);
    BuildOptions opts;
    opts.cache_dir = dir.path + "/cache";
    opts.jobs = jobs;
    auto r = build_libraries(fake.compiler, {in_units("w", dir.path, {"g1", "g2", "g3", "g4", "g5"})}, opts);
    ASSERT_TRUE(r[0].ok) << r[0].message;
    EXPECT_EQ(fake.compiled.size(), 6u);
    EXPECT_LE(fake.most_running, jobs);
    if (jobs == 1) EXPECT_EQ(fake.most_running, 1);
    else EXPECT_GE(fake.most_running, 2);
  }
}

// Two libraries built at once that share a unit compile it once: the second waits for the first.
TEST(Builder, AUnitTwoLibrariesShareCompilesOnce) {
  TmpDir dir;
  UnitFake fake;
  fake.delay = std::chrono::milliseconds(100);
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  opts.jobs = 2;
  auto rs = build_libraries(fake.compiler,
                            {in_units("x", dir.path + "/x", {"split A"}), in_units("y", dir.path + "/y", {"split A"})},
                            opts);
  ASSERT_TRUE(rs[0].ok && rs[1].ok);
  EXPECT_EQ(std::count(fake.compiled.begin(), fake.compiled.end(), "split A"), 1);
  EXPECT_EQ(rs[0].units_cached + rs[1].units_cached, 1);
}

// UCUTLASS_SPLIT_UNITS=0: the whole source in one compile, as before units.
TEST(Builder, SplitUnitsCanBeTurnedOff) {
  TmpDir dir;
  UnitFake fake;
  BuildOptions opts;
  opts.cache_dir = dir.path + "/cache";
  ::setenv("UCUTLASS_SPLIT_UNITS", "0", 1);
  auto r = build_libraries(fake.compiler, {in_units("o", dir.path, {"g", "s"})}, opts);
  ::unsetenv("UCUTLASS_SPLIT_UNITS");
  ASSERT_TRUE(r[0].ok) << r[0].message;
  EXPECT_EQ(r[0].units, 0);
  EXPECT_TRUE(fake.compiled.empty());
  EXPECT_EQ(*fs_read(r[0].so_path), "whole:whole|g|s");
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

// build_abort_compiles() kills an nvcc in flight and refuses later ones, with a message that
// says why; nothing is published. (A script that sleeps stands in for nvcc.)
TEST(Compiler, AbortKillsTheRunningCompileAndRefusesTheNext) {
  TmpDir d;
  const std::string fake = d.path + "/slow-nvcc";
  ASSERT_TRUE(fs_write_atomic(fake, "#!/bin/sh\nsleep 30\n").ok());
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  NvccOptions o;
  o.nvcc = fake;
  auto c = build_nvcc_compiler(o);
  std::thread t([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    build_abort_compiles();
  });
  auto first = c->compile({d.path + "/a.cu", d.path + "/a.so", {}});
  t.join();
  auto second = c->compile({d.path + "/b.cu", d.path + "/b.so", {}});
  const bool aborted = build_compiles_aborted();
  build_resume_compiles();
  EXPECT_TRUE(aborted);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->ok);
  EXPECT_NE(first->message.find("a.cu: stopped before it finished"), std::string::npos) << first->message;
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->ok);
  EXPECT_NE(second->message.find("stopped before it finished"), std::string::npos) << second->message;
  EXPECT_FALSE(build_compiles_aborted());
}

// A unit compiles to an object (-c, no -shared or cudart); the link takes the objects, the
// architecture, -shared, static cudart and no include folders.
TEST(Compiler, ObjectAndLinkCommands) {
  auto c = build_nvcc_compiler({});
  auto join = [](const std::vector<std::string>& v) {
    std::string j;
    for (auto& a : v) j += a + " ";
    return j;
  };
  std::string obj = join(c->command({"u.cu", "u.o", {"/inc"}, CompileJob::Mode::object, {}}));
  for (const char* f : {"-gencode=arch=compute_90a,code=sm_90a", "-fvisibility=hidden", "-I/inc", "-c -o u.o u.cu"})
    EXPECT_NE(obj.find(f), std::string::npos) << f << " in " << obj;
  for (const char* f : {"-shared", "-cudart", "-lcuda", "-x c++"}) EXPECT_EQ(obj.find(f), std::string::npos) << f << " in " << obj;
  // a host-only unit (the ABI's) goes to the host compiler as C++
  std::string host = join(c->command({"abi.cu", "abi.o", {"/inc"}, CompileJob::Mode::object, {}, true}));
  EXPECT_NE(host.find("-x c++ -c -o abi.o abi.cu"), std::string::npos) << host;
  std::string link = join(c->command({"", "l.so", {"/inc"}, CompileJob::Mode::link, {"a.o", "b.o"}}));
  for (const char* f : {"-gencode=arch=compute_90a,code=sm_90a", "-shared", "-cudart static", "-o l.so a.o b.o"})
    EXPECT_NE(link.find(f), std::string::npos) << f << " in " << link;
  for (const char* f : {"-I/inc", " -c "}) EXPECT_EQ(link.find(f), std::string::npos) << f << " in " << link;
}

TEST(Compiler, SummarizesErrorsAndPtxasSerialization) {
  std::string log = "x.cu(1): warning: meh\nx.cu(7): error: no instance of overloaded function\nok\n";
  EXPECT_EQ(build_summarize_log(log), "x.cu(7): error: no instance of overloaded function\n");
  EXPECT_TRUE(build_log_has_wgmma_serialization("ptxas warning : (C7510) Potential Performance Loss"));
  EXPECT_FALSE(build_log_has_wgmma_serialization(log));
}

}  // namespace
}  // namespace ucut::build
