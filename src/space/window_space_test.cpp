// The space of a window stage: threads x outputs a thread, the launch plan's refusal of items that
// do not divide the output's rows, the ranking and the candidate written back into the program.
#include <gtest/gtest.h>

#include <set>

#include "dsl/dsl.h"
#include "space/space.h"

namespace ucut::space {
namespace {

dsl::Program compile(const std::string& text) {
  auto r = dsl::dsl_compile(SourceFile{"window.ucut", text});
  EXPECT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"window.ucut", text}, r.diagnostics);
  return r.program ? *r.program : dsl::Program{};
}

TEST(WindowSpace, EnumeratesValidatesRanksAndApplies) {
  const dsl::Program p = compile(R"(ucut 1
in x : f32[16, 64, 128, 128]
param w : f32[64, 1, 3, 3] = "w"
param b : f32[64] = "b"
out y : f32[16, 64, 128, 128]
stage y = window sum(x, weight=w, bias=b, padding=[1, 1]) { epilogue { y = relu(acc) } }
)");
  ASSERT_EQ(p.stages.size(), 1u);
  SpaceOptions o;
  auto cands = space_enumerate(p, 0, o);
  ASSERT_TRUE(cands.ok()) << cands.error().render();
  ASSERT_EQ(cands->size(), 9u);  // threads 128, 256, 512 x items 1, 2, 4
  std::set<std::string> names;
  std::vector<StageConfig> valid;
  for (auto c : *cands) {
    c.name = space_candidate_name(p, c);
    EXPECT_EQ(c.name.rfind("window_th", 0), 0u) << c.name;
    names.insert(c.name);
    if (space_validate(p, c, o).empty()) valid.push_back(c);
  }
  EXPECT_EQ(names.size(), cands->size());
  ASSERT_EQ(valid.size(), cands->size());
  auto ranked = space_rank(p, valid, *sol::hw_lookup("h200"));
  ASSERT_FALSE(ranked.empty());
  EXPECT_GT(ranked.front().t_est, 0);
  EXPECT_GE(ranked.front().t_est, ranked.front().t_sol);
  const dsl::Program applied = space_apply(p, ranked.front().config);
  auto again = dsl::dsl_compile(SourceFile{"applied.ucut", dsl::dsl_print(applied)});
  EXPECT_TRUE(again.program.has_value());
}

// Overlapping windows (stride below the window) share a thread's loads: more outputs a thread
// rank first. Windows that do not overlap share nothing: one output a thread ranks first.
TEST(WindowSpace, ItemsRankFirstOnlyWhereWindowsOverlap) {
  auto first_items = [](const std::string& stage) {
    const dsl::Program p = compile("ucut 1\nin x : f32[16, 64, 512, 512]\nout y : f32[16, 64, " + stage);
    if (p.stages.empty()) return 0;
    auto cands = space_enumerate(p, 0, {});
    EXPECT_TRUE(cands.ok());
    if (!cands.ok()) return 0;
    auto ranked = space_rank(p, *cands, *sol::hw_lookup("h200"));
    return ranked.empty() ? 0 : ranked.front().config.simt.items_per_thread.value_or(1);
  };
  EXPECT_EQ(first_items("512, 512]\nstage y = window max(x, window=[3, 3], stride=[1, 1], padding=[1, 1])\n"), 4);
  EXPECT_EQ(first_items("64, 64]\nstage y = window avg(x, window=[8, 8])\n"), 1);
}

// Rows of 5 outputs take one or five a thread: the space offers 1 only, and the launch plan
// refuses 2 where it is written.
TEST(WindowSpace, ItemsDivideTheOutputRows) {
  const dsl::Program p = compile(R"(ucut 1
in x : f32[2, 8, 15, 15]
out y : f32[2, 8, 5, 5]
stage y = window max(x, window=[3, 3])
)");
  ASSERT_EQ(p.stages.size(), 1u);
  auto cands = space_enumerate(p, 0, {});
  ASSERT_TRUE(cands.ok());
  for (const auto& c : *cands) EXPECT_EQ(c.simt.items_per_thread.value_or(0), 1);
  StageConfig c = cands->front();
  c.simt.items_per_thread = 2;
  std::set<std::string> rules;
  for (const auto& v : space_validate(p, c, {})) rules.insert(v.rule);
  EXPECT_TRUE(rules.count("simt_plan"));
}

}  // namespace
}  // namespace ucut::space
