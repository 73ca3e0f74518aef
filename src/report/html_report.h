// The HTML report of a suite or one problem: one self-contained file a person opens in a browser
// (no external JavaScript, CSS or fonts). Plots are inline SVG drawn here: speedup over eager per
// problem (log scale, 1x line, failures marked, each problem's ceiling under the contract as a
// tick), fraction of SOL per problem (ceilings too), and best speedup
// over attempts for every problem. Its input is plain data, filled from the search results by
// the command that writes it (bench/optimize), so this module depends on nothing but fmt.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ucut::report {

struct HtmlProblem {
  std::string name;
  double speedup = 1.0;           // over eager; 1.0 for a failure (the user keeps PyTorch)
  double speedup_compile = 0;     // over torch.compile; 0 unknown
  double frac_sol = 0;            // 0 unknown
  std::string status;             // "ok" or the failure status; "degenerate"
  std::string best;               // best configuration name
  int attempts = 0;
  std::string stop_reason;
  std::vector<double> best_so_far;  // best speedup after each attempt
  // The most any kernel that passes can reach (eager, and t_SOL, over the contract SOL); 0 unknown.
  // Drawn as a tick across the problem's bar.
  double ceiling = 0;
  double ceiling_frac_sol = 0;
};

struct HtmlReport {
  std::string title;
  std::vector<std::pair<std::string, std::string>> figures;  // headline label -> value text
  std::vector<HtmlProblem> problems;
  std::string contract;           // "tf32 policy, default profile (atol=rtol=1e-4)"
  std::string note;               // e.g. "nothing was measured: planning only"
};

// The SVG plots on their own (tested apart; each is one <svg> element).
std::string html_svg_speedup(const std::vector<HtmlProblem>& problems);
std::string html_svg_frac_sol(const std::vector<HtmlProblem>& problems);
std::string html_svg_over_attempts(const std::vector<HtmlProblem>& problems);

// The whole page.
std::string html_render(const HtmlReport& r);

// Escapes &, <, >, " for text and attribute values.
std::string html_escape(const std::string& s);

}  // namespace ucut::report
