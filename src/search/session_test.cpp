// The search loop end to end on the synthetic surface (fake_surface.h): determinism, stop
// rules, budgets, failures as records, the precision ladder, resume after a kill.
#include "search/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "search/builtin_strategy.h"
#include "search/fake_surface.h"

namespace ucut::search {
namespace {

struct Rig {
  explicit Rig(SurfaceSpec spec, BuiltinOptions bo = {}, SessionOptions so = {},
               Journal* journal = nullptr)
      : space(spec), compiler(spec), evaluator(space, &clock), strategy(space, bo) {
    so.t_sol = spec.t_sol;
    if (space.has_reference_order())  // as the driver sets it
      so.in_reference_order = [this](const Candidate& c) { return space.in_reference_order(c); };
    session = std::make_unique<SearchSession>(spec.problem, strategy, compiler, evaluator, clock,
                                              journal, so);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& a : session->state().attempts) out.push_back(a.cand.name);
    return out;
  }
  FakeClock clock;
  FakeSpace space;
  FakeCompiler compiler;
  FakeEvaluator evaluator;
  BuiltinStrategy strategy;
  std::unique_ptr<SearchSession> session;
};

SessionOptions no_stop_rules(int attempts) {
  SessionOptions so;
  so.budget.attempts = attempts;
  so.rules.eps = -1;
  so.rules.stagnation = 0;
  return so;
}

TEST(Session, SameSeedSameRunDifferentSeedDifferentRun) {
  BuiltinOptions b1;
  b1.seed = 7;
  Rig a(SurfaceSpec{}, b1, no_stop_rules(30)), b(SurfaceSpec{}, b1, no_stop_rules(30));
  a.session->run();
  b.session->run();
  EXPECT_EQ(a.names(), b.names());
  BuiltinOptions b2;
  b2.seed = 8;
  Rig c(SurfaceSpec{}, b2, no_stop_rules(30));
  c.session->run();
  EXPECT_NE(a.names(), c.names());  // the explore picks differ
}

TEST(Session, AttemptBudgetIsExactAndRefinementBeatsTheRanking) {
  Rig r(SurfaceSpec{}, {}, no_stop_rules(40));
  EXPECT_EQ(r.session->run(), StopReason::attempt_budget);
  EXPECT_EQ(r.session->state().attempts.size(), 40u);
  EXPECT_EQ(r.evaluator.calls, 40);
  EXPECT_EQ(r.compiler.calls.load(), 40);  // nothing compiled past the budget
  const Attempt* best = r.session->state().best_attempt();
  ASSERT_NE(best, nullptr);
  // The ranking's top candidate is off the true optimum; refinement must find the optimum.
  EXPECT_NE(r.session->state().attempts[0].cand.name, best->cand.name);
  EXPECT_EQ(best->cand.name, "tf32_128x256x64_c2x1_s4");
  EXPECT_NEAR(best->speedup, 3.0, 1e-9);
}

TEST(Session, StopRulesFireOnlyAfterBeatingTheBaseline) {
  // SOL proximity: the optimum is 1.0 ms, SOL 0.8 ms; eps = 0.3 allows 1.04 ms.
  SessionOptions so;
  so.budget.attempts = 100;
  so.rules.eps = 0.3;
  so.rules.stagnation = 0;
  Rig r(SurfaceSpec{}, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::sol_proximity);
  EXPECT_LT(r.session->state().attempts.size(), 100u);
  EXPECT_LE(r.session->state().best_attempt()->time_s, 1.3 * 0.8e-3);

  // Same run, but eager is faster than anything we make: neither rule may fire.
  SurfaceSpec fast_eager;
  fast_eager.t_eager = 0.5e-3;
  SessionOptions so2 = so;
  so2.rules.stagnation = 3;
  so2.budget.attempts = 25;
  Rig r2(fast_eager, {}, so2);
  EXPECT_EQ(r2.session->run(), StopReason::attempt_budget);
  EXPECT_EQ(r2.session->state().attempts.size(), 25u);
}

TEST(Session, StagnationStopsAfterWAttemptsWithoutImprovement) {
  SessionOptions so;
  so.budget.attempts = 200;
  so.rules.eps = -1;
  so.rules.stagnation = 6;
  Rig r(SurfaceSpec{}, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::stagnation);
  const auto& st = r.session->state();
  ASSERT_TRUE(st.best);
  EXPECT_EQ(static_cast<int>(st.attempts.size()) - 1 - *st.best, 6);
}

TEST(Session, WallTimeBudgetUsesTheClock) {
  SessionOptions so = no_stop_rules(0);
  so.budget.wall_s = 21;  // 2 s per evaluation on the fake clock
  Rig r(SurfaceSpec{}, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::time_budget);
  EXPECT_EQ(r.session->state().attempts.size(), 11u);
  // Each result carries its time since the start (the time to best of issue 6).
  const auto& at = r.session->state().attempts;
  EXPECT_DOUBLE_EQ(at.front().at_s, 2);
  EXPECT_DOUBLE_EQ(at.back().at_s, 22);
}

TEST(Session, FailuresBecomeRecordsAndTheLoopContinues) {
  SurfaceSpec spec;
  Rig probe(spec, {}, no_stop_rules(3));
  probe.session->run();
  auto first = probe.names();
  spec.fail[first[0]] = RunStatus::compile_error;
  spec.fail[first[1]] = RunStatus::launch_error;
  spec.fail[first[2]] = RunStatus::timeout;
  Rig r(spec, {}, no_stop_rules(10));
  EXPECT_EQ(r.session->run(), StopReason::attempt_budget);
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 10u);
  EXPECT_EQ(at[0].status, RunStatus::compile_error);
  EXPECT_NE(at[0].message.find("static assertion"), std::string::npos);
  EXPECT_EQ(at[1].status, RunStatus::launch_error);
  EXPECT_EQ(at[2].status, RunStatus::timeout);
  EXPECT_EQ(at[3].status, RunStatus::ok);
  EXPECT_EQ(r.evaluator.calls, 9);  // the compile error never reached the GPU
  EXPECT_TRUE(r.session->state().best);
}

TEST(Session, Tf32MismatchFallsBackUpThePrecisionLadder) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  spec.t_eager = 10e-3;  // the new floor beats eager: no speed probe of the rung above
  Rig r(spec, {}, no_stop_rules(12));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 3u);
  EXPECT_EQ(at[0].status, RunStatus::mismatch);
  EXPECT_EQ(at[0].cand.rung, 0);
  // With lookahead 2 the second candidate was already proposed at TF32: it is dropped, and the
  // second attempt is the first candidate again, one rung up.
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_EQ(at[1].cand.rung, 1);
  EXPECT_EQ(at[1].cand.config["tile"], at[0].cand.config["tile"]);
  EXPECT_EQ(at[1].status, RunStatus::ok);
  for (size_t i = 2; i < at.size(); ++i) EXPECT_EQ(at[i].cand.rung, 1) << i;
  EXPECT_EQ(r.session->cost().dropped, 1);
  EXPECT_EQ(r.strategy.floor_rung(), 1);
}

// Never slower than PyTorch: the floor's kernels all pass but run slower than eager (rung 1 at
// 5x the surface's optimum, eager 3x); after three of them the best-ranked shapes of the rung above
// (FP32 SIMT on a GPU, here 2x) are tried, and the search ends faster than eager. Without the probe
// every attempt stays on the floor's rung (its pool holds that rung only).
TEST(Session, AFloorSlowerThanEagerProbesTheRungsAbove) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;  // the floor rises to rung 1
  spec.rung_cost = {1.0, 5.0, 2.0};
  spec.t_eager = 3e-3;
  Rig r(spec, {}, no_stop_rules(12));
  r.session->run();
  const auto& at = r.session->state().attempts;
  int probed = 0;
  size_t first_probe = at.size();
  for (size_t i = 0; i < at.size(); ++i)
    if (at[i].cand.origin == "speed-probe") {
      ++probed;
      first_probe = std::min(first_probe, i);
      EXPECT_EQ(at[i].cand.rung, 2);
    }
  EXPECT_EQ(probed, 2);
  int passed_before = 0;
  for (size_t i = 0; i < first_probe; ++i) passed_before += at[i].status == RunStatus::ok;
  EXPECT_GE(passed_before, 3);
  const Attempt* best = r.session->state().best_attempt();
  ASSERT_NE(best, nullptr);
  EXPECT_LT(best->time_s, spec.t_eager);
  EXPECT_EQ(best->cand.rung, 2);
  // A floor faster than eager is never probed.
  SurfaceSpec fast = spec;
  fast.rung_cost = {1.0, 2.0, 5.0};
  Rig f(fast, {}, no_stop_rules(12));
  f.session->run();
  for (const auto& a : f.session->state().attempts) EXPECT_NE(a.cand.origin, "speed-probe");
}

// The opening's rung: when the ranking predicts a rung above the floor clearly faster (rung 1 at
// a third of rung 0's estimate, as f32x3 against f32x3s at K = 32), its best shapes open the
// search, before the floor's top-k; a rung predicted slower (the default 1, 2.6, 6) never does.
// A near tie is measured second.
TEST(Session, ARungPredictedFasterOpensTheSearch) {
  SurfaceSpec spec;
  spec.predicted_rung_cost = {3.0, 1.0, 6.0};
  spec.rung_cost = {3.0, 1.0, 6.0};
  Rig r(spec, {}, no_stop_rules(6));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 3u);
  EXPECT_EQ(at[0].cand.origin, "rank-rung");
  EXPECT_EQ(at[0].cand.rung, 1);
  EXPECT_EQ(at[1].cand.origin, "rank-rung");
  EXPECT_EQ(at[1].cand.rung, 1);
  EXPECT_EQ(at[2].cand.rung, 0);  // then the floor's own top-k
  EXPECT_EQ(r.strategy.floor_rung(), 0);
  const Attempt* best = r.session->state().best_attempt();
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->cand.rung, 1);
  // Within the margin (rung 1 predicted 0.9x of rung 0) the floor opens, and the rung above, in
  // a near tie (BuiltinOptions::rung_tie), has its best shape measured second.
  SurfaceSpec near = spec;
  near.predicted_rung_cost = {1.0, 0.9, 6.0};
  Rig n(near, {}, no_stop_rules(4));
  n.session->run();
  const auto& nat = n.session->state().attempts;
  ASSERT_GE(nat.size(), 2u);
  EXPECT_EQ(nat.at(0).cand.rung, 0);
  EXPECT_EQ(nat.at(1).cand.origin, "rank-rung");
  EXPECT_EQ(nat.at(1).cand.rung, 1);
  int tied = 0;
  for (const auto& a : nat) tied += a.cand.origin == "rank-rung";
  EXPECT_EQ(tied, 1);
  // Predicted 1.2x slower than the floor: no tie, the floor's top-k alone.
  SurfaceSpec slower = spec;
  slower.predicted_rung_cost = {1.0, 1.2, 6.0};
  Rig sl(slower, {}, no_stop_rules(4));
  sl.session->run();
  for (const auto& a : sl.session->state().attempts) EXPECT_NE(a.cand.origin, "rank-rung");
}

// The opening's rung holds for a floor a mismatch raised too (run DG's kb3_relu_self_attention:
// TF32 missed, 3xTF32 on wgmma passed faster than eager, so no speed probe, and 16 attempts stayed
// on it while mma.sync's 3xTF32, predicted 1.5x faster, was 1.6x faster): after the retry on the
// new floor, the rung predicted clearly faster is tried. Without the margin it is not.
TEST(Session, ARaisedFloorTriesARungPredictedFasterAfterItsRetry) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  spec.predicted_rung_cost = {1.0, 3.0, 1.5};
  spec.rung_cost = {1.0, 3.0, 1.5};
  spec.t_eager = 10e-3;  // the new floor beats eager: no speed probe
  Rig r(spec, {}, no_stop_rules(8));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 4u);
  EXPECT_EQ(at[0].status, RunStatus::mismatch);
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_EQ(at[1].cand.rung, 1);
  EXPECT_EQ(at[2].cand.origin, "rank-rung");
  EXPECT_EQ(at[2].cand.rung, 2);
  EXPECT_EQ(at[2].status, RunStatus::ok);
  const Attempt* best = r.session->state().best_attempt();
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->cand.rung, 2);
  SurfaceSpec near = spec;
  near.predicted_rung_cost = {1.0, 3.0, 2.7};  // 1.11x: within rung_advantage
  Rig n(near, {}, no_stop_rules(8));
  n.session->run();
  for (const auto& a : n.session->state().attempts) EXPECT_NE(a.cand.origin, "rank-rung");
}

// A best within slow_probe_margin of eager (1.02x here) is probed like a slower one: a kernel at
// 1.00-1.04x is within run-to-run spread of a fallback (run DG's kb1_sdpa at 0.98-1.00x).
TEST(Session, AFloorBarelyFasterThanEagerProbesTheRungsAbove) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  spec.rung_cost = {1.0, 5.0, 2.0};
  spec.t_eager = 1.0;  // never slow: the floor's best after its first three passes
  Rig base(spec, {}, no_stop_rules(4));
  base.session->run();
  double best3 = 1.0;
  int passed = 0;
  for (const auto& a : base.session->state().attempts)
    if (a.status == RunStatus::ok && passed++ < 3) best3 = std::min(best3, a.time_s);
  ASSERT_EQ(passed, 3);
  auto probes = [&](double eager) {
    SurfaceSpec s = spec;
    s.t_eager = eager;
    Rig r(s, {}, no_stop_rules(12));
    r.session->run();
    int n = 0;
    for (const auto& a : r.session->state().attempts) n += a.cand.origin == "speed-probe";
    return n;
  };
  EXPECT_EQ(probes(best3 * 1.02), 2);  // 1.02x faster than eager: probed
  EXPECT_EQ(probes(best3 * 1.10), 0);  // 1.10x: not
}

// A program with no configuration at the next rung (f32x3s needs K-major operands) climbs to the
// rung after it.
TEST(Session, TheLadderSkipsARungTheProgramDoesNotHave) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  spec.missing_rungs = {1};
  Rig r(spec, {}, no_stop_rules(6));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 2u);
  EXPECT_EQ(at[0].status, RunStatus::mismatch);
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_EQ(at[1].cand.rung, 2);
  EXPECT_EQ(at[1].status, RunStatus::ok);
  EXPECT_EQ(r.strategy.floor_rung(), 2);
}

// No more precise rung (a conv has TF32 only): two TF32 rounding mismatches in two summation
// classes with nothing correct say the precision misses the tolerance, not the order; the search
// ends there instead of measuring the rung's other tiles (run CN: eight attempts each).
TEST(Session, ReducedPrecisionWithNoRungAboveEndsAfterTwoClassesFail) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  spec.missing_rungs = {1, 2};
  Rig r(spec, {}, no_stop_rules(8));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 2u);
  for (const auto& a : at) {
    EXPECT_EQ(a.status, RunStatus::mismatch);
    EXPECT_EQ(a.cand.rung, 0);
  }
  EXPECT_EQ(r.session->stop_reason(), StopReason::space_exhausted);
}

// Compiling far ahead (lookahead 8 of a budget of 8) must not spend the budget on candidates
// proposed before the first mismatch came back: they are dropped once the floor rises.
TEST(Session, CandidatesBelowARaisedFloorAreDroppedNotEvaluated) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  SessionOptions so = no_stop_rules(8);
  so.lookahead = 8;
  Rig r(spec, {}, so);
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 8u);
  EXPECT_EQ(at[0].status, RunStatus::mismatch);
  EXPECT_EQ(at[0].cand.rung, 0);
  for (size_t i = 1; i < at.size(); ++i) {
    EXPECT_EQ(at[i].cand.rung, 1) << i;
    EXPECT_EQ(at[i].status, RunStatus::ok) << i;
  }
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_GE(r.session->cost().dropped, 1);
}

// A mismatch that the float64 diagnosis puts on the fp32 reference does not climb the ladder
// (a more precise kernel cannot pass either), and the second one stops the search.
TEST(Session, ReferenceLimitedMismatchesStopWithoutClimbingTheLadder) {
  SurfaceSpec spec;
  spec.reference_limited = true;
  SessionOptions so = no_stop_rules(20);
  so.rules.reference_limited = 2;
  Rig r(spec, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::reference_limited);
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 2u);
  for (const auto& a : at) {
    EXPECT_EQ(a.status, RunStatus::mismatch);
    EXPECT_TRUE(a.reference_limited);
    EXPECT_EQ(a.cand.rung, 0);
  }
  EXPECT_EQ(r.strategy.floor_rung(), 0);
  EXPECT_TRUE(attempt_from_json(attempt_to_json(at[0])).reference_limited);  // journals keep it
}

// An evaluation's seconds by phase reach its attempt, the journal and the session's cost.
TEST(Session, EvaluationPhasesAreKeptAndSummed) {
  Rig r(SurfaceSpec{}, {}, no_stop_rules(3));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[0].gpu_phases.at("checks"), 0.25);
  EXPECT_EQ(attempt_from_json(attempt_to_json(at[0])).gpu_phases, at[0].gpu_phases);
  EXPECT_TRUE(attempt_from_json(nlohmann::json{{"gpu_s", 1.0}}).gpu_phases.empty());  // older journals
  // the per-stage profile: kept by the journal, absent where none was taken
  Attempt p = at[0];
  p.stage_ms = {{"t0", "gemm", "g", 1.5}, {"y", "elementwise", "e", 0.25}};
  EXPECT_EQ(attempt_from_json(attempt_to_json(p)).stage_ms, p.stage_ms);
  EXPECT_FALSE(attempt_to_json(at[0]).contains("stage_ms"));
  EXPECT_TRUE(attempt_from_json(nlohmann::json{{"gpu_s", 1.0}}).stage_ms.empty());
  const auto& cost = r.session->cost();
  EXPECT_EQ(cost.gpu_phases.at("checks"), 0.75);
  EXPECT_EQ(cost.gpu_phases.at("candidate") + cost.gpu_phases.at("reference") + cost.gpu_phases.at("checks"),
            cost.gpu_s);
}

// Where the problem has a rung that sums in the reference's order (FP32 SIMT), a reference-limited
// mismatch jumps straight to it (not one rung up: more precision cannot pass), and only
// reference-limited mismatches on that rung count toward the stop rule.
TEST(Session, AReferenceLimitedMismatchJumpsToTheSummationOrderRung) {
  SurfaceSpec spec;
  spec.reference_limited = true;
  spec.summation_order_rung = 2;
  SessionOptions so = no_stop_rules(6);
  so.rules.reference_limited = 1;
  so.summation_order_rung = 2;
  Rig r(spec, {}, so);
  EXPECT_NE(r.session->run(), StopReason::reference_limited);
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 2u);
  EXPECT_TRUE(at[0].reference_limited);
  EXPECT_EQ(at[0].cand.rung, 0);
  EXPECT_EQ(at[1].cand.origin, "fallback");
  EXPECT_EQ(at[1].cand.rung, 2);
  EXPECT_EQ(at[1].status, RunStatus::ok);
  EXPECT_EQ(r.strategy.floor_rung(), 2);
  ASSERT_TRUE(r.session->state().best);
}

// Where the problem has a summation-order rung, reference-limited mismatches do not stop the
// search: the ladder has somewhere to go (here the session is told of a rung 3 the fake never
// offers, so every attempt stays below it and the attempt budget ends the search).
TEST(Session, ReferenceLimitedMismatchesBelowTheOrderRungDoNotStopTheSearch) {
  SurfaceSpec spec;
  spec.reference_limited = true;
  SessionOptions so = no_stop_rules(5);
  so.rules.reference_limited = 2;
  so.summation_order_rung = 3;
  Rig r(spec, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::attempt_budget);
  EXPECT_EQ(r.session->state().attempts.size(), 5u);
}

// Stages that can sum in the reference's own order without a rung for it (scans in PyTorch's
// order): a reference-limited mismatch sends that order next, and the mismatches of the
// candidates already compiling ahead of it do not stop the search before it is measured.
TEST(Session, AReferenceLimitedMismatchTriesTheReferencesOwnOrderNext) {
  SurfaceSpec spec;
  spec.reference_limited = true;
  spec.reference_order_stages = 5;
  SessionOptions so = no_stop_rules(10);
  so.rules.reference_limited = 2;
  so.rules.stagnation = 3;
  Rig r(spec, {}, so);
  EXPECT_NE(r.session->run(), StopReason::reference_limited);
  const auto& at = r.session->state().attempts;
  ASSERT_TRUE(r.session->state().best);
  const Attempt& best = at[*r.session->state().best];
  EXPECT_EQ(best.cand.config.value("stages", 0), 5);
  EXPECT_EQ(best.cand.origin, "fallback");  // sent by the mismatch, not reached by the ranking
  EXPECT_LE(*r.session->state().best, 3);  // behind at most the lookahead's candidates
  EXPECT_TRUE(at[0].reference_limited);
  int ahead = 0;
  for (int i = 0; i < *r.session->state().best; ++i) ahead += at[static_cast<size_t>(i)].reference_limited;
  EXPECT_GE(ahead, 2) << "the stop rule would have fired without the reference order";
}

// When the reference's own order mismatches too, the stop rule counts again.
TEST(Session, ReferenceLimitedMismatchesStopOnceTheReferenceOrderFailedToo) {
  SurfaceSpec spec;
  spec.reference_limited = true;
  spec.reference_order_stages = 5;
  spec.reference_order_fails = true;
  SessionOptions so = no_stop_rules(20);
  so.rules.reference_limited = 2;
  Rig r(spec, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::reference_limited);
  const auto& at = r.session->state().attempts;
  EXPECT_LE(at.size(), 5u);
  bool order_tried = false;
  for (const auto& a : at) order_tried = order_tried || a.cand.config.value("stages", 0) == 5;
  EXPECT_TRUE(order_tried);
}

// On a rung where the summation order is one knob (FP32 SIMT: split_k), a repeatable mismatch
// retires its class: no other candidate of it is evaluated, and the search moves to other orders.
int mismatches_with_stages(const SearchSession& s, int stages) {
  int n = 0;
  for (const auto& a : s.state().attempts)
    n += a.status == RunStatus::mismatch && a.cand.config.value("stages", 0) == stages;
  return n;
}

TEST(Session, ARoundingMismatchRetiresItsSummationClass) {
  SurfaceSpec spec;
  spec.order_rung = 2;
  spec.order_mismatch_stages = {2, 3};
  BuiltinOptions bo;
  bo.start_rung = 2;  // the ranking prefers 2 stages: the first candidate mismatches
  Rig r(spec, bo, no_stop_rules(12));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 12u);
  EXPECT_EQ(at[0].status, RunStatus::mismatch);
  EXPECT_TRUE(at[0].rounding_mismatch);
  EXPECT_EQ(mismatches_with_stages(*r.session, 2), 1);
  EXPECT_LE(mismatches_with_stages(*r.session, 3), 1);
  ASSERT_TRUE(r.session->state().best);
  EXPECT_TRUE(attempt_from_json(attempt_to_json(at[0])).rounding_mismatch);  // journals keep it
  // The same surface without the classes repeats the mismatch on every 2-stage tile it ranks.
  spec.order_classes = false;
  Rig blind(spec, bo, no_stop_rules(12));
  blind.session->run();
  EXPECT_GT(mismatches_with_stages(*blind.session, 2), 1);
}

// The ladder lifts onto the order rung with one summation order (K in one piece); when that class
// fails, the other orders come from the rung's own ranking, not from the lifted opening.
TEST(Session, ARaisedFloorSearchesTheRungsOwnOrders) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  spec.missing_rungs = {1};
  spec.order_rung = 2;
  spec.order_mismatch_stages = {2};
  spec.lift_to_first_order = true;
  Rig r(spec, {}, no_stop_rules(10));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 3u);
  EXPECT_EQ(at[0].cand.rung, 0);
  EXPECT_EQ(at[1].cand.rung, 2);
  EXPECT_EQ(at[1].cand.config.value("stages", 0), 2);
  EXPECT_TRUE(at[1].rounding_mismatch);
  int order_mismatches = 0;
  for (const auto& a : at) order_mismatches += a.cand.rung == 2 && a.status == RunStatus::mismatch;
  EXPECT_EQ(order_mismatches, 1);
  ASSERT_TRUE(r.session->state().best);
  EXPECT_NE(at[static_cast<size_t>(*r.session->state().best)].cand.config.value("stages", 0), 2);
}

// A floor the memory raised above what the problem's analysis needs gets one probe below it: if
// the probe passes (a capability added since the memory learned), the floor drops to its rung and
// the search goes on there; if it fails, it cost one attempt and the floor stays.
TEST(Session, AProbeBelowTheMemorysFloorReopensTheRungItPasses) {
  SurfaceSpec spec;  // rung 0 passes and is the fastest
  BuiltinOptions bo;
  bo.start_rung = 2;  // a stale lesson
  Rig stale(spec, bo, no_stop_rules(12));
  stale.session->run();
  for (const auto& a : stale.session->state().attempts) EXPECT_GE(a.cand.rung, 2);
  bo.probe_rung = 0;
  Rig r(spec, bo, no_stop_rules(12));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 3u);
  EXPECT_EQ(at[1].cand.origin, "probe");
  EXPECT_EQ(at[1].cand.rung, 0);
  EXPECT_EQ(at[1].status, RunStatus::ok);
  EXPECT_EQ(r.strategy.floor_rung(), 0);
  ASSERT_TRUE(r.session->state().best);
  EXPECT_EQ(at[static_cast<size_t>(*r.session->state().best)].cand.rung, 0);
  int below = 0;
  for (const auto& a : at) below += a.cand.rung < 2;
  EXPECT_GT(below, 1);  // refinement went on at rung 0
  // Where the lower rung fails, the probe is the one attempt spent there.
  spec.tf32_mismatch = true;
  Rig f(spec, bo, no_stop_rules(12));
  f.session->run();
  int probes = 0;
  for (const auto& a : f.session->state().attempts) probes += a.cand.rung < 2;
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(f.strategy.floor_rung(), 2);
}

// The reference-class probe chains (BuiltinOptions::probe_floor): where mma.sync's 3xTF32 passes
// below FP32 SIMT's floor, the faster 3xTF32 on wgmma below it is probed next, and the opening's
// FP32 SIMT candidates still waiting give way to the reopened rung's own top-k (run DV's
// kb1_matmul_transposed_b measured its passing probe and then three FP32 SIMT shapes).
TEST(Session, APassingProbeChainsDownAndTheOpeningFollowsIt) {
  SurfaceSpec spec;  // every rung passes; rung 0 is the fastest
  BuiltinOptions bo;
  bo.start_rung = 2;
  bo.probe_rung = 1;
  bo.probe_floor = 0;
  Rig r(spec, bo, no_stop_rules(12));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_GE(at.size(), 6u);
  EXPECT_EQ(at[1].cand.origin, "probe");
  EXPECT_EQ(at[1].cand.rung, 1);
  EXPECT_EQ(at[2].cand.origin, "probe");  // queued with the first, not after its verdict
  EXPECT_EQ(at[2].cand.rung, 0);
  int probes0 = 0, at2 = 0;
  for (const auto& a : at) {
    probes0 += a.cand.origin == "probe" && a.cand.rung == 0 && a.status == RunStatus::ok;
    at2 += a.cand.rung == 2;
  }
  EXPECT_EQ(probes0, 1);
  EXPECT_EQ(r.strategy.floor_rung(), 0);
  ASSERT_TRUE(r.session->state().best);
  EXPECT_EQ(at[static_cast<size_t>(*r.session->state().best)].cand.rung, 0);
  // Rung 2's opening ends where the probes passed: its first candidate and those already in flight.
  EXPECT_LE(at2, 3);
  // Without the chain the floor stops at the probe's rung, and its own top-k follow it.
  bo.probe_floor = -1;
  Rig once(spec, bo, no_stop_rules(12));
  once.session->run();
  EXPECT_EQ(once.strategy.floor_rung(), 1);
  int rung0 = 0, rung2 = 0;
  for (const auto& a : once.session->state().attempts) {
    rung0 += a.cand.rung == 0;
    rung2 += a.cand.rung == 2;
  }
  EXPECT_EQ(rung0, 0);
  EXPECT_LE(rung2, 3);
  // Where the chained probe's rung fails, it is the one attempt spent there and the floor stays.
  spec.tf32_mismatch = true;
  bo.probe_floor = 0;
  Rig f(spec, bo, no_stop_rules(12));
  f.session->run();
  int tried0 = 0;
  for (const auto& a : f.session->state().attempts) tried0 += a.cand.rung == 0;
  EXPECT_EQ(tried0, 1);
  EXPECT_EQ(f.strategy.floor_rung(), 1);
}

// A mismatch that is not repeatable (a flaky run, a binding error) retires nothing.
TEST(Session, AnUnrepeatableMismatchRetiresNoClass) {
  SurfaceSpec spec;
  spec.order_rung = 2;
  FakeSpace probe(spec);
  BuiltinOptions bo;
  bo.start_rung = 2;
  const Candidate first = probe.ranked(1, 2).at(0);
  spec.fail[first.name] = RunStatus::mismatch;
  Rig r(spec, bo, no_stop_rules(10));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_FALSE(at.empty());
  EXPECT_EQ(at[0].cand.name, first.name);
  EXPECT_FALSE(at[0].rounding_mismatch);
  int same_class_ok = 0;
  for (const auto& a : at)
    same_class_ok += a.status == RunStatus::ok &&
                     r.space.summation_class(a.cand) == r.space.summation_class(first);
  EXPECT_GE(same_class_ok, 1);
}

// On the summation-order rung a reference-limited mismatch retires its class but does not stop the
// search: another split count may sum as the reference does (cuBLAS splits K), so every order is
// tried once, and the search ends when none is left.
TEST(Session, ReferenceLimitedMismatchesOnTheOrderRungWalkEveryOrder) {
  SurfaceSpec spec;
  spec.reference_limited = true;
  spec.summation_order_rung = 2;
  spec.order_rung = 2;
  spec.order_mismatch_stages = {2, 3, 4, 5};
  spec.order_mismatch_reference_limited = true;
  SessionOptions so = no_stop_rules(30);
  so.rules.reference_limited = 2;
  so.summation_order_rung = 2;
  Rig r(spec, {}, so);
  EXPECT_EQ(r.session->run(), StopReason::space_exhausted);
  std::set<int> orders;
  for (const auto& a : r.session->state().attempts)
    if (a.cand.rung == 2) {
      EXPECT_TRUE(a.reference_limited);
      EXPECT_TRUE(orders.insert(a.cand.config.value("stages", 0)).second) << a.cand.name;
    }
  EXPECT_EQ(orders.size(), 4u);
}

TEST(Session, ResumeAfterAKillLosesNothingAndEndsTheSame) {
  // The uninterrupted run.
  Rig full(SurfaceSpec{}, {}, no_stop_rules(30));
  full.session->run();

  // A run killed after 11 attempts, its last journal line torn mid-write.
  MemoryJournal journal;
  {
    std::atomic<bool> stop{false};
    Rig killed(SurfaceSpec{}, {}, no_stop_rules(30), &journal);
    ASSERT_TRUE(killed.session->start());
    for (int i = 0; i < 11; ++i) killed.session->step();
    EXPECT_EQ(killed.evaluator.calls, 11);
  }
  journal.text += R"({"kind":"attempt","index":11,"candid)";  // the kill, mid-line
  auto loaded = journal.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->attempts.size(), 11u);
  EXPECT_EQ(loaded->torn_lines, 1);

  Rig resumed(SurfaceSpec{}, {}, no_stop_rules(30), &journal);
  resumed.session->run();
  EXPECT_EQ(resumed.names(), full.names());
  EXPECT_EQ(resumed.evaluator.calls, 30 - 11);       // measured only what was missing
  EXPECT_EQ(resumed.evaluator.baseline_calls, 0);    // baselines came from the journal
  EXPECT_EQ(resumed.session->cost().replayed, 11);
  EXPECT_EQ(resumed.session->state().best_attempt()->cand.name,
            full.session->state().best_attempt()->cand.name);
  // Search time continues from the journal: the first new result comes after the replayed ones.
  const auto& at = resumed.session->state().attempts;
  EXPECT_GT(at[11].at_s, at[10].at_s);
  EXPECT_DOUBLE_EQ(at[10].at_s, full.session->state().attempts[10].at_s);
}

// In a suite the scheduler asks ready() before stepping. After a mismatch raised the floor, the
// queued TF32 candidate is no longer wanted: ready() drops it and waits for the fallback's
// compile, not for the unwanted one (here it never finishes until the end of the test).
TEST(Session, ReadyDoesNotWaitForACandidateThatWillBeDropped) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  // The first candidate the search proposes (deterministic for the seed): the one to let through.
  std::string first;
  {
    Rig probe(spec, {}, no_stop_rules(1));
    probe.session->run();
    ASSERT_EQ(probe.session->state().attempts.size(), 1u);
    first = probe.session->state().attempts[0].cand.name;
  }
  // Every other TF32 compile hangs until the end of the test (whatever order the compile
  // threads run in).
  struct Stuck final : Compiler {
    explicit Stuck(const SurfaceSpec& s) : inner(s) {}
    CompileOutcome compile(const Candidate& c) override {
      if (c.rung == 0 && c.name != first) release.wait();
      return inner.compile(c);
    }
    FakeCompiler inner;
    std::string first;
    std::shared_future<void> release;
  };
  std::promise<void> unblock;
  FakeClock clock;
  FakeSpace space(spec);
  Stuck compiler(spec);
  compiler.release = unblock.get_future().share();
  compiler.first = first;
  FakeEvaluator evaluator(space, &clock);
  BuiltinStrategy strategy(space, {});
  SessionOptions so = no_stop_rules(6);
  so.lookahead = 2;
  so.t_sol = spec.t_sol;
  bool became_ready = false;
  {
    SearchSession s(spec.problem, strategy, compiler, evaluator, clock, nullptr, so);
    // Destroyed before the session (whose destructor joins the hung compile), on every exit,
    // a failed ASSERT included: the test fails rather than hangs.
    struct Release {
      std::promise<void>& p;
      ~Release() { p.set_value(); }
    } release_at_exit{unblock};
    ASSERT_TRUE(s.start().ok());
    s.prime();
    ASSERT_TRUE(s.step());  // the first TF32 candidate: a mismatch, the floor rises to rung 1
    ASSERT_EQ(s.state().attempts.back().status, RunStatus::mismatch);
    for (int i = 0; i < 400 && !became_ready; ++i) {
      became_ready = s.ready();
      if (!became_ready) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(s.cost().dropped, 1);
    if (became_ready) {
      ASSERT_TRUE(s.step());
      EXPECT_EQ(s.state().attempts.back().cand.rung, 1);
      EXPECT_EQ(s.state().attempts.back().status, RunStatus::ok);
    }
  }
  EXPECT_TRUE(became_ready);
}

TEST(Session, InterruptStopsBetweenAttempts) {
  Rig r(SurfaceSpec{}, {}, no_stop_rules(30));
  std::atomic<bool> flag{false};
  SessionCallbacks cb;
  ASSERT_TRUE(r.session->start());
  for (int i = 0; i < 4; ++i) r.session->step();
  flag = true;
  EXPECT_EQ(r.session->run(&flag), StopReason::interrupted);
  EXPECT_EQ(r.session->state().attempts.size(), 4u);
}

TEST(Session, ExhaustedSpaceStops) {
  SurfaceSpec spec;
  BuiltinOptions bo;
  bo.pool = 1000;  // the ranked tail covers the whole space
  Rig r(spec, bo, no_stop_rules(0));
  EXPECT_EQ(r.session->run(), StopReason::space_exhausted);
  // Every valid rung-0 configuration was tried exactly once.
  EXPECT_EQ(r.session->state().attempts.size(), r.space.ranked(1000).size());
}

// Remembered priors alternate with the ranked top-k, a prior first: two priors that do not
// transfer cost one attempt each before the model's first and second choices, not two up front.
TEST(BuiltinStrategy, SeedsAlternateWithTheRankedTopK) {
  SurfaceSpec spec;
  FakeSpace probe(spec);
  std::vector<Candidate> ranked = probe.ranked(8);
  ASSERT_GE(ranked.size(), 6u);
  BuiltinOptions bo;
  bo.seeds = {ranked[5], ranked[4]};  // the model ranks these low; memory says try them
  bo.top_k = 3;
  Rig r(spec, bo, no_stop_rules(5));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 5u);
  std::vector<std::string> origins, names;
  for (const auto& a : at) {
    origins.push_back(a.cand.origin);
    names.push_back(a.cand.name);
  }
  EXPECT_EQ(origins, (std::vector<std::string>{"prior", "rank", "prior", "rank", "rank"}));
  EXPECT_EQ(names[0], ranked[5].name);
  EXPECT_EQ(names[1], ranked[0].name);
  EXPECT_EQ(names[2], ranked[4].name);
}

// A kernel store over the synthetic space: a candidate's one unit is its shape signature (the
// cluster, like raster and swizzle on a real GEMM, is a runtime argument sharing the unit).
class SignatureStore final : public KernelStore {
 public:
  std::vector<std::string> units(const Candidate& c) override { return {shape_signature(c.config)}; }
  bool stored(const std::string& unit) override { return in.count(unit) > 0; }
  std::set<std::string> in;
};

// The opening measures the best-ranked stored candidate first (it costs a link), the ranked
// top-k after it; without a store the opening is the ranking's.
TEST(BuiltinStrategy, AStoredCandidateOpensTheSearch) {
  SurfaceSpec spec;
  FakeSpace probe(spec);
  std::vector<Candidate> ranked = diverse_top_k(probe.ranked(64), 8);
  ASSERT_GE(ranked.size(), 6u);
  SignatureStore store;
  store.in.insert(shape_signature(ranked[4].config));
  BuiltinOptions bo;
  bo.top_k = 3;
  bo.store = &store;
  Rig r(spec, bo, no_stop_rules(3));
  r.session->run();
  const auto& at = r.session->state().attempts;
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[0].cand.origin, "stored");
  EXPECT_EQ(shape_signature(at[0].cand.config), shape_signature(ranked[4].config));
  EXPECT_EQ(at[1].cand.name, ranked[0].name);
  EXPECT_EQ(at[1].cand.origin, "rank");
  // Nothing stored, or the best already stored: the ranking's own opening.
  for (bool best_stored : {false, true}) {
    SignatureStore other;
    if (best_stored) other.in.insert(shape_signature(ranked[0].config));
    BuiltinOptions ob = bo;
    ob.store = &other;
    Rig plain(spec, ob, no_stop_rules(1));
    plain.session->run();
    ASSERT_EQ(plain.session->state().attempts.size(), 1u);
    EXPECT_EQ(plain.session->state().attempts[0].cand.name, ranked[0].name) << best_stored;
  }
}

// Refinement takes the best's neighbours that share its units (a runtime knob) before one that
// needs a fresh compile; without a store it walks the neighbours in rank order.
TEST(BuiltinStrategy, RefinementTriesNeighboursSharingUnitsFirst) {
  SurfaceSpec spec;
  auto second_attempt = [&](KernelStore* store) {
    BuiltinOptions bo;
    bo.top_k = 1;
    bo.explore_every = 0;
    bo.store = store;
    SessionOptions so = no_stop_rules(2);
    so.lookahead = 1;  // the second proposal sees the first result
    Rig r(spec, bo, so);
    r.session->run();
    const auto& at = r.session->state().attempts;
    EXPECT_EQ(at.size(), 2u);
    return std::make_pair(at[0].cand, at.size() > 1 ? at[1].cand : Candidate{});
  };
  const auto [first_plain, second_plain] = second_attempt(nullptr);
  ASSERT_NE(shape_signature(second_plain.config), shape_signature(first_plain.config))
      << "the test needs a space whose first neighbour changes the shape";
  SignatureStore store;
  const auto [first, second] = second_attempt(&store);
  EXPECT_EQ(first.name, first_plain.name);
  EXPECT_EQ(second.origin, "neighbor");
  EXPECT_EQ(shape_signature(second.config), shape_signature(first.config)) << second.name;
  EXPECT_NE(second.name, first.name);
}

// A cap on fresh compiles: past it, only candidates whose units are stored or already being built
// here are proposed; the search goes on with those (runtime-knob neighbours) and ends when none is
// left instead of compiling more.
TEST(BuiltinStrategy, FreshCompilesPastTheCapArePassedOver) {
  SurfaceSpec spec;
  auto run = [&](int cap) {
    SignatureStore store;  // nothing stored: each new shape signature is one fresh compile
    BuiltinOptions bo;
    bo.top_k = 4;
    bo.store = &store;
    bo.max_fresh_compiles = cap;
    SessionOptions so = no_stop_rules(24);
    so.lookahead = 1;
    Rig r(spec, bo, so);
    r.session->run();
    std::set<std::string> shapes;
    for (const auto& a : r.session->state().attempts) shapes.insert(shape_signature(a.cand.config));
    return std::make_pair(shapes.size(), r.session->state().attempts.size());
  };
  const auto [shapes_uncapped, attempts_uncapped] = run(0);
  ASSERT_GT(shapes_uncapped, 2u) << "the test needs a search that compiles more than two shapes";
  const auto [shapes, attempts] = run(2);
  EXPECT_EQ(shapes, 2u);
  EXPECT_GE(attempts, shapes) << "stored-unit neighbours still measured";
  EXPECT_LE(attempts, attempts_uncapped);
}

// An evaluator that puts torch.compile's baseline off: none at the start, 1.5 ms once two
// candidates were measured.
class LateCompileEvaluator final : public Evaluator {
 public:
  explicit LateCompileEvaluator(FakeEvaluator& inner) : inner_(inner) {}
  Baselines baselines() override {
    Baselines b = inner_.baselines();
    b.compile_s = 0;
    return b;
  }
  EvalOutcome evaluate(const Candidate& c, const CompileOutcome& built) override {
    ++evaluated;
    return inner_.evaluate(c, built);
  }
  std::optional<double> late_compile_baseline_s() override {
    return evaluated >= 2 ? std::optional<double>(1.5e-3) : std::nullopt;
  }
  int evaluated = 0;

 private:
  FakeEvaluator& inner_;
};

// The session takes a baseline measured late into its state (the report's torch.compile figure)
// and journals it, so a --resume reads it.
TEST(Session, ALateTorchCompileBaselineReachesTheStateAndTheJournal) {
  SurfaceSpec spec;
  FakeClock clock;
  FakeSpace space(spec);
  FakeCompiler compiler(spec);
  FakeEvaluator inner(space, &clock);
  LateCompileEvaluator evaluator(inner);
  BuiltinStrategy strategy(space, BuiltinOptions{});
  MemoryJournal journal;
  SessionOptions so = no_stop_rules(4);
  so.lookahead = 1;
  SearchSession session("late", strategy, compiler, evaluator, clock, &journal, so);
  ASSERT_TRUE(session.start());
  EXPECT_DOUBLE_EQ(session.state().baselines.compile_s, 0);
  session.run();
  EXPECT_DOUBLE_EQ(session.state().baselines.compile_s, 1.5e-3);
  auto loaded = journal.load();
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(loaded->baselines.has_value());
  EXPECT_DOUBLE_EQ(loaded->baselines->compile_s, 1.5e-3) << journal.text;
  EXPECT_GT(loaded->baselines->eager_s, 0);
}

// An evaluator that measures ahead (several GPUs): the session hands it each built candidate from
// the thread that compiled it, and evaluate() serves the stored outcome.
class AheadEvaluator final : public Evaluator {
 public:
  explicit AheadEvaluator(FakeEvaluator& inner) : inner_(inner) {}
  Baselines baselines() override { return inner_.baselines(); }
  bool measures_ahead() const override { return true; }
  void measure_ahead(const Candidate& c, const CompileOutcome& built) override {
    std::lock_guard<std::mutex> lock(mu_);
    ahead_[c.hash] = inner_.evaluate(c, built);
    threads.insert(std::this_thread::get_id());
    ++measured_ahead;
  }
  EvalOutcome evaluate(const Candidate& c, const CompileOutcome& built) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++evaluated;
    if (auto it = ahead_.find(c.hash); it != ahead_.end()) {
      ++served;
      return it->second;
    }
    return inner_.evaluate(c, built);
  }
  std::set<std::thread::id> threads;
  int measured_ahead = 0, evaluated = 0, served = 0;

 private:
  FakeEvaluator& inner_;
  std::mutex mu_;
  std::map<std::string, EvalOutcome> ahead_;
};

std::vector<std::string> run_names(Evaluator& evaluator, FakeSpace& space, FakeCompiler& compiler, int attempts) {
  FakeClock clock;
  BuiltinStrategy strategy(space, BuiltinOptions{});
  SessionOptions so = no_stop_rules(attempts);
  so.lookahead = 4;
  SearchSession session("ahead", strategy, compiler, evaluator, clock, nullptr, so);
  session.run();
  std::vector<std::string> out;
  for (const auto& a : session.state().attempts) out.push_back(a.cand.name + " " + run_status_name(a.status));
  return out;
}

TEST(Session, AnEvaluatorThatMeasuresAheadGetsEachBuiltCandidateFromItsCompile) {
  SurfaceSpec spec;
  {
    Rig probe(spec, {}, no_stop_rules(3));
    probe.session->run();
    spec.fail[probe.names()[1]] = RunStatus::compile_error;  // not built: never measured ahead
    spec.fail[probe.names()[2]] = RunStatus::launch_error;   // measured ahead, and fails there
  }
  FakeSpace one_space(spec), ahead_space(spec);
  FakeCompiler one_compiler(spec), ahead_compiler(spec);
  FakeEvaluator one(one_space, nullptr), inner(ahead_space, nullptr);
  AheadEvaluator ahead(inner);
  const auto one_at_a_time = run_names(one, one_space, one_compiler, 24);
  const auto measured_ahead = run_names(ahead, ahead_space, ahead_compiler, 24);
  EXPECT_EQ(measured_ahead, one_at_a_time);  // the same attempts, in the same order
  ASSERT_EQ(one_at_a_time.size(), 24u);
  EXPECT_GT(ahead.evaluated, 0);
  EXPECT_EQ(ahead.served, ahead.evaluated);    // every evaluation was measured as it was built
  EXPECT_GE(ahead.measured_ahead, ahead.evaluated);
  EXPECT_EQ(ahead.threads.count(std::this_thread::get_id()), 0u);  // from the compiling threads
  EXPECT_NE(std::find(measured_ahead.begin(), measured_ahead.end(),
                      measured_ahead[1].substr(0, measured_ahead[1].find(' ')) + " compile_error"),
            measured_ahead.end());
  FakeEvaluator plain(one_space, nullptr);
  EXPECT_FALSE(plain.measures_ahead());
}

}  // namespace
}  // namespace ucut::search

TEST(BuiltinStrategy, ShapeSignatureIgnoresMinorKnobsOnly) {
  nlohmann::json a = {{"tile", "128x256x64"}, {"schedule", "cooperative"}, {"raster", "along_m"},
                      {"cluster", "2x1"}, {"s1.threads", 256}, {"s1.align", 4}};
  nlohmann::json b = a;
  b["raster"] = "along_n";
  b["cluster"] = "1x2";
  b["s1.align"] = 1;
  EXPECT_EQ(ucut::search::shape_signature(a), ucut::search::shape_signature(b));
  b["tile"] = "256x128x64";
  EXPECT_NE(ucut::search::shape_signature(a), ucut::search::shape_signature(b));
  b = a;
  b["s1.threads"] = 512;
  EXPECT_NE(ucut::search::shape_signature(a), ucut::search::shape_signature(b));
}

TEST(BuiltinStrategy, PromotingStagesCountsF32x3wStages) {
  EXPECT_EQ(ucut::search::promoting_stages({{"precision", "f32x3s"}, {"tile", "128x128x32"}}), 0);
  EXPECT_EQ(ucut::search::promoting_stages({{"precision", "f32x3w"}}), 1);
  EXPECT_EQ(ucut::search::promoting_stages({{"s0.precision", "f32x3w"}, {"s2.precision", "f32x3w"},
                                            {"s1.threads", 256}, {"s3.precision", "tf32"}}), 2);
  EXPECT_EQ(ucut::search::promoting_stages(nlohmann::json::array()), 0);
}
