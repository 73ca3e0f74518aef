#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ucut::report {

namespace {
constexpr int kW = 760, kLeft = 60, kRight = 20, kTop = 20, kBottom = 90, kPlotH = 220;
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string svg_open(int h, const std::string& label) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kW, h, kW, h, html_escape(label));
}

// A bar chart with a log or linear y axis, an optional reference line and, where `mark` gives a
// value above 0, a tick across the bar at it.
std::string bars(const std::vector<HtmlProblem>& ps, const std::string& label,
                 double (*value)(const HtmlProblem&), bool log_scale, double ref,
                 const std::string& unit, double (*mark)(const HtmlProblem&)) {
  const int h = kTop + kPlotH + kBottom;
  std::string s = svg_open(h, label);
  double vmax = ref, vmin = log_scale ? 1.0 : 0.0;
  for (const auto& p : ps) {
    for (double v : {value(p), mark(p)}) {
      if (v <= 0) continue;
      vmax = std::max(vmax, v);
      if (log_scale) vmin = std::min(vmin, v);
    }
  }
  if (log_scale) {
    vmax = std::pow(2.0, std::ceil(std::log2(std::max(vmax, 1.0001))));
    vmin = std::pow(2.0, std::floor(std::log2(std::max(vmin, 1e-3))));
  } else {
    vmax = std::max(vmax * 1.1, 1e-9);
  }
  auto y_of = [&](double v) {
    double f = log_scale ? (std::log2(std::max(v, vmin)) - std::log2(vmin)) /
                               (std::log2(vmax) - std::log2(vmin))
                         : v / vmax;
    return kTop + kPlotH - f * kPlotH;
  };
  const int plot_w = kW - kLeft - kRight;
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLeft, kTop,
                   kLeft, kTop + kPlotH);
  // y ticks
  if (log_scale) {
    for (double t = vmin; t <= vmax * 1.0001; t *= 2)
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}{}</text>\n", kLeft - 4,
                       y_of(t) + 4, t, unit);
  } else {
    for (int i = 0; i <= 4; ++i) {
      double t = vmax * i / 4;
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}{}</text>\n", kLeft - 4,
                       y_of(t) + 4, unit == "%" ? 100 * t : t, unit);
    }
  }
  const double slot = ps.empty() ? plot_w : static_cast<double>(plot_w) / ps.size();
  for (size_t i = 0; i < ps.size(); ++i) {
    const auto& p = ps[i];
    double v = value(p);
    double x = kLeft + i * slot + slot * 0.15, w = slot * 0.7;
    double base = log_scale ? y_of(1.0) : y_of(0);
    double y = v > 0 ? y_of(v) : base;
    bool fail = p.status != "ok";
    s += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"><title>{}: {}</title></rect>\n",
        x, std::min(y, base), w, std::max(std::abs(base - y), 1.0), fail ? "#d62728" : "#1f77b4",
        html_escape(p.name),
        fail ? html_escape(p.status) : fmt::format("{:.3g}{}", unit == "%" ? 100 * v : v, unit));
    if (const double m = mark(p); m > 0)
      s += fmt::format(
          "<line class=\"ceiling\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#2ca02c\" "
          "stroke-width=\"2\"><title>{}: ceiling under the contract {:.3g}{}</title></line>\n",
          x - 2, y_of(m), x + w + 2, y_of(m), html_escape(p.name), unit == "%" ? 100 * m : m, unit);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" transform=\"rotate(-40 {:.1f} {})\" text-anchor=\"end\">{}</text>\n",
        x + w / 2, kTop + kPlotH + 14, x + w / 2, kTop + kPlotH + 14, html_escape(p.name));
  }
  if (ref > 0)
    s += fmt::format(
        "<line class=\"ref\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#333\" "
        "stroke-dasharray=\"4 3\"/>\n",
        kLeft, y_of(ref), kW - kRight, y_of(ref));
  s += "</svg>\n";
  return s;
}
}  // namespace

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string html_svg_speedup(const std::vector<HtmlProblem>& problems) {
  return bars(problems, "speedup over PyTorch eager per problem (log scale)",
              [](const HtmlProblem& p) { return p.status == "ok" ? p.speedup : 1.0; }, true, 1.0, "x",
              [](const HtmlProblem& p) { return p.ceiling; });
}

std::string html_svg_frac_sol(const std::vector<HtmlProblem>& problems) {
  return bars(problems, "fraction of speed of light per problem",
              [](const HtmlProblem& p) { return p.frac_sol; }, false, 1.0, "%",
              [](const HtmlProblem& p) { return p.ceiling_frac_sol; });
}

std::string html_svg_over_attempts(const std::vector<HtmlProblem>& problems) {
  const int h = kTop + kPlotH + 40;
  std::string s = svg_open(h, "best speedup over attempts");
  size_t n = 1;
  double vmax = 1.0;
  for (const auto& p : problems) {
    n = std::max(n, p.best_so_far.size());
    for (double v : p.best_so_far) vmax = std::max(vmax, v);
  }
  vmax *= 1.1;
  const int plot_w = kW - kLeft - kRight;
  auto x_of = [&](size_t i) { return kLeft + (n <= 1 ? 0.0 : plot_w * double(i) / double(n - 1)); };
  auto y_of = [&](double v) { return kTop + kPlotH - (v / vmax) * kPlotH; };
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLeft,
                   kTop + kPlotH, kW - kRight, kTop + kPlotH);
  for (int i = 0; i <= 4; ++i)
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.1f}x</text>\n", kLeft - 4,
                     y_of(vmax * i / 4) + 4, vmax * i / 4);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">attempt (1 .. {})</text>\n",
                   kLeft + plot_w / 2, kTop + kPlotH + 28, n);
  s += fmt::format(
      "<line class=\"ref\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#999\" "
      "stroke-dasharray=\"4 3\"/>\n",
      kLeft, y_of(1.0), kW - kRight, y_of(1.0));
  for (size_t k = 0; k < problems.size(); ++k) {
    const auto& p = problems[k];
    if (p.best_so_far.empty()) continue;
    std::string pts;
    for (size_t i = 0; i < p.best_so_far.size(); ++i)
      pts += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", x_of(i), y_of(p.best_so_far[i]));
    s += fmt::format(
        "<polyline class=\"trace\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
        "points=\"{}\"><title>{}</title></polyline>\n",
        kPalette[k % 10], pts, html_escape(p.name));
  }
  s += "</svg>\n";
  return s;
}

std::string html_render(const HtmlReport& r) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
      html_escape(r.title) +
      "</title>\n<style>body{font-family:sans-serif;max-width:800px;margin:2em auto;color:#222}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
      "td:first-child,th:first-child{text-align:left}.fail{color:#d62728}</style>\n</head><body>\n";
  s += "<!-- generated by ucutlass; do not edit -->\n";
  s += "<h1>" + html_escape(r.title) + "</h1>\n";
  if (!r.contract.empty()) s += "<p>Contract: " + html_escape(r.contract) + "</p>\n";
  if (!r.note.empty()) s += "<p><strong>" + html_escape(r.note) + "</strong></p>\n";
  if (!r.figures.empty()) {
    s += "<table class=\"figures\">\n";
    for (const auto& [k, v] : r.figures)
      s += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(v) + "</td></tr>\n";
    s += "</table>\n";
  }
  s += "<h2>Speedup over PyTorch eager</h2>\n";
  if (std::any_of(r.problems.begin(), r.problems.end(), [](const HtmlProblem& p) { return p.ceiling > 0; }))
    s += "<p>Green ticks: each problem's ceiling under the contract, eager over the speed of light at the "
         "cheapest precision its tolerance leaves (the peaks % of SOL uses): what a correct kernel at that speed "
         "would reach.</p>\n";
  s += html_svg_speedup(r.problems);
  s += "<h2>Fraction of speed of light</h2>\n" + html_svg_frac_sol(r.problems);
  s += "<h2>Best speedup over attempts</h2>\n" + html_svg_over_attempts(r.problems);
  s += "<h2>Problems</h2>\n<table class=\"problems\">\n<tr><th>problem</th><th>status</th>"
       "<th>speedup</th><th>vs compile</th><th>% SOL</th><th>ceiling</th><th>attempts</th><th>stop</th>"
       "<th>best</th></tr>\n";
  for (const auto& p : r.problems)
    s += fmt::format(
        "<tr><td>{}</td><td class=\"{}\">{}</td><td>{:.2f}x</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        html_escape(p.name), p.status == "ok" ? "" : "fail", html_escape(p.status), p.speedup,
        p.speedup_compile > 0 ? fmt::format("{:.2f}x", p.speedup_compile) : "-",
        p.frac_sol > 0 ? fmt::format("{:.0f}%", 100 * p.frac_sol) : "-",
        p.ceiling > 0 ? fmt::format("{:.2f}x", p.ceiling) : "-", p.attempts,
        html_escape(p.stop_reason), html_escape(p.best));
  s += "</table>\n</body></html>\n";
  return s;
}

}  // namespace ucut::report
