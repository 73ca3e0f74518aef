#include "report/headline_figures.h"

#include <gtest/gtest.h>

namespace ucut::report {
namespace {

app::ProblemOutcome ok(const std::string& n, double eager, double best) {
  app::ProblemOutcome p;
  p.name = n;
  p.eager_s = eager;
  p.best_s = best;
  p.compile_s = eager * 0.8;
  p.t_sol = best * 0.75;
  p.t_sol_contract = best * 0.6;
  return p;
}

std::string value_of(const std::vector<HtmlFigure>& f, const std::string& label) {
  for (const auto& x : f)
    if (x.label == label) return x.value;
  return "(missing " + label + ")";
}

// Issue 29 item 9: the HTML headline once showed raw keys and floats
// ("ceiling_geomean_speedup_compile | 2.6179502457388795").
TEST(HeadlineFigures, HumanLabelsAndRoundedValues) {
  auto bad = ok("b", 2e-3, 4e-3);
  bad.failure = "compile_error";  // eager measured: the PyTorch fallback
  auto broken = ok("c", 0, 0);
  broken.failure = "extract_error";  // nothing measured: a failure
  app::CostFigures cost;
  cost.wall_s = 56;
  cost.compiled = 100;
  cost.compile_s = 4500;
  cost.gpu_s = 50;
  const auto h = app::headline_compute({ok("a", 3e-3, 1.146e-3), bad, broken}, cost);
  const auto f = headline_figures(h);
  for (const auto& x : f) EXPECT_EQ(x.label.find('_'), std::string::npos) << x.label;
  EXPECT_EQ(value_of(f, "Correct kernel"), "1 of 3");
  EXPECT_EQ(value_of(f, "PyTorch fallback"), "1 of 3");
  EXPECT_EQ(f[2].note, "the result is PyTorch itself, counted as 1x: did not compile 1");
  EXPECT_EQ(value_of(f, "Speedup over PyTorch eager"), "1.38x");  // cbrt(2.618 x 1 x 1)
  EXPECT_EQ(value_of(f, "Faster than eager"), "33.3% / 33.3% / 33.3%");
  EXPECT_EQ(value_of(f, "At least as fast as eager"), "66.7%");
  EXPECT_EQ(value_of(f, "Failed"), "could not be extracted 1");
  EXPECT_EQ(value_of(f, "Cost"), "wall 56.0 s, 100 kernels compiled (75.0 min), GPU 50.0 s");
  EXPECT_EQ(value_of(f, "Median time to best"), "(missing Median time to best)");  // none recorded
}

TEST(HeadlineFigures, SimulatedCostsAreLabelledModelled) {
  app::CostFigures cost;
  cost.wall_s = 56;
  auto h = app::headline_compute({ok("a", 3e-3, 1e-3)}, cost);
  h.simulated = true;
  h.run_wall_s = 0.09;
  const auto f = headline_figures(h);
  EXPECT_EQ(value_of(f, "Cost"), "(missing Cost)");
  EXPECT_EQ(f.back().label, "Cost (modelled)");
  EXPECT_EQ(f.back().note, "the model's clock: nothing compiled or ran; this run took 90.0 ms");
}

// A problem's row names its kernel's stage most above its floor, in the page's time format.
TEST(HeadlineFigures, TheRowNamesTheStageMostAboveItsFloor) {
  app::ProblemOutcome p = ok("mamba", 2.0, 1.0);
  EXPECT_EQ(html_problem(p, true).worst_stage, "");
  p.worst_stage = {"s9", "gemm", "gemm_f32x3_t64x128x32_s4_w1_a4", 2.1, 0.2, 0.3};
  EXPECT_EQ(html_problem(p, true).worst_stage, "s9 gemm: 2.10 ms, floor 200 us");
}

}  // namespace
}  // namespace ucut::report
