#include "search/suite.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

#include "search/builtin_strategy.h"
#include "search/fake_surface.h"

namespace ucut::search {
namespace {

TEST(SuitePick, MostHeadroomFirstStoppedNeverTiesToFewerAttempts) {
  std::vector<HeadroomInputs> v = {
      {false, 3, 2.0, 4.0, 1.0},           // gap 2
      {false, 3, 5.0, 6.0, 1.0},           // gap 5: most headroom
      {true, 1, std::nullopt, 9.0, 1.0},   // stopped
  };
  EXPECT_EQ(suite_pick(v), 1u);
  v[1].stopped = true;
  EXPECT_EQ(suite_pick(v), 0u);
  v.push_back({false, 1, 2.0, 4.0, 1.0});  // same gap as 0, fewer attempts
  EXPECT_EQ(suite_pick(v), 3u);
  v[0].stopped = v[3].stopped = true;
  EXPECT_FALSE(suite_pick(v));
  // A problem without an attempt goes first, whatever its headroom; among untried ones, the most.
  std::vector<HeadroomInputs> w = {
      {false, 4, 9.0, 9.0, 1.0},            // gap 9, tried
      {false, 0, std::nullopt, 1.1, 1.0},   // untried, little headroom
      {false, 0, std::nullopt, 1.5, 1.0},   // untried, more
  };
  EXPECT_EQ(suite_pick(w), 2u);
  w[2].attempts = 1;
  EXPECT_EQ(suite_pick(w), 1u);
  // Tried with nothing correct comes before the most headroom among correct ones: the fewest
  // attempts first, then headroom.
  w[1].attempts = 1;
  EXPECT_EQ(suite_pick(w), 2u);
  w[2].attempts = 2;
  EXPECT_EQ(suite_pick(w), 1u);
  w[1].t_best = 1.05;  // now correct: gap 1.05, less than w[0]'s 9
  EXPECT_EQ(suite_pick(w), 2u);
  w[2].stopped = true;
  EXPECT_EQ(suite_pick(w), 0u);
  // Run AF: a correct kernel slower than eager (FP32 SIMT parity) has more headroom than a
  // failing problem's eager gap, but the failing problem still goes first.
  std::vector<HeadroomInputs> af = {
      {false, 7, 5.6, 5.4, 0.67},           // correct at 0.96x eager, gap 8.4
      {false, 1, std::nullopt, 5.2, 0.67},  // one mismatch, eager gap 7.8
  };
  EXPECT_EQ(suite_pick(af), 1u);
  // Before anything is correct the eager gap counts, unknown SOL is never starved.
  EXPECT_DOUBLE_EQ(suite_headroom({false, 0, std::nullopt, 8.0, 2.0}), 4.0);
  EXPECT_TRUE(std::isinf(suite_headroom({false, 0, 1.0, 8.0, 0.0})));
}

// Runs CU and CV: a dozen GEMM problems took 4-28 attempts each, some stuck for 10-23 of them,
// while 65 and 59 problems got one. A problem's headroom counts less the longer its best has not
// improved, so a fresh problem 3x from its bound outranks a stuck one 6x from its bound.
TEST(SuitePick, HeadroomCountsLessTheLongerTheBestHasNotImproved) {
  std::vector<HeadroomInputs> v = {
      {false, 14, 6.0, 7.0, 1.0, 0},  // gap 6, improving
      {false, 1, 3.0, 4.0, 1.0, 0},   // gap 3, one attempt
  };
  EXPECT_EQ(suite_pick(v), 0u);
  v[0].since_improvement = 3;  // log 6 / 1.75 = 1.02 < log 3 = 1.10
  EXPECT_EQ(suite_pick(v), 1u);
  v[1].since_improvement = 1;  // log 3 / 1.25 = 0.88
  EXPECT_EQ(suite_pick(v), 0u);
  EXPECT_DOUBLE_EQ(suite_priority({false, 5, 4.0, 5.0, 1.0, 4}), std::log(4.0) / 2);
  EXPECT_DOUBLE_EQ(suite_priority({false, 5, 4.0, 5.0, 1.0, 12}), std::log(4.0) / 4);
  EXPECT_DOUBLE_EQ(suite_priority({false, 5, 0.5, 5.0, 1.0, 0}), 0.0);  // faster than the bound: none
  EXPECT_TRUE(std::isinf(suite_priority({false, 5, 4.0, 5.0, 0.0, 9})));  // SOL unknown: never starved
  // Stagnation never moves a problem across tiers: nothing correct still goes first.
  v.push_back({false, 9, std::nullopt, 1.2, 1.0, 9});
  EXPECT_EQ(suite_pick(v), 2u);
}

// Runs DE and DF: headroom alone gave 25-27 attempts to GEMM problems and one to 40 others (the
// median). With breadth 3, a correct problem with fewer than three attempts goes before any that
// has them (fewest attempts first, then the discounted headroom), after the untried problems and
// those with nothing correct.
TEST(SuitePick, BreadthGivesEveryCorrectProblemItsFirstAttemptsBeforeHeadroomDecides) {
  std::vector<HeadroomInputs> v = {
      {false, 5, 8.0, 9.0, 1.0, 0},  // gap 8, improving: headroom's choice
      {false, 1, 1.5, 2.0, 1.0, 0},  // gap 1.5, one attempt
      {false, 2, 2.0, 3.0, 1.0, 0},  // gap 2, two attempts
  };
  EXPECT_EQ(suite_pick(v), 0u);      // headroom alone
  EXPECT_EQ(suite_pick(v, 3), 1u);   // the fewest attempts first, whatever its headroom
  v[1].attempts = 2;
  EXPECT_EQ(suite_pick(v, 3), 2u);   // both at two: the larger headroom
  v[1].attempts = v[2].attempts = 3;
  EXPECT_EQ(suite_pick(v, 3), 0u);   // everyone has three: headroom again
  v[1].attempts = 1;
  EXPECT_EQ(suite_pick(v, 2), 1u);
  EXPECT_EQ(suite_pick(v, 1), 0u);   // breadth 1 is the untried tier alone
  // Untried problems and those with nothing correct still go first; stopped ones never.
  v.push_back({false, 1, std::nullopt, 4.0, 1.0, 0});
  EXPECT_EQ(suite_pick(v, 3), 3u);
  v.push_back({false, 0, std::nullopt, 1.1, 1.0, 0});
  EXPECT_EQ(suite_pick(v, 3), 4u);
  v[3].stopped = v[4].stopped = v[1].stopped = true;
  EXPECT_EQ(suite_pick(v, 5), 2u);   // 2 has three attempts, under five; 0 has five
}

struct P {
  explicit P(SurfaceSpec s, int budget)
      : spec(s), space(s), compiler(s), evaluator(space, nullptr), strategy(space, BuiltinOptions{}) {
    SessionOptions so;
    so.budget.attempts = budget;
    so.rules.eps = 0.3;
    so.rules.stagnation = 8;
    so.t_sol = s.t_sol;
    session = std::make_unique<SearchSession>(s.problem, strategy, compiler, evaluator, clock,
                                              nullptr, so);
  }
  SurfaceSpec spec;
  FakeClock clock;
  FakeSpace space;
  FakeCompiler compiler;
  FakeEvaluator evaluator;
  BuiltinStrategy strategy;
  std::unique_ptr<SearchSession> session;
};

// Two synthetic problems, "near" to and "far" from their optimum by their SOL time.
std::pair<SurfaceSpec, SurfaceSpec> near_and_far(double near_t_sol, double far_t_sol) {
  SurfaceSpec near_sol, far_sol;
  near_sol.problem = "near";
  near_sol.t_sol = near_t_sol;
  far_sol.problem = "far";
  far_sol.t_sol = far_t_sol;
  return {near_sol, far_sol};
}

TEST(SuiteScheduler, RunsEveryProblemToItsStopAndFavoursHeadroom) {
  // near: close to its optimum, stops early (SOL proximity); far: gets the attempts
  auto [near_sol, far_sol] = near_and_far(0.95e-3, 0.2e-3);
  P a(near_sol, 20), b(far_sol, 20);
  FakeClock clock;
  SuiteScheduler suite({a.session.get(), b.session.get()}, SuiteOptions{}, clock);
  int made = suite.run();
  EXPECT_TRUE(a.session->stopped());
  EXPECT_TRUE(b.session->stopped());
  EXPECT_EQ(made, static_cast<int>(a.session->state().attempts.size() +
                                   b.session->state().attempts.size()));
  EXPECT_EQ(a.session->stop_reason(), StopReason::sol_proximity);
  EXPECT_GT(b.session->state().attempts.size(), a.session->state().attempts.size());
  // The first attempt went to the problem with the larger eager/SOL gap.
  ASSERT_FALSE(suite.order().empty());
  EXPECT_EQ(suite.order()[0], 1u);
}

TEST(SuiteScheduler, OverlapModeStartsEverySessionAndStillRunsEachToItsStop) {
  auto [near_sol, far_sol] = near_and_far(0.95e-3, 0.2e-3);
  P a(near_sol, 20), b(far_sol, 20);
  FakeClock clock;
  SuiteOptions so;
  so.overlap = true;  // parallel starts, primed compiles, ready sessions first
  SuiteScheduler suite({a.session.get(), b.session.get()}, so, clock);
  int made = suite.run();
  EXPECT_TRUE(a.session->stopped());
  EXPECT_TRUE(b.session->stopped());
  EXPECT_EQ(a.session->stop_reason(), StopReason::sol_proximity);
  EXPECT_EQ(made, static_cast<int>(a.session->state().attempts.size() +
                                   b.session->state().attempts.size()));
  EXPECT_GT(b.session->state().attempts.size(), a.session->state().attempts.size());
}

// Baselines that wait (up to `limit`) for the first compile, and say whether it came first.
class WaitsForACompile final : public Evaluator {
 public:
  WaitsForACompile(Evaluator& inner, const FakeCompiler& compiler, std::chrono::milliseconds limit)
      : inner_(inner), compiler_(compiler), limit_(limit) {}
  Baselines baselines() override {
    const auto until = std::chrono::steady_clock::now() + limit_;
    while (compiler_.calls.load() == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    compiled_first = compiler_.calls.load() > 0;
    return inner_.baselines();
  }
  EvalOutcome evaluate(const Candidate& c, const CompileOutcome& built) override { return inner_.evaluate(c, built); }
  std::atomic<bool> compiled_first{false};

 private:
  Evaluator& inner_;
  const FakeCompiler& compiler_;
  std::chrono::milliseconds limit_;
};

// The built-in strategy, but claiming its opening needs the baselines (as the LLM agent's does).
class NeedsBaselines final : public Strategy {
 public:
  explicit NeedsBaselines(Strategy& inner) : inner_(inner) {}
  std::string name() const override { return "needs-baselines"; }
  std::optional<Candidate> propose(const SearchState& state) override { return inner_.propose(state); }
  void observe(const Attempt& a, const SearchState& state) override { inner_.observe(a, state); }

 private:
  Strategy& inner_;
};

TEST(SuiteScheduler, OverlapModeCompilesTheOpeningWhileTheBaselinesAreMeasured) {
  // Run BK: 80 problems' baselines on one GPU took 299 s, and no compile started before its
  // problem's baselines were in. A strategy that opens without them now compiles meanwhile.
  for (const bool opens_without : {true, false}) {
    SurfaceSpec spec;
    FakeSpace space(spec);
    FakeCompiler compiler(spec);
    FakeEvaluator inner(space, nullptr);
    // The built-in strategy waits its full limit if no compile comes; the other must not see one.
    WaitsForACompile evaluator(inner, compiler, std::chrono::milliseconds(opens_without ? 10000 : 300));
    BuiltinStrategy builtin(space, BuiltinOptions{});
    NeedsBaselines needs(builtin);
    Strategy& strategy = opens_without ? static_cast<Strategy&>(builtin) : needs;
    EXPECT_EQ(strategy.opens_without_baselines(), opens_without);
    FakeClock clock;
    SessionOptions so;
    so.budget.attempts = 6;
    so.t_sol = spec.t_sol;
    SearchSession session(spec.problem, strategy, compiler, evaluator, clock, nullptr, so);
    SuiteOptions suite_options;
    suite_options.overlap = true;
    SuiteScheduler suite({&session}, suite_options, clock);
    EXPECT_EQ(suite.run(), 6);
    EXPECT_EQ(evaluator.compiled_first.load(), opens_without) << strategy.name();
    EXPECT_EQ(inner.baseline_calls, 1);
  }
}

TEST(SuiteScheduler, BreadthSpreadsTheFirstAttemptsOverEveryProblem) {
  // The far problem has all the headroom: alone it takes the pool's attempts after the near
  // problem's first; with breadth 3 the near one gets three before the far one gets a fourth.
  auto [near_sol, far_sol] = near_and_far(0.5e-3, 0.05e-3);
  for (int breadth : {0, 3}) {
    P a(near_sol, 40), b(far_sol, 40);
    FakeClock clock;
    SuiteOptions so{8, 0};
    so.breadth = breadth;
    SuiteScheduler suite({a.session.get(), b.session.get()}, so, clock);
    EXPECT_EQ(suite.run(), 8);
    const auto near = a.session->state().attempts.size();
    const auto far = b.session->state().attempts.size();
    EXPECT_EQ(near + far, 8u);
    if (breadth == 0) {
      EXPECT_LT(near, 3u) << "headroom alone should favour the far problem";
    } else {
      EXPECT_GE(near, 3u);
      EXPECT_GE(far, 3u);
      // The first six attempts alternate between the two (fewest attempts first).
      ASSERT_GE(suite.order().size(), 6u);
      for (size_t i = 2; i < 6; ++i) EXPECT_NE(suite.order()[i], suite.order()[i - 1]) << i;
    }
  }
}

TEST(SuiteScheduler, PoolLimitsTheWholeSuite) {
  P a(SurfaceSpec{}, 40), b(SurfaceSpec{}, 40);
  FakeClock clock;
  SuiteScheduler suite({a.session.get(), b.session.get()}, SuiteOptions{10, 0}, clock);
  EXPECT_EQ(suite.run(), 10);
}

}  // namespace
}  // namespace ucut::search
