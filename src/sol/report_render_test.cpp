// The two printers of a SolReport carry the same numbers: the text report's lines and the JSON
// fields for a hand-computed fixture (gemm_square on H200: 277.82 us under tf32).
#include "sol/report_render.h"

#include <gtest/gtest.h>

#include "problem/problem.h"

namespace ucut::sol {
namespace {

SolReport gemm_square(const std::optional<Calibration>& cal = std::nullopt) {
  auto p = problem::problem_load(std::string(UCUTLASS_SOURCE_DIR) + "/tests/data/problems/gemm_square.json");
  EXPECT_TRUE(p.ok());
  return sol_estimate(*hw_lookup("h200"), *sol_problem_cost(*p), Policy::tf32, cal);
}

TEST(SolReportRender, Text) {
  std::string t = sol_report_text(gemm_square(), *hw_lookup("h200"));
  EXPECT_NE(t.find("SOL of gemm_square on h200 (policy tf32)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  bytes      201.3 MB (every input, parameter and output moved once)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  intensity  682.67 FLOP/B vs ridge 103.06 FLOP/B (tf32, datasheet): compute-bound\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("* tf32    494.7 TFLOP/s    277.82 us     41.94 us    277.82 us  compute   <- chosen\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("  exact   164.9 TFLOP/s    833.47 us"), std::string::npos) << t;
  EXPECT_NE(t.find("calibrated peaks: none for this GPU"), std::string::npos) << t;
  EXPECT_NE(t.find("t_SOL = 277.82 us (tf32, datasheet peaks, compute-bound)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  100.0%  ops[0] matmul (line 10)  277.82 us (compute-bound)\n"), std::string::npos) << t;
}

TEST(SolReportRender, JsonMatchesTheStruct) {
  Calibration c;
  c.copy_bw = 4.2e12;
  c.gemm_bf16 = c.gemm_fp16 = 795e12;
  c.gemm_tf32 = 389e12;
  c.gemm_fp32 = 50e12;
  SolReport r = gemm_square(c);
  auto j = sol_report_json(r, *hw_lookup("h200"));
  EXPECT_EQ(j["schema"], "ucutlass.sol/1");
  EXPECT_EQ(j["flops"]["tensor_f32"], 137438953472);
  EXPECT_EQ(j["min_bytes"], 201326592);
  EXPECT_EQ(j["by_policy"].size(), 3u);
  EXPECT_EQ(j["by_policy"][0]["policy"], "exact");
  EXPECT_DOUBLE_EQ(j["bound"]["t_sol_s"].get<double>(), r.bound.t_sol);
  EXPECT_EQ(j["calibrated"]["origin"], "calibrated");
  EXPECT_DOUBLE_EQ(j["t_sol_s"].get<double>(), 137438953472.0 / 389e12);  // the calibrated bound
  EXPECT_EQ(j["t_sol_origin"], "calibrated");
  EXPECT_EQ(j["top_ops"][0]["op"], "matmul");
  EXPECT_EQ(j["gpu"]["name"], "h200");
}

}  // namespace
}  // namespace ucut::sol
