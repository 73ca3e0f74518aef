// The kernel store with the fake compiler and real code generation: programs that differ only in
// what a stored kernel unit takes at run time (shapes, raster, swizzle, split-K count, tensor and
// program names, epilogue names, stage order) compile each distinct unit once; a unit's key does
// not depend on the request's other key files; a change of device code (tile, epilogue form,
// dtype) is a new unit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "build/builder.h"
#include "build/program_build.h"
#include "dsl/dsl.h"
#include "support/fs.h"

namespace ucut::build {
namespace {

struct TmpDir {
  std::string path;
  TmpDir() {
    path = std::filesystem::temp_directory_path() / ("ucut_store_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TmpDir() { std::filesystem::remove_all(path); }
};

// Counts object compiles by the unit's file name; every job succeeds.
struct CountingFake {
  std::map<std::string, int> objects;  // unit file stem -> compiles
  int links = 0;
  FakeCompiler compiler{[this](const CompileJob& job) {
    if (job.mode == CompileJob::Mode::object)
      ++objects[std::filesystem::path(job.source_path).stem().string()];
    else
      ++links;
    CompileOutcome o;
    o.ok = fs_write_atomic(job.output_path, "built").ok();
    return o;
  }};
  int stored_compiles() const {
    int n = 0;
    for (const auto& [stem, c] : objects) n += stem.rfind("ucut_k", 0) == 0 ? c : 0;
    return n;
  }
};

// A GEMM + bias + GELU with the given sizes and runtime knobs, names and a second GEMM stage.
std::string program(const std::string& name, int m, int n, int k, const std::string& raster, int swizzle,
                    const std::string& bias = "b", const std::string& tile = "128x128x32") {
  return "ucut 1\nname " + name + "\nin x : bf16[" + std::to_string(m) + ", " + std::to_string(k) +
         "]\nparam W : bf16[" + std::to_string(n) + ", " + std::to_string(k) + "] = \"w\"\nparam " + bias +
         " : f32[" + std::to_string(n) + "] = \"bias\"\nout y : bf16[" + std::to_string(m) + ", " +
         std::to_string(n) + "]\nstage y = gemm(x, W.T) {\n  precision bf16\n  tile " + tile +
         "\n  cluster 1x1\n  schedule cooperative\n  raster " + raster + "\n  swizzle " + std::to_string(swizzle) +
         "\n  epilogue { let t = acc + " + bias + "[col]; y = gelu(t) }\n}\n";
}

Result<ProgramRequest> request_of(const std::string& text, const std::string& out_dir) {
  auto checked = dsl::dsl_compile({"p.ucut", text});
  if (!checked.program) return make_error(ErrorCode::invalid_input, "the test program does not check:\n" + text);
  return program_build_request(*checked.program, "p.ucut", dsl::dsl_hash(*checked.program), out_dir, "/cutlass");
}

TEST(KernelStore, ShapesKnobsAndNamesShareOneStoredUnit) {
  TmpDir dir;
  CountingFake fake;
  BuildOptions opts;
  opts.cache_dir = dir.path + "/kernels";
  const std::vector<std::string> texts = {
      program("first", 4096, 4096, 4096, "along_m", 1),
      program("second", 1024, 8192, 2048, "along_m", 1),    // other shapes
      program("first", 4096, 4096, 4096, "along_n", 1),     // raster
      program("first", 4096, 4096, 4096, "along_m", 8),     // swizzle
      program("renamed", 512, 256, 64, "along_n", 2, "bias_vector"),  // names, shapes and knobs
  };
  std::set<std::string> units;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto req = request_of(texts[i], dir.path + "/out" + std::to_string(i));
    ASSERT_TRUE(req.ok()) << req.error().render();
    for (const auto& u : req->request.units)
      if (u.stored) units.insert(u.name);
    auto r = build_libraries(fake.compiler, {req->request}, opts);
    ASSERT_TRUE(r[0].ok) << r[0].message;
    EXPECT_EQ(r[0].units, 2) << "a one-GEMM program is its stored unit and the ABI unit";
  }
  EXPECT_EQ(units.size(), 1u) << "every program above has the same device code";
  const BuildStats stats = build_stats();  // the process's counters (this test's builds among them)
  EXPECT_GE(stats.stored_built, 1);
  EXPECT_GE(stats.stored_reused, static_cast<long long>(texts.size()) - 1);
  EXPECT_EQ(fake.stored_compiles(), 1);
  EXPECT_EQ(fake.objects["abi"], static_cast<int>(texts.size())) << "each library binds its own shapes";
  EXPECT_EQ(fake.links, static_cast<int>(texts.size()));
  // The object is in the store, under stage/.
  int in_store = 0;
  for (const auto& e : std::filesystem::directory_iterator(opts.cache_dir + "/stage")) in_store += e.path().extension() == ".o";
  EXPECT_EQ(in_store, 1);

  // Device code changes are new units: another tile, another epilogue form.
  auto tile = request_of(program("first", 4096, 4096, 4096, "along_m", 1, "b", "128x256x64"), dir.path + "/t");
  ASSERT_TRUE(tile.ok());
  auto r = build_libraries(fake.compiler, {tile->request}, opts);
  ASSERT_TRUE(r[0].ok) << r[0].message;
  EXPECT_EQ(fake.stored_compiles(), 2);
}

TEST(KernelStore, SplitKCountAndStageOrderShareUnitsAndTwoStagesOfOneUnitLinkItOnce) {
  TmpDir dir;
  CountingFake fake;
  BuildOptions opts;
  opts.cache_dir = dir.path + "/kernels";
  auto gemm = [](const std::string& out, const std::string& in, int splits, const std::string& epi) {
    return "stage " + out + " = gemm(" + in + ", W.T) {\n  precision bf16\n  tile 128x128x64\n  cluster 1x1\n"
           "  schedule cooperative\n  scheduler stream_k\n  split_k " + std::to_string(splits) +
           "\n  epilogue { " + out + " = " + epi + " }\n}\n";
  };
  const std::string decls = "ucut 1\nin x : bf16[256, 512]\nin z : bf16[1024, 512]\n"
                            "param W : bf16[512, 512] = \"w\"\nout y : bf16[256, 512]\nout u : bf16[1024, 512]\n";
  // Two stages of two forms (relu, identity); the second program swaps their order and split-K
  // counts; the third has both stages of one form: one unit, linked once.
  const std::string a = decls + gemm("y", "x", 2, "relu(acc)") + gemm("u", "z", 4, "acc");
  const std::string b = decls + gemm("u", "z", 3, "acc") + gemm("y", "x", 1, "relu(acc)");
  const std::string c = decls + gemm("y", "x", 2, "relu(acc)") + gemm("u", "z", 4, "relu(acc)");
  std::vector<std::vector<std::string>> stored_of;
  for (const auto* text : {&a, &b, &c}) {
    auto req = request_of(*text, dir.path + "/out" + std::to_string(stored_of.size()));
    ASSERT_TRUE(req.ok()) << req.error().render();
    stored_of.emplace_back();
    for (const auto& u : req->request.units)
      if (u.stored) stored_of.back().push_back(u.name);
    auto r = build_libraries(fake.compiler, {req->request}, opts);
    ASSERT_TRUE(r[0].ok) << r[0].message;
  }
  ASSERT_EQ(stored_of[0].size(), 2u);
  EXPECT_EQ(std::set<std::string>(stored_of[0].begin(), stored_of[0].end()),
            std::set<std::string>(stored_of[1].begin(), stored_of[1].end()));
  ASSERT_EQ(stored_of[2].size(), 1u) << "two stages of one form are one unit in the library";
  EXPECT_EQ(fake.stored_compiles(), 2) << "relu and identity: two distinct units over three programs";
}

TEST(KernelStore, AStoredUnitsKeyIgnoresKeyFilesTheCompilersFolderAndLock) {
  TmpDir dir;
  FakeCompiler fake([](const CompileJob&) { return CompileOutcome{}; });
  BuildOptions opts;
  BuildRequest req{"lib", "// whole", dir.path, {}};
  BuildUnit stored{"ucut_k0", "// unit", true}, plain{"simt", "// unit", false};
  const std::string k1 = build_unit_cache_key(fake, req, stored, opts);
  const std::string p1 = build_unit_cache_key(fake, req, plain, opts);
  ASSERT_TRUE(fs_write_atomic(dir.path + "/runtime.cuh", "// v1").ok());
  req.key_files = {dir.path + "/runtime.cuh"};
  EXPECT_EQ(build_unit_cache_key(fake, req, stored, opts), k1);
  EXPECT_NE(build_unit_cache_key(fake, req, plain, opts), p1);
  EXPECT_NE(k1, p1) << "stored units and cached objects are keyed apart";

  // nvcc from another folder, or under a compile lock, builds the same object: a store built on
  // one machine serves another with the same toolchain. (UCUTLASS_NVCC would override the path.)
  if (std::getenv("UCUTLASS_NVCC") == nullptr) {
    auto here = build_nvcc_compiler({"/nonexistent/one/nvcc", "", std::chrono::seconds(5)});
    auto there = build_nvcc_compiler({"/nonexistent/two/nvcc", "/tmp/ucut-nvcc.lock", std::chrono::seconds(5)});
    EXPECT_EQ(build_unit_cache_key(*here, req, stored, opts), build_unit_cache_key(*there, req, stored, opts));
  }
}

}  // namespace
}  // namespace ucut::build
