#include "report/headline_figures.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ucut::report {

std::vector<HtmlFigure> headline_figures(const app::Headline& h) {
  std::vector<HtmlFigure> f;
  f.push_back({"Problems", std::to_string(h.problems),
               fmt::format("{} counted; {} degenerate, reported apart", h.counted, h.degenerate)});
  std::string why;
  for (const auto& [reason, n] : h.fallbacks) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", html_status_text(reason), n);
  f.push_back({"Correct kernel", fmt::format("{} of {}", h.correct, h.counted), "correct and at least as fast as eager"});
  f.push_back({"PyTorch fallback", fmt::format("{} of {}", h.fallback, h.counted),
               "the result is PyTorch itself, counted as 1x" + (why.empty() ? "" : ": " + why)});
  f.push_back({"Speedup over PyTorch eager", html_fmt_speedup(h.geomean_eager),
               "geometric mean over the counted problems; fallbacks and failures count as 1x"});
  f.push_back({"Speedup over torch.compile", h.compile_counted ? html_fmt_speedup(h.geomean_compile) : "not measured",
               h.compile_counted ? fmt::format("geometric mean over the {} problems it was timed on", h.compile_counted)
                                 : ""});
  f.push_back({"Faster than eager",
               fmt::format("{} / {} / {}", html_fmt_percent(h.fast_p.at("fast_1")),
                           html_fmt_percent(h.fast_p.at("fast_1.5")), html_fmt_percent(h.fast_p.at("fast_2"))),
               "share of the counted problems more than 1x / 1.5x / 2x faster (fast_p)"});
  f.push_back({"At least as fast as eager", html_fmt_percent(h.at_least_eager), "correct kernels and fallbacks at 1x"});
  f.push_back({"Fraction of the speed of light", html_fmt_percent(h.geomean_frac_sol),
               "geometric mean of t_SOL over the time the user ends up with"});
  f.push_back({"Passed by float64", fmt::format("{} of {}", h.passed_by_float64, h.correct),
               h.float64_passes.empty()
                   ? std::string("correct kernels that passed only by the reference-class pass")
                   : "outside the fp32 reference's tolerance, no further from float64 than it: " +
                         fmt::format("{}", fmt::join(h.float64_passes, ", "))});
  if (h.ceiling_counted)
    f.push_back({"Ceiling under the contract",
                 html_fmt_speedup(h.ceiling_eager) + " over eager" +
                     (h.ceiling_compile > 0 ? ", " + html_fmt_speedup(h.ceiling_compile) + " over torch.compile" : ""),
                 fmt::format("every problem at the speed of light its tolerance leaves ({} problems)", h.ceiling_counted)});
  if (h.time_to_best_counted)
    f.push_back({"Median time to best", html_fmt_time(h.median_time_to_best_s),
                 fmt::format("over {} correct problems, from the start of the search{}", h.time_to_best_counted,
                             h.simulated ? ", on the model's clock" : "")});
  std::string fails;
  for (const auto& [status, n] : h.failures) fails += fmt::format("{}{} {}", fails.empty() ? "" : ", ", html_status_text(status), n);
  f.push_back({"Failed", fails.empty() ? "none" : fails,
               h.reference_limited ? fmt::format("of which {} reference-limited (the fp32 reference's own rounding)",
                                                 h.reference_limited)
                                   : ""});
  std::string cost = fmt::format("wall {}, {} kernels compiled ({}), GPU {}", html_fmt_time(h.cost.wall_s),
                                 h.cost.compiled, html_fmt_time(h.cost.compile_s), html_fmt_time(h.cost.gpu_s));
  if (h.cost.tokens_in || h.cost.tokens_out)
    cost += fmt::format(", LLM tokens {} in / {} out", h.cost.tokens_in, h.cost.tokens_out);
  f.push_back({h.simulated ? "Cost (modelled)" : "Cost", cost,
               h.simulated ? "the model's clock: nothing compiled or ran; this run took " + html_fmt_time(h.run_wall_s)
                           : ""});
  return f;
}

HtmlProblem html_problem(const app::ProblemOutcome& oc, bool searched) {
  if (!searched) return {oc.name, 1.0, 0, oc.frac_sol(), oc.status(), "", 0, "not searched", {}};
  HtmlProblem row{oc.name, oc.speedup_eager(), oc.compile_s > 0 ? oc.speedup_compile() : 0, oc.frac_sol(),
                  oc.status(), oc.best_name, oc.attempts, oc.stop_reason, oc.best_so_far};
  row.ceiling = oc.ceiling_eager();
  row.ceiling_frac_sol = oc.ceiling_frac_sol();
  if (const auto& w = oc.worst_stage; !w.stage.empty())
    row.worst_stage = fmt::format("{} {}: {}, floor {}", w.stage, w.kind, html_fmt_time(w.ms * 1e-3),
                                  html_fmt_time(w.floor_ms * 1e-3));
  return row;
}

}  // namespace ucut::report
