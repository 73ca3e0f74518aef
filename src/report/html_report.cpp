#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "support/contract_profiles.h"

namespace ucut::report {

namespace {
// Plot geometry (px). A bar chart widens past kMinW rather than squeeze a bar under kMinSlot; the
// page scrolls it sideways.
constexpr int kMinW = 760, kLeft = 72, kRight = 24, kPlotH = 220, kMinSlot = 16, kLegendRow = 18;
constexpr size_t kNameChars = 32;       // longer problem names are cut in the plots (full in the tooltip)
constexpr double kCharW = 6.2;          // average width of an 11 px sans-serif character
constexpr size_t kTraced = 10;          // problems with a colour of their own in the attempts plot
constexpr const char* kBlue = "#1f77b4";
constexpr const char* kRed = "#d62728";
constexpr const char* kGrey = "#8c8c8c";
constexpr const char* kGreen = "#2ca02c";
constexpr const char* kFaint = "#d0d0d0";
constexpr const char* kPalette[kTraced] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                           "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#393b79"};

enum class Kind { correct, failed, fallback, excluded };

Kind kind_of(const HtmlProblem& p) {
  if (p.status == "ok") return Kind::correct;
  if (p.status.rfind("fallback", 0) == 0) return Kind::fallback;
  if (p.status == "degenerate") return Kind::excluded;
  return Kind::failed;
}

const char* kind_colour(Kind k) {
  switch (k) {
    case Kind::correct: return kBlue;
    case Kind::failed: return kRed;
    case Kind::fallback: return kGrey;
    case Kind::excluded: return kFaint;
  }
  return kGrey;
}

const char* kind_legend(Kind k) {
  switch (k) {
    case Kind::correct: return "correct kernel";
    case Kind::failed: return "failed (not even PyTorch measured)";
    case Kind::fallback: return "PyTorch fallback (1x)";
    case Kind::excluded: return "degenerate (excluded)";
  }
  return "";
}

std::string short_name(const std::string& name) {
  return name.size() <= kNameChars ? name : name.substr(0, kNameChars - 1) + "\u2026";
}

std::string svg_open(int w, int h, const std::string& label) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      w, h, w, h, html_escape(label));
}

// One legend entry: a filled box, a solid line or a dashed line in a colour, then its text.
struct LegendItem {
  enum { box, line, dash } mark;
  std::string colour, text;
};

// The legend as rows across the top of a plot `width` wide; `height` receives the rows' height.
std::string legend(const std::vector<LegendItem>& items, int width, int& height) {
  std::string s = "<g class=\"legend\">\n";
  double x = kLeft;
  int row = 0;
  for (const auto& it : items) {
    const double w = 22 + kCharW * static_cast<double>(it.text.size()) + 14;
    if (x > kLeft && x + w > width - kRight) {
      x = kLeft;
      ++row;
    }
    const double y = 12 + row * kLegendRow;
    if (it.mark == LegendItem::box)
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>", x, y - 9, it.colour);
    else
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                       x, y - 4, x + 16, y - 4, it.colour, it.mark == LegendItem::dash ? " stroke-dasharray=\"4 3\"" : "");
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + 22, y, html_escape(it.text));
    x += w;
  }
  height = items.empty() ? 0 : (row + 1) * kLegendRow + 6;
  return s + "</g>\n";
}

// The y axis's title, turned to read upwards beside the tick labels.
std::string y_title(const std::string& text, int top) {
  const int y = top + kPlotH / 2;
  return fmt::format("<text class=\"axis-title\" x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" "
                     "text-anchor=\"middle\">{}</text>\n", y, y, html_escape(text));
}

std::string x_title(const std::string& text, int width, int y) {
  return fmt::format("<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     (kLeft + width - kRight) / 2, y, html_escape(text));
}

// A horizontal grid line with its tick label.
std::string y_tick(double y, const std::string& label, int width) {
  return fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eeeeee\"/>"
                     "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                     kLeft, y, width - kRight, y, kLeft - 6, y + 4, label);
}

struct BarSpec {
  std::string label;                     // the plot's accessible name
  std::string y_axis;                    // the y axis's title
  bool log_scale = false;                // log2 axis (speedups); else linear from 0 (fractions)
  double ref = 1.0;                      // the dashed reference line
  std::string ref_legend;                // what the line is
  double (*value)(const HtmlProblem&) = nullptr;
  double (*mark)(const HtmlProblem&) = nullptr;  // the ceiling tick; 0 draws none
  bool pytorch_value = false;            // a bar without a correct kernel shows PyTorch's own value
  std::string (*fmt_value)(double) = nullptr;
  std::string (*fmt_tick)(double) = nullptr;
};

// A bar per problem, coloured by its kind, with the ceiling ticks, the reference line, nice
// ticks, axis titles and the legend.
std::string bars(const std::vector<HtmlProblem>& ps, const BarSpec& b) {
  const int n = static_cast<int>(ps.size());
  const double slot = std::max<double>(kMinSlot, n ? static_cast<double>(kMinW - kLeft - kRight) / n : kMinW);
  const int width = std::max(kMinW, static_cast<int>(kLeft + slot * n + kRight));
  size_t longest = 0;
  for (const auto& p : ps) longest = std::max(longest, short_name(p.name).size());
  const int names_h = 12 + static_cast<int>(kCharW * static_cast<double>(longest));

  std::vector<LegendItem> items;
  for (Kind k : {Kind::correct, Kind::failed, Kind::fallback, Kind::excluded})
    if (std::any_of(ps.begin(), ps.end(), [k](const HtmlProblem& p) { return kind_of(p) == k; }))
      items.push_back({LegendItem::box, kind_colour(k), kind_legend(k)});
  if (std::any_of(ps.begin(), ps.end(), [&](const HtmlProblem& p) { return b.mark(p) > 0; }))
    items.push_back({LegendItem::line, kGreen, "ceiling under the contract"});
  items.push_back({LegendItem::dash, "#333333", b.ref_legend});
  int legend_h = 0;
  const std::string legend_svg = legend(items, width, legend_h);
  const int top = legend_h + 10;
  const int height = top + kPlotH + names_h + 24;

  // The axis: powers of two around every value and mark (log), or 0 to a nice top (linear).
  double vmax = b.ref, vmin = b.log_scale ? b.ref : 0.0;
  for (const auto& p : ps)
    for (double v : {b.value(p), b.mark(p)})
      if (v > 0) {
        vmax = std::max(vmax, v);
        vmin = std::min(vmin, v);
      }
  std::vector<double> ticks;
  if (b.log_scale) {
    for (int e = static_cast<int>(std::floor(std::log2(std::max(vmin, 1e-3)) + 1e-9));
         e <= static_cast<int>(std::ceil(std::log2(vmax) - 1e-9)); ++e)
      ticks.push_back(std::ldexp(1.0, e));
    if (ticks.size() < 2) ticks.push_back(2 * ticks.back());
  } else {
    ticks = html_nice_ticks(0, vmax, 4);
  }
  const double lo = ticks.front(), hi = ticks.back();
  auto y_of = [&](double v) {
    const double f = b.log_scale ? (std::log2(std::clamp(v, lo, hi)) - std::log2(lo)) / (std::log2(hi) - std::log2(lo))
                                 : std::clamp(v, lo, hi) / hi;
    return top + kPlotH - f * kPlotH;
  };

  std::string s = svg_open(width, height, b.label) + legend_svg;
  for (double t : ticks) s += y_tick(y_of(t), b.fmt_tick(t), width);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLeft, top, kLeft, top + kPlotH);
  const double base = b.log_scale ? y_of(b.ref) : y_of(0);
  for (int i = 0; i < n; ++i) {
    const auto& p = ps[static_cast<size_t>(i)];
    const Kind k = kind_of(p);
    const double v = b.value(p);
    const double x = kLeft + i * slot + slot * 0.15, w = slot * 0.7;
    const double y = v > 0 ? y_of(v) : base;
    s += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
        "<title>{}: {}</title></rect>\n",
        x, std::min(y, base), w, std::max(std::abs(base - y), 1.0), kind_colour(k), html_escape(p.name),
        k == Kind::correct ? b.fmt_value(v)
        : b.pytorch_value && v > 0 ? html_status_text(p.status) + ", PyTorch's time: " + b.fmt_value(v)
                                    : html_status_text(p.status));
    if (const double m = b.mark(p); m > 0)
      s += fmt::format(
          "<line class=\"ceiling\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"2\"><title>{}: ceiling under the contract {}</title></line>\n",
          x - 2, y_of(m), x + w + 2, y_of(m), kGreen, html_escape(p.name), b.fmt_value(m));
    const double cx = x + w / 2;
    const int ny = top + kPlotH + 6;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" transform=\"rotate(-90 {:.1f} {})\" text-anchor=\"end\" "
                     "dominant-baseline=\"middle\">{}</text>\n",
                     cx, ny, cx, ny, html_escape(short_name(p.name)));
  }
  s += fmt::format("<line class=\"ref\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#333\" "
                   "stroke-dasharray=\"4 3\"/>\n",
                   kLeft, y_of(b.ref), width - kRight, y_of(b.ref));
  s += y_title(b.y_axis, top) + x_title("problem", width, height - 6);
  return s + "</svg>\n";
}

std::string tick_x(double t) { return fmt::format("{:g}x", t); }
std::string tick_percent(double t) { return fmt::format("{:g}%", 100 * t); }

// One line each for the contract's policy and tolerance profile (docs/eval-contract.md).
std::string policy_text(const std::string& policy) {
  if (policy == "exact") return "fp32 matmuls stay fp32-faithful (FP32, or error-compensated 3xTF32)";
  if (policy == "tf32") return "fp32 matmuls may use TF32 tensor cores, or anything more precise";
  if (policy == "bf16") return "fp32 matmuls may use bf16/fp16 operands with fp32 accumulation, or anything more precise";
  return "precision policy " + policy;
}

std::string profile_text(const std::string& profile) {
  if (const ContractProfile* p = contract_profile(profile)) return contract_profile_text(*p);
  return "tolerance profile " + profile;
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
  BarSpec b;
  b.label = "speedup over PyTorch eager per problem (log scale)";
  b.y_axis = "speedup over eager (log scale)";
  b.log_scale = true;
  b.ref_legend = "PyTorch eager (1x)";
  b.value = [](const HtmlProblem& p) { return p.status == "ok" ? p.speedup : 1.0; };
  b.mark = [](const HtmlProblem& p) { return p.ceiling; };
  b.fmt_value = html_fmt_speedup;
  b.fmt_tick = tick_x;
  return bars(problems, b);
}

std::string html_svg_frac_sol(const std::vector<HtmlProblem>& problems) {
  BarSpec b;
  b.label = "fraction of the speed of light per problem";
  b.y_axis = "% of speed of light";
  b.ref_legend = "speed of light (100%)";
  b.value = [](const HtmlProblem& p) { return p.frac_sol; };
  b.mark = [](const HtmlProblem& p) { return p.ceiling_frac_sol; };
  b.pytorch_value = true;  // the fraction of SOL of the time the user ends up with
  b.fmt_value = html_fmt_percent;
  b.fmt_tick = tick_percent;
  return bars(problems, b);
}

std::string html_svg_over_attempts(const std::vector<HtmlProblem>& problems) {
  size_t n = 1;
  double vmax = 1.0;
  for (const auto& p : problems) {
    n = std::max(n, p.best_so_far.size());
    for (double v : p.best_so_far) vmax = std::max(vmax, v);
  }
  // The kTraced problems that ended fastest get a colour and a legend entry; the rest are faint.
  std::vector<size_t> order(problems.size());
  std::iota(order.begin(), order.end(), 0);
  auto final_best = [&](size_t i) { return problems[i].best_so_far.empty() ? 0.0 : problems[i].best_so_far.back(); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return final_best(a) > final_best(b); });
  std::vector<LegendItem> items;
  size_t traced = 0, faint = 0;
  std::vector<std::string> colour(problems.size(), kFaint);
  for (size_t i : order) {
    if (problems[i].best_so_far.empty()) continue;
    if (traced < kTraced) {
      colour[i] = kPalette[traced++];
      items.push_back({LegendItem::line, colour[i],
                       short_name(problems[i].name) + " " + html_fmt_speedup(final_best(i))});
    } else {
      ++faint;
    }
  }
  if (faint) items.push_back({LegendItem::line, kFaint, fmt::format("{} other problems", faint)});
  items.push_back({LegendItem::dash, "#999999", "PyTorch eager (1x)"});
  int legend_h = 0;
  const std::string legend_svg = legend(items, kMinW, legend_h);
  const int top = legend_h + 10;
  const int height = top + kPlotH + 44;
  const int plot_w = kMinW - kLeft - kRight;
  const std::vector<double> yt = html_nice_ticks(0, vmax, 5);
  const double ymax = yt.back();
  auto x_of = [&](double attempt) { return kLeft + (n <= 1 ? 0.0 : plot_w * (attempt - 1) / double(n - 1)); };
  auto y_of = [&](double v) { return top + kPlotH - (v / ymax) * kPlotH; };

  std::string s = svg_open(kMinW, height, "best speedup over attempts") + legend_svg;
  for (double t : yt) s += y_tick(y_of(t), tick_x(t), kMinW);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLeft, top + kPlotH,
                   kMinW - kRight, top + kPlotH);
  std::vector<double> xt;
  for (double t : html_nice_ticks(0, static_cast<double>(n), 8))
    if (t >= 1 && t <= static_cast<double>(n)) xt.push_back(t);
  if (xt.empty() || xt.front() > 1) xt.insert(xt.begin(), 1.0);
  for (double t : xt)
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#333\"/>"
                     "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n",
                     x_of(t), top + kPlotH, x_of(t), top + kPlotH + 4, x_of(t), top + kPlotH + 16, t);
  s += fmt::format("<line class=\"ref\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#999\" "
                   "stroke-dasharray=\"4 3\"/>\n",
                   kLeft, y_of(1.0), kMinW - kRight, y_of(1.0));
  // Faint traces first, so the coloured ones lie on top.
  for (bool coloured : {false, true})
    for (size_t k = 0; k < problems.size(); ++k) {
      const auto& p = problems[k];
      if (p.best_so_far.empty() || (colour[k] != kFaint) != coloured) continue;
      std::string pts;
      for (size_t i = 0; i < p.best_so_far.size(); ++i)
        pts += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", x_of(static_cast<double>(i + 1)), y_of(p.best_so_far[i]));
      s += fmt::format("<polyline class=\"trace\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\">"
                       "<title>{}: {}</title></polyline>\n",
                       colour[k], pts, html_escape(p.name), html_fmt_speedup(p.best_so_far.back()));
    }
  s += y_title("best speedup over eager", top) + x_title(fmt::format("attempt (1 to {})", n), kMinW, height - 8);
  return s + "</svg>\n";
}

std::string html_render(const HtmlReport& r) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + html_escape(r.title) +
      "</title>\n<style>body{font-family:sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}"
      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
      "td:first-child,th:first-child,td.text,th.text{text-align:left}th{background:#f4f4f4}"
      ".figures th{text-align:left;white-space:nowrap}.figures td{white-space:nowrap}"
      ".figures td.note{color:#666;font-size:90%;text-align:left;white-space:normal}.problems td{white-space:nowrap}"
      ".fail{color:#d62728}.fallback{color:#666}.line{margin:.3em 0}.scroll{overflow-x:auto}"
      ".banner{background:#fde8e8;border:2px solid #d62728;color:#8b0000;padding:.6em;font-weight:bold}"
      "</style>\n</head><body>\n<!-- generated by ucutlass; do not edit -->\n";
  s += "<h1>" + html_escape(r.title) + "</h1>\n";
  if (!r.banner.empty()) s += "<p class=\"banner\">" + html_escape(r.banner) + "</p>\n";
  if (!r.note.empty()) s += "<p><strong>" + html_escape(r.note) + "</strong></p>\n";
  s += fmt::format("<p class=\"line\"><b>Contract</b>: policy <code>{}</code>, {}; profile <code>{}</code>: an output "
                   "passes when |out &minus; ref| &le; atol + rtol&middot;|ref| everywhere, {}. Speedup = PyTorch's time "
                   "/ ours (medians).</p>\n",
                   html_escape(r.policy), html_escape(policy_text(r.policy)), html_escape(r.profile),
                   html_escape(profile_text(r.profile)));
  if (std::any_of(r.problems.begin(), r.problems.end(), [](const HtmlProblem& p) { return p.ceiling > 0; }))
    s += "<p class=\"line\"><b>Ceiling</b>: PyTorch eager's time over the speed of light at the cheapest precision the "
         "tolerance leaves, the most a correct kernel can gain (the green ticks).</p>\n";
  if (!r.figures.empty()) {
    s += "<table class=\"figures\">\n";
    for (const auto& f : r.figures)
      s += "<tr><th>" + html_escape(f.label) + "</th><td>" + html_escape(f.value) + "</td><td class=\"note\">" +
           html_escape(f.note) + "</td></tr>\n";
    s += "</table>\n";
  }
  s += "<h2>Speedup over PyTorch eager</h2>\n<div class=\"scroll\">\n" + html_svg_speedup(r.problems) + "</div>\n";
  s += "<h2>Fraction of the speed of light</h2>\n<div class=\"scroll\">\n" + html_svg_frac_sol(r.problems) + "</div>\n";
  s += "<h2>Best speedup over attempts</h2>\n<div class=\"scroll\">\n" + html_svg_over_attempts(r.problems) + "</div>\n";
  s += "<h2>Problems</h2>\n<div class=\"scroll\">\n<table class=\"problems\">\n<tr><th>problem</th><th class=\"text\">result</th>"
       "<th>speedup over eager</th><th>over torch.compile</th><th>% of SOL</th><th>ceiling</th><th>attempts</th>"
       "<th class=\"text\">stopped</th><th class=\"text\">best kernel</th>"
       "<th class=\"text\">its stage most above its floor</th></tr>\n";
  for (const auto& p : r.problems) {
    const Kind k = kind_of(p);
    const bool ok = k == Kind::correct;
    s += fmt::format(
        "<tr><td>{}</td><td class=\"text{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td></tr>\n",
        html_escape(p.name), ok ? "" : k == Kind::failed ? " fail" : " fallback", html_escape(html_status_text(p.status)),
        ok ? html_fmt_speedup(p.speedup) : k == Kind::fallback ? html_fmt_speedup(1.0) : "-",
        ok && p.speedup_compile > 0 ? html_fmt_speedup(p.speedup_compile) : "-",
        p.frac_sol > 0 ? html_fmt_percent(p.frac_sol) : "-", p.ceiling > 0 ? html_fmt_speedup(p.ceiling) : "-",
        p.attempts, html_escape(html_stop_text(p.stop_reason)), p.best.empty() ? "-" : html_escape(p.best),
        ok && !p.worst_stage.empty() ? html_escape(p.worst_stage) : "-");
  }
  s += "</table>\n</div>\n</body></html>\n";
  return s;
}

}  // namespace ucut::report
