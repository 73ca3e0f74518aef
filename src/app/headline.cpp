#include "app/headline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace ucut::app {

namespace {
// The failure's own status: "mismatch (reference-limited)", "unsupported", "no_candidate", ...
std::string failure_status(const ProblemOutcome& p) {
  return (p.failure.empty() ? std::string("no_candidate") : p.failure) +
         (p.reference_limited ? " (reference-limited)" : "");
}
// The fallback reason without figures: the key of Headline::fallbacks.
std::string fallback_kind(const ProblemOutcome& p) {
  return p.kernel_found() ? "slower than eager" : failure_status(p);
}
}  // namespace

std::string ProblemOutcome::fallback_reason() const {
  if (kernel_found() && eager_s > 0 && best_s > 0)
    return fmt::format("slower than eager: best kernel {:.2f}x", eager_s / best_s);
  return failure_status(*this);
}

std::string ProblemOutcome::status() const {
  if (correct()) return "ok";
  if (fallback()) return "fallback (" + fallback_reason() + ")";
  return failure_status(*this);
}

double ProblemOutcome::frac_sol() const {
  if (t_sol <= 0) return 0;
  if (correct()) return t_sol / best_s;
  return eager_s > 0 ? t_sol / eager_s : 0;
}

double ProblemOutcome::ceiling_eager() const {
  return t_sol_contract > 0 && eager_s > 0 ? eager_s / t_sol_contract : 0;
}
double ProblemOutcome::ceiling_compile() const {
  return t_sol_contract > 0 && compile_s > 0 ? compile_s / t_sol_contract : 0;
}
double ProblemOutcome::ceiling_frac_sol() const {
  return t_sol_contract > 0 && t_sol > 0 ? std::min(1.0, t_sol / t_sol_contract) : 0;
}

namespace {
double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

// The median of a non-empty list (the mean of the two middle values of an even one).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

double headline_compile_busy(const CostFigures& c) {
  return c.compile_slots > 0 && c.wall_s > 0 ? std::min(1.0, c.nvcc_s / (c.compile_slots * c.wall_s)) : 0.0;
}

std::string headline_phases(const CostFigures& c) {
  if (c.gpu_phases.empty()) return "";
  std::vector<std::pair<std::string, double>> by(c.gpu_phases.begin(), c.gpu_phases.end());
  std::stable_sort(by.begin(), by.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  double named = 0;
  std::string s;
  for (const auto& [phase, secs] : by) {
    named += secs;
    s += fmt::format("{}{} {:.0f}", s.empty() ? "" : ", ", phase, secs);
  }
  // What no phase holds: opening the library, the worker's bookkeeping.
  if (c.gpu_s - named >= 0.5) s += fmt::format(", other {:.0f}", c.gpu_s - named);
  return " (" + s + ")";
}

double headline_compile_busy_waiting(const CostFigures& c) {
  return c.compile_slots > 0 && c.compile_waiting_s > 0
             ? std::min(1.0, c.compile_slot_s_waiting / (c.compile_slots * c.compile_waiting_s))
             : 0.0;
}

double headline_gpu_busy(const CostFigures& c) { return c.wall_s > 0 ? std::min(1.0, c.gpu_s / c.wall_s) : 0.0; }

double headline_gpu_busy_search(const Headline& h, double* window_s) {
  if (window_s) *window_s = 0;
  if (h.cost.search_s <= 0 || h.cost.gpus <= 0 || h.gpu_spans.empty()) return 0.0;
  double start = h.gpu_spans.front().first;
  for (const auto& [s, e] : h.gpu_spans) start = std::min(start, s);
  start = std::max(0.0, start);
  const double end = h.cost.search_s;
  if (end <= start) return 0.0;
  double busy = 0;
  for (const auto& [s, e] : h.gpu_spans) busy += std::max(0.0, std::min(e, end) - std::max(s, start));
  if (window_s) *window_s = end - start;
  return std::min(1.0, busy / ((end - start) * h.cost.gpus));
}

Headline headline_compute(const std::vector<ProblemOutcome>& problems, const CostFigures& cost) {
  Headline h;
  h.cost = cost;
  std::vector<double> eager, compile, frac, to_best, first, attempts, ceil_eager, ceil_compile, ceil_frac;
  const double ps[] = {1.0, 1.5, 2.0};
  const char* pnames[] = {"fast_1", "fast_1.5", "fast_2"};
  int fast[3] = {0, 0, 0};
  for (const auto& p : problems) {
    ++h.problems;
    if (p.degenerate) {
      ++h.degenerate;
      continue;
    }
    ++h.counted;
    if (p.correct()) {
      ++h.correct;
      if (p.passed_by_float64) {
        ++h.passed_by_float64;
        h.float64_passes.push_back(p.name);
      }
    } else if (p.fallback()) {
      ++h.fallback;
      ++h.fallbacks[fallback_kind(p)];
    } else {
      ++h.failures[p.failure.empty() ? "no_candidate" : p.failure];
    }
    if (!p.kernel_found() && p.reference_limited) ++h.reference_limited;
    if (!p.correct())
      h.failed.push_back(fmt::format("{}: {} after {} attempt{}{}", p.name, p.status(), p.attempts,
                                     p.attempts == 1 ? "" : "s",
                                     p.stop_reason.empty() || p.stop_reason == "none" ? "" : " (" + p.stop_reason + ")"));
    eager.push_back(p.speedup_eager());
    if (p.compile_s > 0) compile.push_back(p.speedup_compile());
    if (p.frac_sol() > 0) frac.push_back(p.frac_sol());
    for (int i = 0; i < 3; ++i)
      if (p.correct() && p.speedup_eager() > ps[i]) ++fast[i];
    if (p.correct() && p.time_to_best_s > 0) to_best.push_back(p.time_to_best_s);
    if (p.first_s > 0) first.push_back(p.first_s);
    h.gpu_spans.insert(h.gpu_spans.end(), p.gpu_spans.begin(), p.gpu_spans.end());
    if (p.attempts == 0) ++h.without_attempt;
    attempts.push_back(p.attempts);
    if (p.attempts >= 3) ++h.three_attempts;
    if (p.ceiling_eager() > 0) {
      ceil_eager.push_back(p.ceiling_eager());
      if (p.ceiling_compile() > 0) ceil_compile.push_back(p.ceiling_compile());
      if (p.ceiling_frac_sol() > 0) ceil_frac.push_back(p.ceiling_frac_sol());
    }
  }
  h.ceiling_counted = static_cast<int>(ceil_eager.size());
  h.ceiling_eager = geomean(ceil_eager);
  h.ceiling_compile = geomean(ceil_compile);
  h.ceiling_frac_sol = geomean(ceil_frac);
  if (!attempts.empty()) h.median_attempts = median(attempts);
  if (!first.empty()) {
    h.min_first_s = *std::min_element(first.begin(), first.end());
    h.median_first_s = median(first);
    h.max_first_s = *std::max_element(first.begin(), first.end());
  }
  h.time_to_best_counted = static_cast<int>(to_best.size());
  if (!to_best.empty()) h.median_time_to_best_s = median(to_best);
  if (!eager.empty()) h.geomean_eager = geomean(eager);
  if (!compile.empty()) h.geomean_compile = geomean(compile);
  h.compile_counted = static_cast<int>(compile.size());
  h.geomean_frac_sol = geomean(frac);
  for (int i = 0; i < 3; ++i)
    h.fast_p[pnames[i]] = h.counted ? static_cast<double>(fast[i]) / h.counted : 0.0;
  h.at_least_eager = h.counted ? static_cast<double>(h.correct + h.fallback) / h.counted : 0.0;
  return h;
}

nlohmann::json stage_gap_to_json(const ProblemOutcome::StageGap& w) {
  if (w.stage.empty()) return nullptr;
  return {{"stage", w.stage}, {"kind", w.kind},         {"config", w.config},
          {"ms", w.ms},       {"floor_ms", w.floor_ms}, {"share", w.share}};
}

nlohmann::json headline_to_json(const Headline& h) {
  return {{"problems", h.problems},
          {"counted", h.counted},
          {"degenerate", h.degenerate},
          {"correct", h.correct},
          {"fallback", h.fallback},
          {"fallbacks", h.fallbacks},
          {"at_least_eager", h.at_least_eager},
          {"geomean_speedup_eager", h.geomean_eager},
          {"geomean_speedup_compile", h.geomean_compile},
          {"compile_counted", h.compile_counted},
          {"fast_p", h.fast_p},
          {"geomean_frac_sol", h.geomean_frac_sol},
          {"failures", h.failures},
          {"reference_limited", h.reference_limited},
          {"passed_by_float64", h.passed_by_float64},
          {"float64_passes", h.float64_passes},
          {"median_time_to_best_s", h.median_time_to_best_s},
          {"time_to_best_counted", h.time_to_best_counted},
          {"min_first_attempt_s", h.min_first_s},
          {"median_first_attempt_s", h.median_first_s},
          {"max_first_attempt_s", h.max_first_s},
          {"without_attempt", h.without_attempt},
          {"median_attempts", h.median_attempts},
          {"three_attempts", h.three_attempts},
          {"ceiling_counted", h.ceiling_counted},
          {"ceiling_geomean_speedup_eager", h.ceiling_eager},
          {"ceiling_geomean_speedup_compile", h.ceiling_compile},
          {"ceiling_geomean_frac_sol", h.ceiling_frac_sol},
          {"simulated", h.simulated},
          {"cost",
           {{"wall_s", h.cost.wall_s},
            {"compiled", h.cost.compiled},
            {"compile_s", h.cost.compile_s},
            {"gpu_s", h.cost.gpu_s},
            {"tokens_in", h.cost.tokens_in},
            {"tokens_out", h.cost.tokens_out},
            {"attempts", h.cost.attempts},
            {"nvcc_jobs", h.cost.nvcc_jobs},
            {"nvcc_core_s", h.cost.nvcc_s},
            {"nvcc_core_s_per_attempt", h.cost.attempts ? h.cost.nvcc_s / h.cost.attempts : 0.0},
            {"stored_units_built", h.cost.stored_built},
            {"stored_units_reused", h.cost.stored_reused},
            {"compile_slots", h.cost.compile_slots},
            {"compile_slots_busy", headline_compile_busy(h.cost)},
            {"compile_waiting_s", h.cost.compile_waiting_s},
            {"compile_slots_busy_while_waiting", headline_compile_busy_waiting(h.cost)},
            {"gpu_busy", headline_gpu_busy(h.cost)},
            {"gpu_busy_search", headline_gpu_busy_search(h)},
            {"search_s", h.cost.search_s},
            {"worker_busy_s", h.cost.worker_busy_s},
            {"worker_load_s", h.cost.worker_load_s},
            {"worker_loads", h.cost.worker_loads},
            {"worker_kept_loads", h.cost.worker_kept_loads},
            {"worker_kept_load_s", h.cost.worker_kept_load_s},
            {"worker_baseline_s", h.cost.worker_baseline_s},
            {"gpu_phases", h.cost.gpu_phases},
            {"modelled", h.simulated},
            {"run_wall_s", h.simulated ? h.run_wall_s : h.cost.wall_s}}}};
}

std::string headline_render(const Headline& h) {
  std::string s;
  if (h.simulated)
    s += std::string(kSimulatedBanner) + ": every figure below comes from the synthetic cost model, not a GPU\n";
  s += fmt::format("problems: {} ({} counted, {} degenerate excluded), correct kernel: {}/{}, PyTorch fallback: "
                   "{}/{}, failed: {}/{}\n",
                   h.problems, h.counted, h.degenerate, h.correct, h.counted, h.fallback, h.counted,
                   h.counted - h.correct - h.fallback, h.counted);
  s += fmt::format("geomean speedup over eager: {:.2f}x (fallbacks and failures count as 1.0x){}\n", h.geomean_eager,
                   h.simulated ? ", simulated" : "");
  if (h.compile_counted)
    s += fmt::format("geomean speedup over torch.compile: {:.2f}x ({} problems)\n",
                     h.geomean_compile, h.compile_counted);
  else
    s += "geomean speedup over torch.compile: not measured\n";
  s += fmt::format("fast_1 {:.0f}%  fast_1.5 {:.0f}%  fast_2 {:.0f}%  (strictly faster than eager); at least as fast "
                   "as eager: {:.0f}% (fallbacks at 1.00x included)\n",
                   100 * h.fast_p.at("fast_1"), 100 * h.fast_p.at("fast_1.5"), 100 * h.fast_p.at("fast_2"),
                   100 * h.at_least_eager);
  s += fmt::format("geomean fraction of SOL: {:.0f}%\n", 100 * h.geomean_frac_sol);
  s += h.float64_passes.empty()
           ? std::string("passed by float64 (reference-class pass): none\n")
           : fmt::format("passed by float64 (reference-class pass: outside the tolerance of the fp32 reference, no "
                         "further from float64 than it): {} of {} correct kernels: {}\n",
                         h.passed_by_float64, h.correct, fmt::join(h.float64_passes, ", "));
  if (h.time_to_best_counted)
    s += fmt::format("median time to best: {:.1f} min ({} correct problems; from the start of the search{})\n",
                     h.median_time_to_best_s / 60, h.time_to_best_counted, h.simulated ? ", on the model's clock" : "");
  if (h.ceiling_counted)
    s += fmt::format("ceiling under the contract (every problem at the speed of light of the precision its "
                     "tolerance leaves; {} problems): {:.2f}x over eager, {}, {:.0f}% of SOL\n",
                     h.ceiling_counted, h.ceiling_eager,
                     h.ceiling_compile > 0 ? fmt::format("{:.2f}x over torch.compile", h.ceiling_compile)
                                           : std::string("torch.compile not measured"),
                     100 * h.ceiling_frac_sol);
  std::string fbs;
  for (const auto& [k, v] : h.fallbacks) fbs += fmt::format("{}{} {}", fbs.empty() ? "" : ", ", k, v);
  s += "fallbacks (the result is PyTorch eager): " + (fbs.empty() ? std::string("none") : fbs) + "\n";
  std::string fails;
  for (const auto& [k, v] : h.failures) fails += fmt::format("{}{} {}", fails.empty() ? "" : ", ", k, v);
  s += "failures: " + (fails.empty() ? std::string("none") : fails) + "\n";
  if (h.reference_limited)
    s += fmt::format("  of which reference-limited: {} (the candidate is within tolerance of a float64 evaluation "
                     "everywhere, the fp32 reference is not; no kernel result under the contract)\n",
                     h.reference_limited);
  constexpr size_t kListed = 12;  // the rest are in report.md's table
  for (size_t i = 0; i < h.failed.size() && i < kListed; ++i) s += "  " + h.failed[i] + "\n";
  if (h.failed.size() > kListed) s += fmt::format("  ... and {} more (report.md)\n", h.failed.size() - kListed);
  if (h.simulated)
    s += fmt::format("cost: modelled, nothing compiled or ran (wall {:.0f} s, {} compiles of {:.0f} s, GPU {:.0f} s on "
                     "the model's clock); this run took {:.2f} s\n",
                     h.cost.wall_s, h.cost.compiled, h.cost.compile_s, h.cost.gpu_s, h.run_wall_s);
  else
  {
    s += fmt::format("cost: wall {:.0f} s, {} compiled ({:.0f} s), GPU {:.0f} s, tokens {} in / {} out\n",
                     h.cost.wall_s, h.cost.compiled, h.cost.compile_s, h.cost.gpu_s,
                     h.cost.tokens_in, h.cost.tokens_out);
    double window = 0;
    const double in_search = headline_gpu_busy_search(h, &window);
    const std::string gpu_search =
        window > 0 ? fmt::format(" of the wall, {:.0f}% of the search from its first measurement ({:.0f} s)", 100 * in_search,
                                 window)
                   : std::string();
    if (h.cost.nvcc_jobs > 0 || h.cost.stored_reused > 0)
      s += fmt::format("compiles: {} nvcc jobs, {:.0f} core-s ({:.1f} per evaluated attempt), stored units {} built / "
                       "{} taken from the store; compile slots {:.0f}% busy of {}{}, GPU {:.0f}% busy{}\n",
                       h.cost.nvcc_jobs, h.cost.nvcc_s, h.cost.attempts ? h.cost.nvcc_s / h.cost.attempts : 0.0,
                       h.cost.stored_built, h.cost.stored_reused, 100 * headline_compile_busy(h.cost),
                       h.cost.compile_slots,
                       h.cost.compile_waiting_s > 0
                           ? fmt::format(" ({:.0f}% while a candidate waited for one, {:.0f} s)",
                                         100 * headline_compile_busy_waiting(h.cost), h.cost.compile_waiting_s)
                           : std::string(" (no candidate waited for one)"),
                       100 * headline_gpu_busy(h.cost), gpu_search);
    if (h.cost.worker_busy_s > 0)
      s += fmt::format("GPU workers: held {:.0f} s: {} problem loads ({:.0f} s{}), evaluations {:.0f} s{}, baselines "
                       "{:.0f} s, the rest {:.0f} s\n",
                       h.cost.worker_busy_s, h.cost.worker_loads, h.cost.worker_load_s,
                       h.cost.worker_kept_loads > 0
                           ? fmt::format("; {} of them kept from before, {:.1f} s", h.cost.worker_kept_loads,
                                         h.cost.worker_kept_load_s)
                           : std::string(),
                       h.cost.gpu_s,
                       headline_phases(h.cost), h.cost.worker_baseline_s,
                       std::max(0.0, h.cost.worker_busy_s - h.cost.worker_load_s - h.cost.gpu_s -
                                         h.cost.worker_baseline_s));
  }
  if (h.median_first_s > 0 || h.without_attempt > 0)
    s += fmt::format("first measured attempt: earliest {:.0f} s, median {:.0f} s, last {:.0f} s into the search; "
                     "{} problem{} without any attempt; attempts a problem: median {:g}, 3 or more on {} of {}\n",
                     h.min_first_s, h.median_first_s, h.max_first_s, h.without_attempt, h.without_attempt == 1 ? "" : "s",
                     h.median_attempts, h.three_attempts, h.counted);
  return s;
}

}  // namespace ucut::app
