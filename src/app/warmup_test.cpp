// The kernel zoo without nvcc: every form checks and ranks, the units are stored units with no
// duplicates, and build_store_units (with the fake compiler) builds what is missing, skips what is
// stored (an interrupted warmup resumes) and pins everything.
#include "app/warmup.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <set>

#include "build/cache_gc.h"
#include "support/fs.h"

namespace ucut::app {
namespace {

TEST(Warmup, TheZooIsDistinctStoredUnitsOfEveryForm) {
  auto hw = sol::hw_lookup("h200");
  ASSERT_TRUE(hw.ok());
  const auto forms = warmup_zoo_forms();
  EXPECT_EQ(forms.size(), 66u) << "bf16 and f16 in two layouts, tf32 and f32x3s in one, ten epilogues each; the "
                                   "sm80-API f32x3, tf32m and f32 in two layouts, one epilogue each";
  // An sm80-API unit holds no epilogue: one form per precision and layout stands for them all.
  for (const char* f : {"f32x3_nt_acc", "f32x3_nn_acc", "tf32m_nt_acc", "tf32m_nn_acc", "f32_nt_acc", "f32_nn_acc"})
    EXPECT_EQ(std::count_if(forms.begin(), forms.end(), [&](const ZooForm& z) { return z.name == f; }), 1) << f;
  EXPECT_EQ(std::count_if(forms.begin(), forms.end(), [](const ZooForm& z) { return z.name == "f32x3_nt_bias"; }), 0);
  ZooOptions one;
  one.top = 1;
  auto small = warmup_zoo_units(one, *hw);
  ASSERT_TRUE(small.ok()) << small.error().render();
  auto v1 = warmup_zoo_units({}, *hw);
  ASSERT_TRUE(v1.ok()) << v1.error().render();
  EXPECT_GT(v1->size(), small->size());
  std::set<std::string> names, forms_seen;
  for (const auto& u : *v1) {
    EXPECT_TRUE(u.unit.stored) << u.unit.name;
    EXPECT_EQ(u.unit.name.rfind("ucut_k", 0), 0u);
    EXPECT_TRUE(names.insert(u.unit.name).second) << "duplicate " << u.unit.name;
    forms_seen.insert(u.form);
  }
  // Every form contributes (f32x3s forms share their two cross-product GEMMs with each other).
  EXPECT_EQ(forms_seen.size(), forms.size());
  ZooOptions bad;
  bad.tier = "v9";
  EXPECT_FALSE(warmup_zoo_units(bad, *hw).ok());
}

// A zoo for two GPUs is the union of their rankings' units: each unit once, the first list's
// order first, and nothing of either list missing.
TEST(Warmup, AZooForTwoGpusHoldsBothRankings) {
  auto unit = [](const std::string& name, const std::string& form) {
    ZooUnit u;
    u.unit.name = name;
    u.unit.stored = true;
    u.form = form;
    return u;
  };
  auto merged = warmup_union({{unit("ucut_ka", "h100"), unit("ucut_kb", "h100")},
                              {unit("ucut_kb", "h200"), unit("ucut_kc", "h200")}});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].unit.name, "ucut_ka");
  EXPECT_EQ(merged[1].unit.name, "ucut_kb");
  EXPECT_EQ(merged[1].form, "h100") << "the first ranking that found a unit names it";
  EXPECT_EQ(merged[2].unit.name, "ucut_kc");

  ZooOptions one;
  one.top = 1;
  auto h100 = warmup_zoo_units(one, *sol::hw_lookup("h100"));
  auto h200 = warmup_zoo_units(one, *sol::hw_lookup("h200"));
  ASSERT_TRUE(h100.ok() && h200.ok());
  std::set<std::string> both;
  for (const auto& u : warmup_union({*h100, *h200})) both.insert(u.unit.name);
  for (const auto* list : {&*h100, &*h200})
    for (const auto& u : *list) EXPECT_TRUE(both.count(u.unit.name)) << u.unit.name;
  EXPECT_GE(both.size(), std::max(h100->size(), h200->size()));
}

TEST(Warmup, StoreBuildsWhatIsMissingSkipsWhatIsStoredAndPins) {
  const std::string dir = std::filesystem::temp_directory_path() / ("ucut-warmup-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  int compiles = 0;
  build::FakeCompiler fake([&](const build::CompileJob& job) {
    ++compiles;
    build::CompileOutcome o;
    o.ok = job.source_path.find("bad") == std::string::npos && fs_write_atomic(job.output_path, "o").ok();
    if (!o.ok) o.message = "nvcc failed";
    return o;
  });
  build::BuildOptions bo;
  bo.cache_dir = dir + "/kernels";
  bo.jobs = 2;
  std::vector<build::BuildUnit> units = {{"ucut_ka", "// a", true}, {"ucut_kb", "// b", true}, {"bad", "// c", true},
                                         {"plain", "// d", false}};
  std::vector<build::StoreUnitEvent> events;
  auto s1 = build::build_store_units(fake, units, {}, dir + "/src", bo, true,
                                     [&](const build::StoreUnitEvent& e) { events.push_back(e); });
  EXPECT_EQ(s1.built, 2);
  EXPECT_EQ(s1.failed, 2) << "a compile error and a unit that is not a stored one";
  EXPECT_EQ(events.size(), units.size());
  EXPECT_EQ(compiles, 3);
  for (int i : {0, 1}) {
    const std::string obj = build::build_store_object_path(fake, units[i], bo);
    EXPECT_TRUE(fs_exists(obj));
    EXPECT_TRUE(fs_exists(std::filesystem::path(obj).replace_extension(".pin").string())) << "pinned";
  }
  auto s2 = build::build_store_units(fake, {units[0], units[1]}, {}, dir + "/src", bo, true, nullptr);
  EXPECT_EQ(s2.present, 2) << "a second run compiles nothing it has";
  EXPECT_EQ(s2.built, 0);
  EXPECT_EQ(compiles, 3);
  EXPECT_EQ(build::cache_usage(dir).areas[2].pinned, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ucut::app
