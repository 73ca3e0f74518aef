#include "app/headline.h"
#include "app/driver.h"
#include "app/run_report.h"
#include "app/suite_report.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ucut::app {
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

TEST(Headline, FallbacksCountAsOneAndDegenerateProblemsAreExcluded) {
  std::vector<ProblemOutcome> ps = {ok("a", 4, 1, 2, 0.5),   // 4x eager, 2x compile, 50% SOL
                                    ok("b", 2, 2, 2, 1),     // 1x, 1x, 50%
                                    ok("c", 3, 0, 3, 1)};    // no kernel, eager ran: fallback 1x, SOL 1/3
  ps[2].failure = "mismatch";
  ProblemOutcome d = ok("d", 1, 0.001, 1, 0.0005);  // would be 1000x: degenerate, excluded
  d.degenerate = true;
  ps.push_back(d);
  Headline h = headline_compute(ps, {});
  EXPECT_EQ(h.problems, 4);
  EXPECT_EQ(h.counted, 3);
  EXPECT_EQ(h.degenerate, 1);
  EXPECT_EQ(h.correct, 2);
  EXPECT_EQ(h.fallback, 1);
  EXPECT_NEAR(h.geomean_eager, std::cbrt(4.0 * 1.0 * 1.0), 1e-12);
  EXPECT_NEAR(h.geomean_compile, std::cbrt(2.0 * 1.0 * 1.0), 1e-12);
  EXPECT_NEAR(h.geomean_frac_sol, std::cbrt(0.5 * 0.5 * (1.0 / 3)), 1e-12);
  EXPECT_NEAR(h.fast_p["fast_1"], 1.0 / 3, 1e-12);    // b is exactly 1x: not faster
  EXPECT_NEAR(h.fast_p["fast_1.5"], 1.0 / 3, 1e-12);
  EXPECT_NEAR(h.fast_p["fast_2"], 1.0 / 3, 1e-12);
  EXPECT_NEAR(h.at_least_eager, 1.0, 1e-12);          // b at 1x, c the fallback at 1x
  EXPECT_EQ(h.fallbacks.at("mismatch"), 1);
  EXPECT_TRUE(h.failures.empty());
  EXPECT_EQ(h.reference_limited, 0);
  EXPECT_EQ(ps[0].status(), "ok");
  EXPECT_EQ(ps[2].status(), "fallback (mismatch)");
  ps[2].reference_limited = true;  // the failure was the fp32 reference's rounding: still no kernel
  EXPECT_EQ(ps[2].status(), "fallback (mismatch (reference-limited))");
  Headline h2 = headline_compute(ps, {});
  EXPECT_EQ(h2.reference_limited, 1);
  EXPECT_EQ(h2.fallbacks.at("mismatch (reference-limited)"), 1);
  EXPECT_NEAR(h2.geomean_eager, h.geomean_eager, 1e-12);
  EXPECT_NE(headline_render(h2).find("of which reference-limited: 1"), std::string::npos);
  EXPECT_EQ(headline_to_json(h2)["reference_limited"], 1);
  std::string text = headline_render(h);
  EXPECT_NE(text.find("geomean speedup over eager: 1.59x"), std::string::npos) << text;
  EXPECT_NE(text.find("correct kernel: 2/3, PyTorch fallback: 1/3, failed: 0/3"), std::string::npos) << text;
  EXPECT_NE(text.find("fallbacks (the result is PyTorch eager): mismatch 1"), std::string::npos) << text;
  EXPECT_NE(text.find("failures: none"), std::string::npos) << text;
  EXPECT_NE(text.find("at least as fast as eager: 100%"), std::string::npos) << text;
  // Each problem without a kernel is named on its own line, with its attempts and why the search stopped.
  ps[2].attempts = 4;
  ps[2].stop_reason = "space_exhausted";
  ps[2].reference_limited = false;
  text = headline_render(headline_compute(ps, {}));
  EXPECT_NE(text.find("\n  c: fallback (mismatch) after 4 attempts (space_exhausted)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  a: "), std::string::npos);
  EXPECT_EQ(text.find("  d: "), std::string::npos);  // degenerate: excluded, not a failure
}

// Never slower than PyTorch: a correct kernel slower than eager is not the result; PyTorch is, at
// 1.00x (issue: a 0.8x MLP counted 0.8x in the geomean). Without a measured eager there is no
// fallback to speak of: a problem without a kernel is then a failure.
TEST(Headline, AKernelSlowerThanEagerIsAFallbackAtOne) {
  std::vector<ProblemOutcome> ps = {ok("slow", 2, 2.5, 2, 1),   // 0.8x: fallback
                                    ok("fast", 2, 1, 0, 0.5),   // 2x
                                    ok("broken", 0, 0, 0, 0)};  // the reference never ran
  ps[2].failure = "extract_error";
  EXPECT_TRUE(ps[0].kernel_found());
  EXPECT_FALSE(ps[0].correct());
  EXPECT_TRUE(ps[0].fallback());
  EXPECT_DOUBLE_EQ(ps[0].speedup_eager(), 1.0);
  EXPECT_DOUBLE_EQ(ps[0].speedup_compile(), 1.0);
  EXPECT_DOUBLE_EQ(ps[0].frac_sol(), 0.5);  // t_SOL over the eager time the user keeps
  EXPECT_EQ(ps[0].status(), "fallback (slower than eager: best kernel 0.80x)");
  EXPECT_FALSE(ps[2].fallback());
  EXPECT_EQ(ps[2].status(), "extract_error");
  ps[0].time_to_best_s = 10;  // a fallback has no time to best
  Headline h = headline_compute(ps, {});
  EXPECT_EQ(h.correct, 1);
  EXPECT_EQ(h.fallback, 1);
  EXPECT_EQ(h.fallbacks.at("slower than eager"), 1);
  EXPECT_EQ(h.failures.at("extract_error"), 1);
  EXPECT_NEAR(h.geomean_eager, std::cbrt(2.0), 1e-12);
  EXPECT_NEAR(h.at_least_eager, 2.0 / 3, 1e-12);
  EXPECT_EQ(h.time_to_best_counted, 0);
  const nlohmann::json j = headline_to_json(h);
  EXPECT_EQ(j["fallback"], 1);
  EXPECT_EQ(j["fallbacks"]["slower than eager"], 1);
  // A kernel exactly as fast as eager stays the result (not slower).
  EXPECT_TRUE(ok("tie", 2, 2, 0, 0).correct());
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

// The ceiling: every problem at its contract SOL (t_sol_contract). A failed problem still has one
// (it bounds what a search could reach); a problem without one, and a degenerate one, enter none.
TEST(Headline, CeilingIsEveryProblemAtItsFloor) {
  std::vector<ProblemOutcome> ps = {ok("a", 4, 2, 2, 1),    // 3 x t_SOL: 4/3 over eager, 2/3 over compile
                                    ok("b", 2, 1, 0, 0.5),  // = t_SOL: 4x eager, no compile time
                                    ok("c", 9, 0, 9, 1),    // fallback, 1: 9x, 9x
                                    ok("e", 5, 1, 5, 1)};   // unknown: left out
  ps[0].t_sol_contract = 3;
  ps[1].t_sol_contract = 0.5;
  ps[2].failure = "mismatch";
  ps[2].t_sol_contract = 1;
  ProblemOutcome d = ok("d", 1, 0.001, 1, 0.0005);
  d.degenerate = true;
  d.t_sol_contract = 0.0005;
  ps.push_back(d);
  EXPECT_NEAR(ps[0].ceiling_eager(), 4.0 / 3, 1e-12);
  EXPECT_NEAR(ps[0].ceiling_frac_sol(), 1.0 / 3, 1e-12);
  EXPECT_EQ(ps[1].ceiling_compile(), 0);
  EXPECT_EQ(ps[3].ceiling_eager(), 0);
  Headline h = headline_compute(ps, {});
  EXPECT_EQ(h.ceiling_counted, 3);
  EXPECT_NEAR(h.ceiling_eager, std::cbrt(4.0 / 3 * 4.0 * 9.0), 1e-12);
  EXPECT_NEAR(h.ceiling_compile, std::sqrt(2.0 / 3 * 9.0), 1e-12);
  EXPECT_NEAR(h.ceiling_frac_sol, std::cbrt(1.0 / 3), 1e-12);
  const std::string text = headline_render(h);
  EXPECT_NE(text.find("ceiling under the contract (every problem at the speed of light of the precision its "
                      "tolerance leaves; 3 problems): 3.63x over eager, 2.45x over torch.compile, 69% of SOL"),
            std::string::npos)
      << text;
  EXPECT_EQ(headline_to_json(h)["ceiling_counted"], 3);  // flat: the HTML report lists flat figures
  // No contract SOL known anywhere: no ceiling line.
  EXPECT_EQ(headline_render(headline_compute({ok("a", 2, 1, 0, 0)}, {})).find("ceiling"), std::string::npos);
}

// report.md's speed-of-light line names the floor only where the tolerance raised it, and the most
// any correct kernel can gain over eager once eager is timed.
TEST(RunReport, SolLineNamesTheFloorAndTheMostAKernelCanGain) {
  RunReport r;
  r.t_sol = 334e-6;
  r.t_sol_contract = 334e-6;
  EXPECT_EQ(run_report_sol_line(r), "- speed of light: 334.00 us\n");
  r.state.baselines.eager_s = 2.672e-3;
  EXPECT_EQ(run_report_sol_line(r), "- speed of light: 334.00 us; ceiling 8.00x over eager (a correct kernel at that speed)\n");
  r.t_sol_contract = 1.002e-3;
  EXPECT_EQ(run_report_sol_line(r),
            "- speed of light: 334.00 us; 1.002 ms at the precision the tolerance leaves (the policy's cannot meet it: "
            "the precision note says which); ceiling 2.67x over eager (a correct kernel at that speed)\n");
  EXPECT_NE(run_report_markdown(r).find("2.67x"), std::string::npos);
  EXPECT_EQ(run_report_json(r)["t_sol_contract_s"], 1.002e-3);
  EXPECT_EQ(run_report_outcome(r).t_sol_contract, 1.002e-3);
}

// The live progress line shows the ceiling beside the best once eager and the contract SOL are known.
TEST(Progress, LineShowsTheBestAgainstTheCeiling) {
  search::SearchState s;
  s.baselines.eager_s = 0.0108;
  search::Attempt a;
  a.status = RunStatus::ok;
  a.cand.name = "gemm_f32x3s_t128x256x32";
  a.cand.origin = "rank";
  a.time_s = 0.005;
  a.speedup = 2.16;
  a.frac_sol = 0.27;
  s.attempts.push_back(a);
  s.best = 0;
  EXPECT_EQ(progress_line(a, s, 40, 0.004), "[  1/40] best 2.16x of 2.70x  27% SOL | gemm_f32x3s_t128x256x32 (rank) 5 ms");
  EXPECT_EQ(progress_line(a, s, 40), "[  1/40] best 2.16x  27% SOL | gemm_f32x3s_t128x256x32 (rank) 5 ms");
  s.baselines.eager_s = 0;  // eager not timed (yet): no ceiling
  EXPECT_EQ(progress_line(a, s, 0, 0.004).find(" of "), std::string::npos);
}

// A correct kernel slower than eager is reported as such: the user keeps PyTorch.
TEST(RunReport, ABestSlowerThanEagerSaysKeepPyTorch) {
  RunReport r;
  r.problem = "p";
  search::Attempt a;
  a.status = RunStatus::ok;
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

// The best kernel's per-stage profile becomes "Where the time goes", each stage beside its own
// floor (the program-level estimate of the best program on the report's GPU).
TEST(RunReport, WhereTheTimeGoesSetsEachStageBesideItsFloor) {
  RunReport r;
  r.problem = "p";
  r.gpu = "h100-sxm";
  search::Attempt a;
  a.status = RunStatus::ok;
  a.cand.name = "reduce+elementwise";
  a.time_s = 0.003;
  a.speedup = 2;
  r.state.attempts.push_back(a);
  r.state.best = 0;
  EXPECT_EQ(run_report_stage_times(r), "");  // no profile, no section
  EXPECT_EQ(run_report_markdown(r).find("Where the time goes"), std::string::npos);
  r.state.attempts[0].stage_ms = {{"s0", "rowwise", "rowwise_th256", 0.5}, {"s1", "elementwise", "elementwise_th128_v2", 2.5}};
  // no program: the times and shares only
  std::string md = run_report_stage_times(r);
  EXPECT_NE(md.find("| s0 | rowwise | `rowwise_th256` | 0.5 | 17% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| s1 | elementwise | `elementwise_th128_v2` | 2.5 | 83% |"), std::string::npos) << md;
  EXPECT_NE(md.find("sum to 3 ms (the timed median: 3 ms)"), std::string::npos) << md;
  EXPECT_EQ(md.find("floor"), std::string::npos) << md;
  // with the program: each stage's floor by the stage's name (64 MiB in and out a stage: tens of
  // microseconds on an H100); a stage the program does not name leaves the floors out
  r.state.attempts[0].cand.program = R"(ucut 1
in x : f32[4096, 4096]
out y : f32[4096, 4096]
tmp m : f32[4096]
stage m = rowwise mean(x) {
}
stage y = elementwise {
  body {
    y = x - m[row]
  }
}
)";
  md = run_report_stage_times(r);
  EXPECT_NE(md.find("| floor ms | % of floor |"), std::string::npos) << md;
  EXPECT_NE(md.find("The most time above a floor: stage s1 (elementwise), 2.5 ms against its floor of"),
            std::string::npos) << md;
  EXPECT_NE(run_report_markdown(r).find("## Where the time goes (the best kernel, per stage)"), std::string::npos);
  // the outcome keeps that stage for the suite's report
  const ProblemOutcome::StageGap w = run_report_outcome(r).worst_stage;
  EXPECT_EQ(w.stage, "s1");
  EXPECT_EQ(w.ms, 2.5);
  EXPECT_GT(w.floor_ms, 0);
  EXPECT_DOUBLE_EQ(w.share, 2.5 / 3);
  EXPECT_EQ(run_report_json(r)["best"]["worst_stage"]["stage"], "s1");  // report.json, for the Python API
  r.state.attempts[0].stage_ms[1].stage = "s7";
  EXPECT_EQ(run_report_stage_times(r).find("floor"), std::string::npos);
  EXPECT_EQ(run_report_outcome(r).worst_stage.stage, "");  // no floors: no worst stage
  EXPECT_TRUE(run_report_json(r)["best"]["worst_stage"].is_null());
}

// The suite's report lists each profiled kernel's worst stage, the largest share of a kernel's
// time above a floor first; report.json has it per problem (null where none).
TEST(SuiteReport, WhereTheTimeGoesListsEachKernelsWorstStage) {
  std::vector<ProblemOutcome> ps = {ok("a", 2, 1, 0, 0.5), ok("b", 2, 1, 0, 0.5), ok("c", 2, 1, 0, 0.5)};
  ps[0].worst_stage = {"s3", "elementwise", "elementwise_th128_v2", 1.0, 0.5, 0.25};  // 12.5% above
  ps[1].worst_stage = {"s0_p1", "gemm", "gemm_tf32_t128x128", 4.0, 1.0, 0.8};         // 60% above
  Headline h = headline_compute(ps, {});
  const std::string md = suite_report_markdown(false, headline_render(h), h, ps);
  const size_t sec = md.find("## Where the time goes");
  ASSERT_NE(sec, std::string::npos) << md;
  const size_t b = md.find("| b | s0_p1 | gemm | `gemm_tf32_t128x128` | 4 | 80% | 1 | 60% of the kernel |", sec);
  const size_t a = md.find("| a | s3 | elementwise | `elementwise_th128_v2` | 1 | 25% | 0.5 | 12% of the kernel |", sec);
  EXPECT_NE(b, std::string::npos) << md;
  EXPECT_NE(a, std::string::npos) << md;
  EXPECT_LT(b, a);
  EXPECT_EQ(md.find("| c |", sec), std::string::npos);
  const auto j = suite_report_json("s", false, h, ps);
  EXPECT_EQ(j["problems"][1]["worst_stage"]["stage"], "s0_p1");
  EXPECT_EQ(j["problems"][1]["worst_stage"]["floor_ms"], 1.0);
  EXPECT_TRUE(j["problems"][2]["worst_stage"].is_null());
  ps[0].worst_stage = ps[1].worst_stage = {};
  EXPECT_EQ(suite_report_markdown(false, "", h, ps).find("Where the time goes"), std::string::npos);
}

// A simulated suite (issue 29 item 1): its first line says nothing ran, its costs are the model's,
// labelled so, beside the seconds the run really took; report.json says the same.
TEST(Headline, SimulatedSaysSoAndNeverReportsModelledCostsAsMeasured) {
  CostFigures cost;
  cost.wall_s = 56;
  cost.compiled = 100;
  cost.compile_s = 4500;
  cost.gpu_s = 50;
  Headline h = headline_compute({ok("a", 2, 1, 0, 0)}, cost);
  const std::string real = headline_render(h);
  EXPECT_EQ(real.find("SIMULATED"), std::string::npos);
  EXPECT_NE(real.find("cost: wall 56 s, 100 compiled (4500 s), GPU 50 s"), std::string::npos) << real;
  h.simulated = true;
  h.run_wall_s = 0.09;
  const std::string text = headline_render(h);
  EXPECT_EQ(text.rfind("SIMULATED (model surface, nothing ran): every figure below comes from the synthetic cost "
                       "model, not a GPU\n", 0), 0u) << text;
  EXPECT_NE(text.find("geomean speedup over eager: 2.00x (fallbacks and failures count as 1.0x), simulated\n"), std::string::npos);
  EXPECT_NE(text.find("cost: modelled, nothing compiled or ran (wall 56 s, 100 compiles of 4500 s, GPU 50 s on the "
                      "model's clock); this run took 0.09 s\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("cost: wall"), std::string::npos);
  const auto j = headline_to_json(h);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["cost"]["modelled"], true);
  EXPECT_DOUBLE_EQ(j["cost"]["run_wall_s"].get<double>(), 0.09);
  EXPECT_EQ(headline_to_json(headline_compute({ok("a", 2, 1, 0, 0)}, cost))["cost"]["modelled"], false);
}

}  // namespace
}  // namespace ucut::app

namespace ucut::app {
namespace {

// The reference-class pass (docs/eval-contract.md §1): a correct kernel that passed only by being
// no further from float64 than the fp32 reference is counted and named in every headline (text,
// report.json, the suite's report.md and report.json); a kernel slower than eager is not the result.
TEST(Headline, CountsAndNamesThePassesByFloat64) {
  std::vector<ProblemOutcome> ps = {ok("cumsum", 4, 1, 0, 0.5), ok("gemm", 2, 1, 0, 0.5), ok("slow", 1, 2, 0, 0.5),
                                    ok("plain", 2, 1, 0, 0.5)};
  ps[0].passed_by_float64 = ps[1].passed_by_float64 = ps[2].passed_by_float64 = true;
  Headline h = headline_compute(ps, {});
  EXPECT_EQ(h.passed_by_float64, 2);
  EXPECT_EQ(h.float64_passes, (std::vector<std::string>{"cumsum", "gemm"}));
  const std::string text = headline_render(h);
  EXPECT_NE(text.find("passed by float64 (reference-class pass: outside the tolerance of the fp32 reference, no "
                      "further from float64 than it): 2 of 3 correct kernels: cumsum, gemm\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(headline_to_json(h)["passed_by_float64"], 2);
  EXPECT_EQ(headline_to_json(h)["float64_passes"], nlohmann::json({"cumsum", "gemm"}));
  const std::string md = suite_report_markdown(false, text, h, ps);
  EXPECT_NE(md.find("| cumsum | ok (passed by float64) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| plain | ok |"), std::string::npos) << md;
  const auto j = suite_report_json("s", false, h, ps);
  EXPECT_EQ(j["problems"][0]["passed_by"], "float64");
  EXPECT_EQ(j["problems"][2]["passed_by"], "");
  EXPECT_EQ(j["problems"][3]["passed_by"], "allclose");
  EXPECT_NE(headline_render(headline_compute({ok("a", 2, 1, 0, 0)}, {})).find("passed by float64 (reference-class "
                                                                               "pass): none\n"),
            std::string::npos);
  // A search's report takes it from its best attempt.
  RunReport r;
  search::Attempt a;
  a.status = RunStatus::ok;
  a.time_s = 0.001;
  a.passed_by_float64 = true;
  r.state.attempts.push_back(a);
  r.state.best = 0;
  EXPECT_TRUE(run_report_outcome(r).passed_by_float64);
  // and each evaluation's GPU span from its end (at_s) and GPU seconds; none for an attempt without
  r.state.attempts[0].at_s = 12;
  r.state.attempts[0].gpu_s = 2;
  search::Attempt compile_error;
  compile_error.status = RunStatus::compile_error;
  compile_error.at_s = 20;
  r.state.attempts.push_back(compile_error);
  const auto spans = run_report_outcome(r).gpu_spans;
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_DOUBLE_EQ(spans[0].first, 10);
  EXPECT_DOUBLE_EQ(spans[0].second, 12);
}

// The figures that say whether the machine was kept busy: each problem's first measured attempt
// (earliest, median, last, and problems that never got one), nvcc core-seconds per evaluated attempt, the
// stored units reused, and the compile slots' and GPU's busy shares.
TEST(Headline, FirstAttemptsAndUtilisation) {
  std::vector<ProblemOutcome> ps = {ok("a", 4, 1, 2, 0.5), ok("b", 2, 2, 2, 1), ok("c", 3, 0, 3, 1)};
  ps[0].first_s = 12;
  ps[0].attempts = 5;
  ps[1].first_s = 50;
  ps[1].attempts = 3;
  ps[2].failure = "no_attempt";  // never got one
  CostFigures cost;
  cost.wall_s = 400;
  cost.gpu_s = 320;
  cost.nvcc_jobs = 40;
  cost.nvcc_s = 5760;
  cost.compile_slots = 16;
  cost.attempts = 8;
  cost.stored_built = 10;
  cost.stored_reused = 30;
  Headline h = headline_compute(ps, cost);
  EXPECT_DOUBLE_EQ(h.min_first_s, 12);
  EXPECT_DOUBLE_EQ(h.median_first_s, 31);
  EXPECT_DOUBLE_EQ(h.max_first_s, 50);
  EXPECT_EQ(h.without_attempt, 1);
  EXPECT_DOUBLE_EQ(headline_compile_busy(cost), 0.9);
  EXPECT_DOUBLE_EQ(headline_gpu_busy(cost), 0.8);
  const std::string text = headline_render(h);
  EXPECT_NE(text.find("first measured attempt: earliest 12 s, median 31 s, last 50 s into the search; 1 problem without any attempt; "
                      "attempts a problem: median 3, 3 or more on 2 of 3"),
            std::string::npos) << text;
  EXPECT_NE(text.find("40 nvcc jobs, 5760 core-s (720.0 per evaluated attempt), stored units 10 built / 30 taken from "
                      "the store; compile slots 90% busy of 16 (no candidate waited for one), GPU 80% busy"),
            std::string::npos) << text;
  // Over the search from its first measurement: no window without the search's length and GPUs.
  EXPECT_EQ(headline_gpu_busy_search(h), 0.0);
  EXPECT_EQ(text.find("of the search from its first measurement"), std::string::npos) << text;
  // Evaluations [10, 40], [40, 70], [90, 100] and one ending after the search (clipped at 100):
  // 70 of the 90 s from the first start, on one GPU; on two GPUs half that.
  ps[0].gpu_spans = {{10, 40}, {40, 70}};
  ps[1].gpu_spans = {{90, 100}, {100, 130}};
  Headline s = headline_compute(ps, cost);
  s.cost.search_s = 100;
  s.cost.gpus = 1;
  double window = 0;
  EXPECT_DOUBLE_EQ(headline_gpu_busy_search(s, &window), 70.0 / 90);
  EXPECT_DOUBLE_EQ(window, 90);
  EXPECT_NE(headline_render(s).find("GPU 80% busy of the wall, 78% of the search from its first measurement (90 s)"),
            std::string::npos) << headline_render(s);
  EXPECT_DOUBLE_EQ(headline_to_json(s)["cost"]["gpu_busy_search"].get<double>(), 70.0 / 90);
  s.cost.gpus = 2;
  EXPECT_DOUBLE_EQ(headline_gpu_busy_search(s), 35.0 / 90);
  // The slots while a candidate waited for one (the compile gate's usage): 60 s, 15 of 16 held.
  Headline w = h;
  w.cost.compile_waiting_s = 60;
  w.cost.compile_slot_s_waiting = 15 * 60;
  EXPECT_DOUBLE_EQ(headline_compile_busy_waiting(w.cost), 15.0 / 16);
  EXPECT_NE(headline_render(w).find("compile slots 90% busy of 16 (94% while a candidate waited for one, 60 s), GPU 80%"),
            std::string::npos) << headline_render(w);
  EXPECT_DOUBLE_EQ(headline_to_json(w)["cost"]["compile_slots_busy_while_waiting"].get<double>(), 15.0 / 16);
  const auto j = headline_to_json(h);
  EXPECT_EQ(j["cost"]["nvcc_core_s_per_attempt"], 720.0);
  EXPECT_EQ(j["without_attempt"], 1);
  EXPECT_EQ(text.find("GPU workers:"), std::string::npos) << "not measured: not printed";
  // The workers' side: held 380 s, of which 45 loads took 30 s and the evaluations 320 s.
  h.cost.worker_busy_s = 380;
  h.cost.worker_load_s = 30;
  h.cost.worker_loads = 45;
  h.cost.worker_baseline_s = 25;
  EXPECT_NE(headline_render(h).find("GPU workers: held 380 s: 45 problem loads (30 s), evaluations 320 s, baselines "
                                    "25 s, the rest 5 s"),
            std::string::npos) << headline_render(h);
  EXPECT_EQ(headline_to_json(h)["cost"]["worker_loads"], 45);
  // Loads the worker answered from a problem it kept are itemized.
  h.cost.worker_kept_loads = 30;
  h.cost.worker_kept_load_s = 0.6;
  EXPECT_NE(headline_render(h).find("45 problem loads (30 s; 30 of them kept from before, 0.6 s), evaluations"),
            std::string::npos) << headline_render(h);
  EXPECT_EQ(headline_to_json(h)["cost"]["worker_kept_loads"], 30);
  h.cost.worker_kept_loads = 0;
  h.cost.worker_kept_load_s = 0;
  // The evaluations by phase, largest first, and what no phase holds.
  h.cost.gpu_phases = {{"checks", 120}, {"candidate", 60}, {"reference", 90}, {"timing", 40}};
  EXPECT_NE(headline_render(h).find("evaluations 320 s (checks 120, reference 90, candidate 60, timing 40, other 10), "
                                    "baselines 25 s"),
            std::string::npos) << headline_render(h);
  EXPECT_EQ(headline_to_json(h)["cost"]["gpu_phases"]["checks"], 120.0);
}

}  // namespace
}  // namespace ucut::app
