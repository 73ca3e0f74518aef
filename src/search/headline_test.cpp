#include "search/headline.h"
#include "search/run_report.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ucut::search {
namespace {

ProblemOutcome ok(const std::string& n, double eager, double best, double compile, double sol) {
  ProblemOutcome p;
  p.name = n;
  p.eager_s = eager;
  p.best_s = best;
  p.compile_s = compile;
  p.t_sol = sol;
  return p;
}

TEST(Headline, FailuresCountAsOneAndDegenerateProblemsAreExcluded) {
  std::vector<ProblemOutcome> ps = {ok("a", 4, 1, 2, 0.5),   // 4x eager, 2x compile, 50% SOL
                                    ok("b", 2, 2, 2, 1),     // 1x, 1x, 50%
                                    ok("c", 3, 0, 3, 1)};    // failed: 1x, SOL 1/3
  ps[2].failure = "mismatch";
  ProblemOutcome d = ok("d", 1, 0.001, 1, 0.0005);  // would be 1000x: degenerate, excluded
  d.degenerate = true;
  ps.push_back(d);
  Headline h = headline_compute(ps, {});
  EXPECT_EQ(h.problems, 4);
  EXPECT_EQ(h.counted, 3);
  EXPECT_EQ(h.degenerate, 1);
  EXPECT_EQ(h.correct, 2);
  EXPECT_NEAR(h.geomean_eager, std::cbrt(4.0 * 1.0 * 1.0), 1e-12);
  EXPECT_NEAR(h.geomean_compile, std::cbrt(2.0 * 1.0 * 1.0), 1e-12);
  EXPECT_NEAR(h.geomean_frac_sol, std::cbrt(0.5 * 0.5 * (1.0 / 3)), 1e-12);
  EXPECT_NEAR(h.fast_p["fast_1"], 1.0 / 3, 1e-12);    // b is exactly 1x: not faster
  EXPECT_NEAR(h.fast_p["fast_1.5"], 1.0 / 3, 1e-12);
  EXPECT_NEAR(h.fast_p["fast_2"], 1.0 / 3, 1e-12);
  EXPECT_EQ(h.failures.at("mismatch"), 1);
  EXPECT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.reference_limited, 0);
  EXPECT_EQ(ps[0].status(), "ok");
  EXPECT_EQ(ps[2].status(), "mismatch");
  ps[2].reference_limited = true;  // the failure was the fp32 reference's rounding: still a failure
  EXPECT_EQ(ps[2].status(), "mismatch (reference-limited)");
  Headline h2 = headline_compute(ps, {});
  EXPECT_EQ(h2.reference_limited, 1);
  EXPECT_EQ(h2.failures.at("mismatch"), 1);
  EXPECT_NEAR(h2.geomean_eager, h.geomean_eager, 1e-12);
  EXPECT_NE(headline_render(h2).find("of which reference-limited: 1"), std::string::npos);
  EXPECT_EQ(headline_to_json(h2)["reference_limited"], 1);
  std::string text = headline_render(h);
  EXPECT_NE(text.find("geomean speedup over eager: 1.59x"), std::string::npos) << text;
  EXPECT_NE(text.find("failures: mismatch 1"), std::string::npos);
  // Each failure is named on its own line, with its attempts and why the search stopped.
  ps[2].attempts = 4;
  ps[2].stop_reason = "space_exhausted";
  ps[2].reference_limited = false;
  text = headline_render(headline_compute(ps, {}));
  EXPECT_NE(text.find("\n  c: mismatch after 4 attempts (space_exhausted)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  a: "), std::string::npos);
  EXPECT_EQ(text.find("  d: "), std::string::npos);  // degenerate: excluded, not a failure
}

// Issue 6's time to best: the median over correct problems with a recorded time (a failure and
// a journal without times are left out), even counts averaging the middle two.
TEST(Headline, MedianTimeToBestOverCorrectProblems) {
  std::vector<ProblemOutcome> ps = {ok("a", 2, 1, 0, 0), ok("b", 2, 1, 0, 0), ok("c", 2, 1, 0, 0),
                                    ok("d", 2, 0, 0, 0), ok("e", 2, 1, 0, 0)};
  ps[0].time_to_best_s = 300;
  ps[1].time_to_best_s = 60;
  ps[2].time_to_best_s = 900;
  ps[3].failure = "mismatch";
  ps[3].time_to_best_s = 5;  // not correct: ignored
  Headline h = headline_compute(ps, {});  // e has no time (an older journal)
  EXPECT_EQ(h.time_to_best_counted, 3);
  EXPECT_DOUBLE_EQ(h.median_time_to_best_s, 300);
  EXPECT_NE(headline_render(h).find("median time to best: 5.0 min (3 correct problems"), std::string::npos)
      << headline_render(h);
  EXPECT_EQ(headline_to_json(h)["median_time_to_best_s"], 300);
  ps[4].time_to_best_s = 120;
  EXPECT_DOUBLE_EQ(headline_compute(ps, {}).median_time_to_best_s, 210);
  // None recorded: no line.
  EXPECT_EQ(headline_render(headline_compute({ok("a", 2, 1, 0, 0)}, {})).find("time to best"), std::string::npos);
}

TEST(Headline, NoTorchCompileTimesMeansNotMeasured) {
  Headline h = headline_compute({ok("a", 2, 1, 0, 0)}, {});
  EXPECT_EQ(h.compile_counted, 0);
  EXPECT_NE(headline_render(h).find("torch.compile: not measured"), std::string::npos);
  EXPECT_EQ(h.geomean_frac_sol, 0);
}

// A correct kernel slower than eager is reported as such: the user keeps PyTorch.
TEST(RunReport, ABestSlowerThanEagerSaysKeepPyTorch) {
  RunReport r;
  r.problem = "p";
  Attempt a;
  a.status = AttemptStatus::ok;
  a.cand.name = "k";
  a.time_s = 0.010;
  a.speedup = 0.9;
  r.state.attempts.push_back(a);
  r.state.best = 0;
  EXPECT_NE(run_report_markdown(r).find("0.90x over eager, 0% of SOL (attempt 1); slower than PyTorch eager: keep PyTorch"),
            std::string::npos)
      << run_report_markdown(r);
  r.state.attempts[0].speedup = 1.2;
  EXPECT_EQ(run_report_markdown(r).find("keep PyTorch"), std::string::npos);
}

}  // namespace
}  // namespace ucut::search
