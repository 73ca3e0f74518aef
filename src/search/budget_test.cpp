#include "search/budget.h"

#include <gtest/gtest.h>

namespace ucut::search {
namespace {

StopInputs base() {
  StopInputs in;
  in.attempts = 5;
  in.t_sol = 1.0;
  in.t_eager = 4.0;
  return in;
}

TEST(StopRules, ReferenceLimitedFiresOnlyWithNothingCorrect) {
  StopRules r;  // reference_limited = 2
  Budget b{100, 0, 0};
  StopInputs in = base();
  in.reference_limited = 1;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  in.reference_limited = 2;
  EXPECT_EQ(stop_check(b, r, in), StopReason::reference_limited);
  in.t_best = 3.0;  // something passed after all: the search goes on
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  in.t_best.reset();
  r.reference_limited = 0;  // disabled
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  EXPECT_STREQ(stop_reason_name(StopReason::reference_limited), "reference_limited");
}

TEST(StopRules, SolProximityFiresWithinEpsOnlyWhenBeatingBaseline) {
  StopRules r{0.25, 0};
  Budget b{100, 0, 0};
  StopInputs in = base();
  in.t_best = 1.25;  // exactly (1 + eps) * t_SOL
  EXPECT_EQ(stop_check(b, r, in), StopReason::sol_proximity);
  in.t_best = 1.26;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  // Near SOL but slower than eager (a baseline that is itself near SOL): keep going.
  in.t_best = 1.1;
  in.t_eager = 1.05;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  // Unknown eager time: nothing beats it, the rules stay off.
  in.t_eager = 0;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
}

TEST(StopRules, StagnationNeedsWAttemptsAndABestThatBeatsEager) {
  StopRules r{-1, 12};
  Budget b{100, 0, 0};
  StopInputs in = base();
  in.since_improvement = 12;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);  // nothing correct yet
  in.t_best = 3.0;
  EXPECT_EQ(stop_check(b, r, in), StopReason::stagnation);
  in.since_improvement = 11;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  in.since_improvement = 20;
  in.t_best = 5.0;  // correct but slower than eager
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
  r.stagnation = 0;  // disabled
  in.t_best = 3.0;
  EXPECT_EQ(stop_check(b, r, in), StopReason::none);
}

TEST(StopRules, BudgetsFireWhateverTheBest) {
  StopRules r{0.25, 12};
  StopInputs in = base();
  in.attempts = 40;
  EXPECT_EQ(stop_check(Budget{40, 0, 0}, r, in), StopReason::attempt_budget);
  EXPECT_EQ(stop_check(Budget{0, 0, 0}, r, in), StopReason::none);
  in.elapsed_s = 1800;
  EXPECT_EQ(stop_check(Budget{0, 1800, 0}, r, in), StopReason::time_budget);
  in.tokens = 10;
  EXPECT_EQ(stop_check(Budget{0, 0, 10}, r, in), StopReason::token_budget);
  EXPECT_STREQ(stop_reason_name(StopReason::token_budget), "token_budget");
}

}  // namespace
}  // namespace ucut::search
