// The HTML report of a suite: one self-contained page (no external JavaScript, CSS or fonts) that a
// person can open and forward. It explains the contract (policy, tolerance profile) and the
// ceiling in one line each, lists the headline figures under human labels, and draws three
// inline SVG plots with labelled axes, "nice" ticks (0/25/50/75/100%, 1x/2x/4x, 1/5/10 ...) and a
// legend: speedup over eager per problem (log scale, the 1x line, failures and PyTorch fallbacks
// marked, each problem's ceiling under the contract as a tick), fraction of SOL per problem, and
// the best speedup over attempts. Every number is rounded to three significant digits: x for
// speedups, % for fractions, us/ms/s/min for times. A simulated run (the synthetic model surface)
// says so in its title and in a banner. The input is plain data, filled by the command that writes
// the page (bench; report/headline_figures.h for the headline), so this file depends on nothing
// but fmt and computes no figure.
#pragma once

#include <string>
#include <vector>

namespace ucut::report {

struct HtmlProblem {
  std::string name;
  double speedup = 1.0;           // over eager; 1.0 for a failure (the user keeps PyTorch)
  double speedup_compile = 0;     // over torch.compile; 0 unknown
  double frac_sol = 0;            // 0 unknown
  // "ok"; "fallback (<why>)": the result is PyTorch itself at 1x (app/headline.h); "degenerate";
  // or a failure status (not even PyTorch was measured).
  std::string status;
  std::string best;               // best configuration name
  int attempts = 0;
  std::string stop_reason;
  std::vector<double> best_so_far;  // best speedup after each attempt
  // The most any kernel that passes can reach (eager, and t_SOL, over the contract SOL); 0 unknown.
  // Drawn as a tick across the problem's bar.
  double ceiling = 0;
  double ceiling_frac_sol = 0;
  // The best kernel's stage with the most time above its floor, "s9 gemm: 2.10 ms, floor 0.200 ms"
  // (app::ProblemOutcome::worst_stage); "" where it was not profiled.
  std::string worst_stage;
};

// One row of the headline table.
struct HtmlFigure {
  std::string label;   // "Speedup over PyTorch eager"
  std::string value;   // "2.38x"
  std::string note;    // "geometric mean; a problem without a correct kernel counts as 1x"
};

struct HtmlReport {
  std::string title;
  std::vector<HtmlFigure> figures;
  std::vector<HtmlProblem> problems;
  std::string policy = "tf32";     // the contract, each explained in a line on the page
  std::string profile = "default";
  std::string note;                // e.g. "nothing was measured: planning only"
  std::string banner;              // shown first, in a red box (a simulated run's warning)
};

// The page's number formats, three significant digits: "2.38x", "12.4x", "123x"; a fraction as a
// percentage, "74.9%", "100%"; a time in seconds as "750 us", "1.23 ms", "32.0 s", "75.0 min".
std::string html_fmt_speedup(double x);
std::string html_fmt_percent(double fraction);
std::string html_fmt_time(double s);

// Words for a problem's status ("mismatch" -> "wrong result") and a stop reason ("stagnation" ->
// "no further gain"); an unknown code is shown with its underscores as spaces.
std::string html_status_text(const std::string& status);
std::string html_stop_text(const std::string& stop);

// Axis ticks: multiples of 1, 2, 2.5 or 5 times a power of ten, from at or below lo to at or above
// hi, about `count` steps apart ([0, 1] in 4: 0, 0.25, 0.5, 0.75, 1).
std::vector<double> html_nice_ticks(double lo, double hi, int count);

// The SVG plots on their own (tested apart; each is one <svg> element with its legend inside).
std::string html_svg_speedup(const std::vector<HtmlProblem>& problems);
std::string html_svg_frac_sol(const std::vector<HtmlProblem>& problems);
std::string html_svg_over_attempts(const std::vector<HtmlProblem>& problems);

// The whole page.
std::string html_render(const HtmlReport& r);

// Escapes &, <, >, " for text and attribute values.
std::string html_escape(const std::string& s);

}  // namespace ucut::report
