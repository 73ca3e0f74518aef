// The HTML report's words and numbers (html_report.h): three significant digits, readable
// statuses and stop reasons, and nice axis ticks.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/html_report.h"

namespace ucut::report {

namespace {
// v to three significant digits, without an exponent (4500 stays "4500").
std::string sig3(double v) {
  if (v == 0 || !std::isfinite(v)) return fmt::format("{:g}", v);
  const double mag = std::pow(10.0, std::floor(std::log10(std::abs(v))) - 2);
  const double r = std::round(v / mag) * mag;  // rounded first: 9.996 is "10.0", not "10.00"
  const int digits = static_cast<int>(std::floor(std::log10(std::abs(r)))) + 1;
  return fmt::format("{:.{}f}", r, std::max(0, 3 - digits));
}

// The words for a code, or the code with its underscores as spaces.
std::string word_for(const std::map<std::string, std::string>& words, const std::string& code) {
  if (auto it = words.find(code); it != words.end()) return it->second;
  std::string s = code;
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}
}  // namespace

std::string html_fmt_speedup(double x) { return sig3(x) + "x"; }

std::string html_fmt_percent(double fraction) { return sig3(100 * fraction) + "%"; }

std::string html_fmt_time(double s) {
  if (s == 0) return "0 s";
  if (s < 1e-3) return sig3(s * 1e6) + " us";
  if (s < 1) return sig3(s * 1e3) + " ms";
  if (s < 100) return sig3(s) + " s";
  if (s < 6000) return sig3(s / 60) + " min";
  return sig3(s / 3600) + " h";
}

std::string html_status_text(const std::string& status) {
  static const std::map<std::string, std::string> words = {
      {"ok", "correct"},
      {"degenerate", "degenerate (excluded)"},
      {"mismatch", "wrong result"},
      {"mismatch (reference-limited)", "wrong result: the fp32 reference's own rounding"},
      {"compile_error", "did not compile"},
      {"launch_error", "failed at launch"},
      {"timeout", "timed out"},
      {"rejected", "rejected (faster than light)"},
      {"unsupported", "not supported yet"},
      {"extract_error", "could not be extracted"},
      {"setup_error", "could not start"},
      {"plan_error", "could not be planned"},
      {"no_attempt", "not attempted"},
      {"not_measured", "not measured (plan only)"},
      {"no_candidate", "no correct kernel"},
  };
  // "fallback (<why>)": PyTorch is the result; the why is a status or words of its own.
  if (status.rfind("fallback (", 0) == 0 && status.back() == ')')
    return "PyTorch fallback (" + word_for(words, status.substr(10, status.size() - 11)) + ")";
  return word_for(words, status);
}

std::string html_stop_text(const std::string& stop) {
  static const std::map<std::string, std::string> words = {
      {"none", "-"},
      {"sol_proximity", "near the speed of light"},
      {"stagnation", "no further gain"},
      {"attempt_budget", "attempt budget spent"},
      {"time_budget", "time budget spent"},
      {"token_budget", "token budget spent"},
      {"space_exhausted", "all candidates tried"},
      {"interrupted", "interrupted"},
      {"reference_limited", "reference-limited"},
  };
  return stop.empty() ? "-" : word_for(words, stop);
}

std::vector<double> html_nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * mag >= raw * (1 - 1e-9)) {
      step = m * mag;
      break;
    }
  // Whole multiples of the step (no accumulated rounding), the first at or below lo.
  const long first = static_cast<long>(std::floor(lo / step + 1e-9));
  const long last = static_cast<long>(std::ceil(hi / step - 1e-9));
  std::vector<double> ticks;
  for (long i = first; i <= last; ++i) ticks.push_back(static_cast<double>(i) * step);
  return ticks;
}

}  // namespace ucut::report
