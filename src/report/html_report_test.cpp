#include "report/html_report.h"

#include <gtest/gtest.h>

namespace ucut::report {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

HtmlReport sample() {
  HtmlReport r;
  r.title = "bench <suite>";
  r.figures = {{"geomean speedup over eager", "2.10x"}};
  HtmlProblem a{"gemm_bias_gelu", 3.2, 2.0, 0.71, "ok", "tf32_128x256x64", 12, "stagnation", {1, 2.5, 3.2}};
  HtmlProblem b{"softmax<&>", 1.0, 0, 0.2, "mismatch", "", 40, "attempt_budget", {1, 1, 1}};
  r.problems = {a, b};
  return r;
}

TEST(HtmlReport, PageHoldsThreeInlineSvgPlotsAndNoScript) {
  std::string page = html_render(sample());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<svg "), 3u);
  EXPECT_EQ(count(page, "</svg>"), 3u);
  EXPECT_EQ(count(page, "<rect class=\"bar\""), 4u);       // 2 problems x 2 bar charts
  EXPECT_EQ(count(page, "<polyline class=\"trace\""), 2u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("http://", 0) , page.find("http://www.w3.org/2000/svg"));  // no fetches
  EXPECT_NE(page.find("softmax&lt;&amp;&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(page.find("softmax<&>"), std::string::npos);
  EXPECT_NE(page.find("class=\"fail\">mismatch"), std::string::npos);
}

TEST(HtmlReport, FailuresAreDrawnAtOneXInRed) {
  std::string svg = html_svg_speedup(sample().problems);
  EXPECT_NE(svg.find("fill=\"#d62728\"><title>softmax&lt;&amp;&gt;: mismatch"), std::string::npos);
  EXPECT_NE(svg.find("<title>gemm_bias_gelu: 3.2x</title>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"ref\""), std::string::npos);  // the 1x line
}

// A known ceiling is a tick across the problem's bar in both bar charts (and stretches the axis to
// show it); an unknown one draws nothing, and without any the page does not explain the ticks.
TEST(HtmlReport, CeilingsAreTicksAcrossTheBars) {
  HtmlReport r = sample();
  EXPECT_EQ(html_render(r).find("Green ticks"), std::string::npos);
  r.problems[0].ceiling = 8.0;
  r.problems[0].ceiling_frac_sol = 0.9;
  const std::string page = html_render(r);
  EXPECT_EQ(count(page, "<line class=\"ceiling\""), 2u);
  EXPECT_NE(page.find("<title>gemm_bias_gelu: ceiling under the contract 8x</title>"), std::string::npos);
  EXPECT_NE(page.find("<title>gemm_bias_gelu: ceiling under the contract 90%</title>"), std::string::npos);
  EXPECT_NE(page.find("Green ticks"), std::string::npos);
  EXPECT_NE(page.find("<td>8.00x</td>"), std::string::npos);  // the problems table's ceiling column
  // The log axis reaches 8x (3.2x alone would stop at 4x).
  EXPECT_NE(html_svg_speedup(r.problems).find(">8x</text>"), std::string::npos);
  EXPECT_EQ(html_svg_speedup(sample().problems).find(">8x</text>"), std::string::npos);
}

TEST(HtmlReport, EmptySuiteStillRenders) {
  HtmlReport r;
  r.title = "empty";
  std::string page = html_render(r);
  EXPECT_EQ(count(page, "<svg "), 3u);
}

}  // namespace
}  // namespace ucut::report
