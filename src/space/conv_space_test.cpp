// The space of a conv stage: its configurations, the conv rules on them, the ranking and the
// candidate written back into the program (which must check again).
#include <gtest/gtest.h>

#include <set>

#include "dsl/dsl.h"
#include "space/space.h"

namespace ucut::space {
namespace {

dsl::Program compile(const std::string& text) {
  auto r = dsl::dsl_compile(SourceFile{"conv.ucut", text});
  EXPECT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"conv.ucut", text}, r.diagnostics);
  return r.program ? *r.program : dsl::Program{};
}

TEST(ConvSpace, EnumeratesValidatesRanksAndApplies) {
  const dsl::Program p = compile(R"(ucut 1
in x : f32[16, 64, 64, 64]
param w : f32[128, 3, 3, 64] = "w"
param b : f32[128] = "b"
out y : f32[16, 62, 62, 128]
stage y = conv(x, w) { epilogue { y = relu(acc + b[col]) } }
)");
  ASSERT_EQ(p.stages.size(), 1u);
  SpaceOptions o;
  auto cands = space_enumerate(p, 0, o);
  ASSERT_TRUE(cands.ok()) << cands.error().render();
  ASSERT_EQ(cands->size(), 24u);  // tile M 2 x N 2 x K 3, cluster 2
  std::set<std::string> names;
  std::vector<StageConfig> valid;
  for (auto c : *cands) {
    c.name = space_candidate_name(p, c);
    EXPECT_EQ(c.name.rfind("conv2d_tf32_t", 0), 0u) << c.name;
    names.insert(c.name);
    if (space_validate(p, c, o).empty()) valid.push_back(c);
  }
  EXPECT_EQ(names.size(), cands->size());
  ASSERT_EQ(valid.size(), cands->size());
  auto ranked = space_rank(p, valid, *sol::hw_lookup("h200"));
  ASSERT_FALSE(ranked.empty());
  EXPECT_GT(ranked.front().t_est, 0);
  EXPECT_GE(ranked.front().t_est, ranked.front().t_sol);
  EXPECT_LE(ranked.front().t_est, ranked.back().t_est);
  EXPECT_EQ(ranked.front().config.gemm.tile->m, 128);  // the 64-row tile runs at half rate
  // the best candidate, written back, checks as a program of its own
  const dsl::Program applied = space_apply(p, ranked.front().config);
  auto again = dsl::dsl_compile(SourceFile{"applied.ucut", dsl::dsl_print(applied)});
  EXPECT_TRUE(again.program.has_value());
}

TEST(ConvSpace, RefusesWhatTheConvRulesRefuse) {
  const dsl::Program p = compile(R"(ucut 1
in x : bf16[2, 16, 16, 32]
param w : bf16[64, 3, 3, 32] = "w"
out y : bf16[2, 14, 14, 64]
stage y = conv(x, w)
)");
  ASSERT_EQ(p.stages.size(), 1u);
  StageConfig c;
  c.stage = 0;
  c.gemm.precision = dsl::Precision::bf16;
  c.gemm.tile = dsl::TileShape{256, 64, 64};
  c.gemm.cluster = dsl::ClusterShape{1, 2};
  auto v = space_validate(p, c, {});
  std::set<std::string> rules;
  for (const auto& x : v) rules.insert(x.rule);
  EXPECT_TRUE(rules.count("conv_tile_m"));
  EXPECT_TRUE(rules.count("conv_cluster"));
}

}  // namespace
}  // namespace ucut::space
