// Stage descents (builtin_strategy.h): after a mismatch lifts every GEMM stage of a program to
// the next rung, each stage is tried alone back on the rung that failed, on a two-stage space
// whose second stage alone needs the higher rung.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "search/builtin_strategy.h"

namespace ucut::search {
namespace {

// Two GEMM stages, each at rung 0 or 1 in one of three tiles; a candidate is named
// "a<rung><tile>b<rung><tile>". Rung 1 costs three times rung 0; larger tiles a little more.
class TwoStageSpace final : public SearchSpace {
 public:
  struct Pick {
    int r0, t0, r1, t1;
  };
  static Pick pick_of(const Candidate& c) {
    const std::string& n = c.name;
    return {n[1] - '0', n[2] - '0', n[4] - '0', n[5] - '0'};
  }
  // On rung 1 the larger tiles are the faster ones when `large_tiles_above` (a ranking that
  // changes with the rung), else the smaller.
  static inline bool large_tiles_above = false;
  static double cost(int r, int t) {
    if (r && large_tiles_above) return 3.0 * (1.0 - 0.1 * t) * 1e-3;
    return (r ? 3.0 : 1.0) * (1.0 + 0.1 * t) * 1e-3;
  }
  static Candidate make(Pick p) {
    Candidate c;
    c.name = "a" + std::to_string(p.r0) + std::to_string(p.t0) + "b" + std::to_string(p.r1) + std::to_string(p.t1);
    c.hash = c.name;
    c.program = c.name;
    c.rung = std::min(p.r0, p.r1);
    c.predicted_s = cost(p.r0, p.t0) + cost(p.r1, p.t1);
    c.config = {{"tile", p.t0}, {"s1.tile", p.t1}};
    c.origin = "rank";
    return c;
  }
  std::vector<Candidate> ranked(int k, int min_rung = 0) override {
    std::vector<Candidate> all;
    for (int t0 = 0; t0 < 3; ++t0)
      for (int t1 = 0; t1 < 3; ++t1) {
        const int r = std::clamp(min_rung, 0, 1);
        all.push_back(make({r, t0, r, t1}));
      }
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.predicted_s < b.predicted_s; });
    if (static_cast<int>(all.size()) > k) all.resize(static_cast<size_t>(k));
    return all;
  }
  std::vector<Candidate> neighbors(const Candidate& c) override {
    Pick p = pick_of(c);
    std::vector<Candidate> out;
    for (int d : {-1, 1}) {
      if (p.t0 + d >= 0 && p.t0 + d < 3) out.push_back(make({p.r0, p.t0 + d, p.r1, p.t1}));
      if (p.t1 + d >= 0 && p.t1 + d < 3) out.push_back(make({p.r0, p.t0, p.r1, p.t1 + d}));
    }
    for (auto& n : out) n.origin = "neighbor";
    return out;
  }
  std::optional<Candidate> at_rung(const Candidate& c, int rung) override {
    if (rung > 1) return std::nullopt;
    Pick p = pick_of(c);
    return make({std::max(p.r0, rung), p.t0, std::max(p.r1, rung), p.t1});
  }
  std::vector<Candidate> descents(const Candidate& c, int rung) override {
    if (!with_descents) return {};
    Pick p = pick_of(c);
    if (p.r0 <= rung || p.r1 <= rung) return {};  // both stages must be above the rung
    return {make({rung, p.t0, p.r1, p.t1}), make({p.r0, p.t0, rung, p.t1})};
  }
  std::string rung_signature(const Candidate& c) override {
    Pick p = pick_of(c);
    return std::to_string(p.r0) + "," + std::to_string(p.r1);
  }
  std::optional<Candidate> from_config(const nlohmann::json&) override { return std::nullopt; }
  // The profiles the strategy steps from (SearchSpace::neighbors_measured), by anchor.
  std::vector<Candidate> neighbors_measured(const Candidate& c, const StageTimes& measured) override {
    measured_seen.emplace_back(c.name, measured);
    return neighbors(c);
  }
  bool with_descents = true;
  std::vector<std::pair<std::string, StageTimes>> measured_seen;
};

// Runs the strategy for `n` attempts: the second stage mismatches on rung 0, the first passes.
std::vector<Attempt> run(TwoStageSpace& space, int n, std::vector<Candidate> seeds = {}) {
  BuiltinOptions o;
  o.seeds = std::move(seeds);
  o.top_k = 2;
  o.explore_every = 0;
  BuiltinStrategy strategy(space, o);
  SearchState state;
  state.baselines.eager_s = 1.0;  // every kernel far faster: no speed probe
  for (int i = 0; i < n; ++i) {
    auto c = strategy.propose(state);
    if (!c) break;
    state.proposed.insert(c->hash);
    Attempt a;
    a.index = i;
    a.cand = *c;
    const TwoStageSpace::Pick p = TwoStageSpace::pick_of(*c);
    if (p.r1 == 0) {
      a.status = RunStatus::mismatch;
      a.rounding_mismatch = true;
    } else {
      a.status = RunStatus::ok;
      a.time_s = c->predicted_s;
      a.stage_ms = {{"s0", "gemm", c->name, 1.0}, {"s1", "gemm", c->name, 2.0}};  // named after it: seen below
      a.improved = !state.best || a.time_s < state.attempts[static_cast<size_t>(*state.best)].time_s;
      if (a.improved) state.best = i;
    }
    state.attempts.push_back(a);
    strategy.observe(state.attempts.back(), state);
  }
  return state.attempts;
}

TEST(Descent, AStageThatPassesOnTheFailedRungGoesBackDown) {
  TwoStageSpace space;
  const auto at = run(space, 12);
  ASSERT_GE(at.size(), 4u);
  EXPECT_EQ(at[0].cand.name, "a00b00");
  EXPECT_EQ(at[0].status, RunStatus::mismatch);
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_EQ(at[1].cand.name, "a10b10");
  // the two descents of the retry, most time saved first (equal here: the first stage first)
  EXPECT_EQ(at[2].cand.origin, "descent");
  EXPECT_EQ(at[2].cand.name, "a00b10");
  EXPECT_EQ(at[2].status, RunStatus::ok);
  EXPECT_EQ(at[3].cand.origin, "descent");
  EXPECT_EQ(at[3].cand.name, "a10b00");
  EXPECT_EQ(at[3].status, RunStatus::mismatch);
  const Attempt* best = nullptr;
  int admitted = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    const TwoStageSpace::Pick p = TwoStageSpace::pick_of(at[i].cand);
    if (i > 3) {
      EXPECT_NE(p.r1, 0) << at[i].cand.name << ": the failed descent's mix came back";
    }
    if (i > 3 && p.r0 == 0 && at[i].cand.origin == "neighbor") ++admitted;
    if (at[i].status == RunStatus::ok && (!best || at[i].time_s < best->time_s)) best = &at[i];
  }
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(TwoStageSpace::pick_of(best->cand).r0, 0) << best->cand.name;
  EXPECT_GT(admitted, 0) << "the passed mix's neighbours stay below the floor";
}

// Refinement steps from its anchors with their per-stage profiles (the evaluator's stage_ms).
TEST(Descent, RefinementStepsFromEachAnchorsProfile) {
  TwoStageSpace space;
  run(space, 12);
  ASSERT_FALSE(space.measured_seen.empty());
  for (const auto& [anchor, measured] : space.measured_seen) {
    ASSERT_EQ(measured.size(), 2u) << anchor;
    EXPECT_EQ(measured[0].config, anchor);  // the anchor's own profile, not another attempt's
  }
}

TEST(Descent, WithoutDescentsEveryStageStaysOnTheRaisedFloor) {
  TwoStageSpace space;
  space.with_descents = false;
  for (const auto& a : run(space, 12)) {
    if (a.index == 0) continue;
    EXPECT_EQ(a.cand.rung, 1) << a.cand.name;
    EXPECT_NE(a.cand.origin, "descent");
  }
}

// After the floor rises, the opening still to come is the new rung's own ranking (its best
// tiles there), not the old opening's tiles lifted onto it.
TEST(Descent, ARaisedFloorOpensWithItsOwnRanking) {
  TwoStageSpace::large_tiles_above = true;
  TwoStageSpace space;
  space.with_descents = false;
  const auto at = run(space, 6);
  TwoStageSpace::large_tiles_above = false;
  ASSERT_GE(at.size(), 3u);
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_EQ(at[1].cand.name, "a10b10");  // the retry keeps the failed candidate's tiles
  EXPECT_EQ(at[2].cand.origin, "rank");
  EXPECT_EQ(at[2].cand.name, "a12b12");  // the new rung's best
}

// A remembered mix (a prior with the second stage on rung 1) passes on rung 0; the ranking's
// all-TF32 candidate then mismatches on the same rung. The rung is not "accurate enough" for it:
// the floor rises, and the prior's mix stays admissible below it.
TEST(Descent, APassingMixDoesNotVouchForItsRungAsAWhole) {
  TwoStageSpace space;
  Candidate prior = TwoStageSpace::make({0, 1, 1, 1});
  prior.origin = "prior";
  const auto at = run(space, 12, {prior});
  ASSERT_GE(at.size(), 4u);
  EXPECT_EQ(at[0].cand.name, "a01b11");
  EXPECT_EQ(at[0].status, RunStatus::ok);
  EXPECT_EQ(at[1].status, RunStatus::mismatch);
  int admitted = 0;
  for (size_t i = 2; i < at.size(); ++i) {
    const TwoStageSpace::Pick p = TwoStageSpace::pick_of(at[i].cand);
    EXPECT_NE(p.r1, 0) << at[i].cand.name << ": TF32 everywhere came back after it failed";
    admitted += p.r0 == 0 && at[i].cand.origin == "neighbor";
  }
  EXPECT_GT(admitted, 0);
}

}  // namespace
}  // namespace ucut::search
