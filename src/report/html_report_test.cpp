#include "report/html_report.h"

#include <gtest/gtest.h>

#include <regex>

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
  r.figures = {{"Speedup over PyTorch eager", "2.10x", "geometric mean"}};
  HtmlProblem a{"gemm_bias_gelu", 3.2, 2.0, 0.71, "ok", "tf32_128x256x64", 12, "stagnation", {1, 2.5, 3.2}};
  HtmlProblem b{"softmax<&>", 1.0, 0, 0.2, "mismatch", "", 40, "attempt_budget", {1, 1, 1}};
  r.problems = {a, b};
  return r;
}

// The y tick labels of an SVG, top to bottom as drawn (the text right of each grid line).
std::vector<std::string> y_ticks(const std::string& svg) {
  std::vector<std::string> out;
  static const std::regex tick("<line class=\"grid\"[^>]*/><text[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
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
  EXPECT_NE(page.find("class=\"text fail\">wrong result</td>"), std::string::npos);
  // the profiled kernel's stage most above its floor; "-" where none
  HtmlReport r = sample();
  r.problems[0].worst_stage = "s0 gemm: 2.10 ms, floor 200 us";
  page = html_render(r);
  EXPECT_NE(page.find("<th class=\"text\">its stage most above its floor</th>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"text\">tf32_128x256x64</td><td class=\"text\">s0 gemm: 2.10 ms, floor 200 us</td>"),
            std::string::npos) << page;
  EXPECT_NE(page.find("<td class=\"text\">-</td><td class=\"text\">-</td></tr>"), std::string::npos);
}

// Issue 29 item 9: three significant digits, x for speedups, % for fractions, us/ms/s for times.
TEST(HtmlReport, NumbersHaveThreeSignificantDigitsAndAUnit) {
  EXPECT_EQ(html_fmt_speedup(2.6179502457388795), "2.62x");
  EXPECT_EQ(html_fmt_speedup(1.0), "1.00x");
  EXPECT_EQ(html_fmt_speedup(12.44), "12.4x");
  EXPECT_EQ(html_fmt_speedup(123.4), "123x");
  EXPECT_EQ(html_fmt_speedup(9.996), "10.0x");
  EXPECT_EQ(html_fmt_percent(0.7491652741659154), "74.9%");
  EXPECT_EQ(html_fmt_percent(1.0), "100%");
  EXPECT_EQ(html_fmt_percent(0.0512), "5.12%");
  EXPECT_EQ(html_fmt_time(0.00075), "750 us");
  EXPECT_EQ(html_fmt_time(0.0012345), "1.23 ms");
  EXPECT_EQ(html_fmt_time(32), "32.0 s");
  EXPECT_EQ(html_fmt_time(4500), "75.0 min");
  EXPECT_EQ(html_fmt_time(0), "0 s");
  // The whole page: no unrounded float anywhere (four or more digits after a point).
  HtmlReport r = sample();
  r.problems[0].speedup = 2.6179502457388795;
  r.problems[0].frac_sol = 0.7491652741659154;
  r.problems[0].best_so_far = {1, 2.6179502457388795};
  const std::string page = html_render(r);
  EXPECT_FALSE(std::regex_search(page, std::regex(">[^<]*[0-9]\\.[0-9]{4,}[^<]*<"))) << page;
  EXPECT_NE(page.find("<td>2.62x</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>74.9%</td>"), std::string::npos);
}

TEST(HtmlReport, NiceTicks) {
  EXPECT_EQ(html_nice_ticks(0, 1, 4), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(html_nice_ticks(0, 4.4, 5), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(html_nice_ticks(0, 28, 8), (std::vector<double>{0, 5, 10, 15, 20, 25, 30}));
  EXPECT_EQ(html_nice_ticks(0, 0.9, 4), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

// The fraction of SOL runs 0 to 100% in quarters (the old axis ticked at 28/55/82/110%), the speedup
// axis at powers of two, the attempts axis at whole numbers; every axis has a title.
TEST(HtmlReport, AxesHaveNiceTicksAndTitles) {
  const auto r = sample();
  const std::string frac = html_svg_frac_sol(r.problems);
  EXPECT_EQ(y_ticks(frac), (std::vector<std::string>{"0%", "25%", "50%", "75%", "100%"}));
  EXPECT_NE(frac.find(">% of speed of light</text>"), std::string::npos);
  EXPECT_NE(frac.find(">problem</text>"), std::string::npos);
  const std::string speed = html_svg_speedup(r.problems);
  EXPECT_EQ(y_ticks(speed), (std::vector<std::string>{"1x", "2x", "4x"}));
  EXPECT_NE(speed.find(">speedup over eager (log scale)</text>"), std::string::npos);
  const std::string over = html_svg_over_attempts(r.problems);
  EXPECT_EQ(y_ticks(over), (std::vector<std::string>{"0x", "1x", "2x", "3x", "4x"}));
  EXPECT_NE(over.find(">best speedup over eager</text>"), std::string::npos);
  EXPECT_NE(over.find(">attempt (1 to 3)</text>"), std::string::npos);
}

TEST(HtmlReport, FailuresAreDrawnAtOneXInRedWithALegend) {
  std::string svg = html_svg_speedup(sample().problems);
  EXPECT_NE(svg.find("fill=\"#d62728\"><title>softmax&lt;&amp;&gt;: wrong result"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>gemm_bias_gelu: 3.20x</title>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"ref\""), std::string::npos);  // the 1x line
  EXPECT_NE(svg.find(">correct kernel</text>"), std::string::npos);
  EXPECT_NE(svg.find(">failed (not even PyTorch measured)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">PyTorch eager (1x)</text>"), std::string::npos);
  EXPECT_EQ(svg.find("fallback"), std::string::npos);  // no fallback, no legend entry for one
}

// A problem whose result is PyTorch itself (status "fallback (<why>)", app/headline.h) is drawn
// and listed as such, at 1x, not as a failure or a kernel.
TEST(HtmlReport, PytorchFallbackIsShownAsSuch) {
  HtmlReport r = sample();
  r.problems.push_back({"kb3_mamba2_y", 1.0, 0, 0.1, "fallback (unsupported)", "", 0, "not searched", {}});
  const std::string page = html_render(r);
  EXPECT_NE(page.find("fill=\"#8c8c8c\"><title>kb3_mamba2_y: PyTorch fallback (not supported yet), PyTorch's time: 10.0%</title>"), std::string::npos);
  EXPECT_NE(page.find(">PyTorch fallback (1x)</text>"), std::string::npos);
  EXPECT_NE(page.find("<td>kb3_mamba2_y</td><td class=\"text fallback\">PyTorch fallback (not supported yet)</td><td>1.00x</td>"),
            std::string::npos) << page;
}

TEST(HtmlReport, StatusesAndStopReasonsAreWords) {
  EXPECT_EQ(html_status_text("ok"), "correct");
  EXPECT_EQ(html_status_text("compile_error"), "did not compile");
  EXPECT_EQ(html_status_text("mismatch (reference-limited)"), "wrong result: the fp32 reference's own rounding");
  EXPECT_EQ(html_status_text("some_new_status"), "some new status");
  EXPECT_EQ(html_status_text("fallback (mismatch (reference-limited))"),
            "PyTorch fallback (wrong result: the fp32 reference's own rounding)");
  EXPECT_EQ(html_status_text("fallback (slower than eager: best kernel 0.80x)"),
            "PyTorch fallback (slower than eager: best kernel 0.80x)");
  EXPECT_EQ(html_stop_text("stagnation"), "no further gain");
  EXPECT_EQ(html_stop_text("none"), "-");
  const std::string page = html_render(sample());
  EXPECT_NE(page.find("<td class=\"text\">no further gain</td>"), std::string::npos);
  EXPECT_EQ(page.find("attempt_budget"), std::string::npos);
}

// The contract (policy and tolerance profile) and the ceiling are each explained in one line.
TEST(HtmlReport, ContractAndCeilingAreExplained) {
  HtmlReport r = sample();
  std::string page = html_render(r);
  EXPECT_NE(page.find("<b>Contract</b>: policy <code>tf32</code>, fp32 matmuls may use TF32 tensor cores"),
            std::string::npos);
  EXPECT_NE(page.find("atol = rtol = 1e-4 for fp32 outputs, 1e-2 for fp16/bf16"), std::string::npos);
  EXPECT_EQ(page.find("<b>Ceiling</b>"), std::string::npos);  // no ceiling known: nothing to explain
  r.profile = "kb-v01";
  r.problems[0].ceiling = 8.0;
  page = html_render(r);
  EXPECT_NE(page.find("atol = rtol = 1e-2 for every output (KernelBench v0.1)"), std::string::npos);
  EXPECT_NE(page.find("<b>Ceiling</b>: PyTorch eager's time over the speed of light"), std::string::npos);
}

// A known ceiling is a tick across the problem's bar in both bar charts (and stretches the axis to
// show it); an unknown one draws nothing.
TEST(HtmlReport, CeilingsAreTicksAcrossTheBars) {
  HtmlReport r = sample();
  r.problems[0].ceiling = 8.0;
  r.problems[0].ceiling_frac_sol = 0.9;
  const std::string page = html_render(r);
  EXPECT_EQ(count(page, "<line class=\"ceiling\""), 2u);
  EXPECT_NE(page.find("<title>gemm_bias_gelu: ceiling under the contract 8.00x</title>"), std::string::npos);
  EXPECT_NE(page.find("<title>gemm_bias_gelu: ceiling under the contract 90.0%</title>"), std::string::npos);
  EXPECT_NE(page.find(">ceiling under the contract</text>"), std::string::npos);  // the legend
  EXPECT_NE(page.find("<td>8.00x</td>"), std::string::npos);  // the problems table's ceiling column
  EXPECT_EQ(y_ticks(html_svg_speedup(r.problems)).back(), "8x");  // 3.2x alone would stop at 4x
}

TEST(HtmlReport, ABannerComesFirst) {
  HtmlReport r = sample();
  EXPECT_EQ(html_render(r).find("class=\"banner\""), std::string::npos);
  r.banner = "SIMULATED <model>";
  const std::string page = html_render(r);
  EXPECT_NE(page.find("</h1>\n<p class=\"banner\">SIMULATED &lt;model&gt;</p>"), std::string::npos);
}

// The attempts plot colours the ten problems that ended fastest, with a legend; the rest are one
// faint group. A wide suite widens the bar charts instead of squeezing them, and long names are cut.
TEST(HtmlReport, LargeSuitesStayReadable) {
  std::vector<HtmlProblem> ps;
  for (int i = 0; i < 80; ++i)
    ps.push_back({"kb2_linear_add_swish_tanh_gelu_hardtanh_" + std::to_string(i), 1.0 + i / 10.0, 0, 0.5, "ok", "",
                  3, "stagnation", {1, 1.0 + i / 20.0, 1.0 + i / 10.0}});
  const std::string over = html_svg_over_attempts(ps);
  EXPECT_EQ(count(over, "stroke=\"#d0d0d0\" stroke-width=\"1.5\""), 70u);
  EXPECT_NE(over.find(">70 other problems</text>"), std::string::npos);
  EXPECT_NE(over.find(">kb2_linear_add_swish_tanh_gelu_\u2026 8.90x</text>"), std::string::npos) << over;
  const std::string bars = html_svg_speedup(ps);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(bars, m, std::regex("<svg [^>]*width=\"([0-9]+)\"")));
  EXPECT_GE(std::stoi(m[1]), 72 + 80 * 16 + 24);
  EXPECT_EQ(bars.find("gelu_hardtanh_79</text>"), std::string::npos);  // cut in the axis labels
  EXPECT_NE(bars.find("<title>kb2_linear_add_swish_tanh_gelu_hardtanh_79: "), std::string::npos);  // whole in tooltips
}

TEST(HtmlReport, EmptySuiteStillRenders) {
  HtmlReport r;
  r.title = "empty";
  std::string page = html_render(r);
  EXPECT_EQ(count(page, "<svg "), 3u);
}

}  // namespace
}  // namespace ucut::report
