// GCC 12 at -O2 reports a false maybe-uninitialized inside nlohmann::json's iterators when
// inlining the report code below (a known GCC false positive); nothing here is uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "app/suite_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "sol/format.h"

namespace ucut::app {

std::string suite_failure_name(const Error& e) {
  return e.code == ErrorCode::unsupported ? "unsupported" : "extract_error";
}

std::string suite_error_line(const std::string& message, size_t max_chars) {
  std::string out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    start = end + 1;
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b, line.find_last_not_of(" \t\r") - b + 1);
    if (line.rfind("hint:", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + line;
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
  return out;
}

namespace {

// Text in a Markdown table cell: a '|' would end the cell.
std::string md_cell(const std::string& text) {
  std::string out;
  for (char ch : text) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

SuitePlan suite_plan(const std::string& suite, const std::vector<std::string>& files, const PrepareOptions& prepare,
                     const PlanOptions& plan, const DriverOptions& opt, const std::string& why,
                     const std::function<void(const PlannedProblem&)>& on_problem) {
  SuitePlan sp;
  sp.suite = suite;
  sp.why = why;
  sp.policy = prepare.policy;
  sp.profile = plan.profile;
  for (const auto& f : files) {
    PlannedProblem row;
    row.name = pipeline_problem_name(f);
    auto p = pipeline_prepare(f, prepare);
    if (!p) {
      row.status = suite_failure_name(p.error());
      row.error = p.error().message;
      ++sp.failures[row.status];
      // Its result will be the PyTorch fallback: model_new.py (the reference) is written now.
      (void)fallback_problem(f, row.status, p.error().message, 0, nullptr, opt);
    } else if (auto r = plan_problem(*p, plan, opt, why); !r) {
      row.status = "plan_error";
      row.error = r.error().message;
      ++sp.failures[row.status];
    } else {
      ++sp.planned;
      row.status = "planned";
      const search::Candidate* best = r->plan.top.empty() ? nullptr : &r->plan.top.front().cand;
      row.stages = static_cast<int>(p->lowered.program.stages.size());
      row.t_sol_s = p->t_sol();
      row.t_sol_contract_s = r->t_sol_contract;
      row.best_ranked = best ? best->name : "";
      row.predicted_s = best ? best->predicted_s : 0.0;
      row.report = r->dir + "/report.json";
    }
    if (on_problem) on_problem(row);
    sp.problems.push_back(std::move(row));
  }
  return sp;
}

std::string suite_plan_markdown(const SuitePlan& p) {
  std::string md = "# ucutlass bench: " + p.suite + "\n\n**" + p.why + "**: this is a plan, not a result.\n\n" +
                   "Contract: policy `" + sol::policy_name(p.policy) + "`, profile `" + p.profile + "`.\n\n" +
                   "| problem | status | stages | t_SOL | SOL at its tolerance | best-ranked candidate | predicted |\n"
                   "|---|---|---|---|---|---|---|\n";
  for (const auto& r : p.problems) {
    const std::string error = md_cell(suite_error_line(r.error));
    if (r.status == "planned")
      md += fmt::format("| {} | planned | {} | {} | {} | `{}` | {} |\n", r.name, r.stages, sol::fmt_time(r.t_sol_s),
                        sol::fmt_time(r.t_sol_contract_s), r.best_ranked.empty() ? "-" : r.best_ranked,
                        r.best_ranked.empty() ? "-" : sol::fmt_time(r.predicted_s));
    else if (r.status == "plan_error")
      md += fmt::format("| {} | plan_error | - | - | - | {} | - |\n", r.name, error);
    else
      md += fmt::format("| {} | {} (PyTorch fallback) | - | - | - | {} | - |\n", r.name, r.status, error);
  }
  md += fmt::format("\n{} of {} problems planned", p.planned, p.problems.size());
  for (const auto& [k, v] : p.failures) md += fmt::format(", {} {}", v, k);
  md += "\n";
  if (!p.executor.empty()) md += "\n" + p.executor + "\n";
  return md;
}

nlohmann::json suite_plan_json(const SuitePlan& p) {
  nlohmann::json j = {{"schema", "ucutlass.bench-report/1"}, {"suite", p.suite}, {"measured", false},
                      {"note", p.why}, {"policy", sol::policy_name(p.policy)}, {"profile", p.profile},
                      {"problems", nlohmann::json::array()}};
  for (const auto& r : p.problems) {
    if (r.status == "planned")
      j["problems"].push_back({{"name", r.name}, {"status", "planned"}, {"t_sol_s", r.t_sol_s},
                               {"t_sol_contract_s", r.t_sol_contract_s}, {"best_ranked", r.best_ranked},
                               {"predicted_s", r.predicted_s}, {"report", r.report}});
    else
      j["problems"].push_back({{"name", r.name}, {"status", r.status}, {"error", r.error}});
  }
  j["planned"] = p.planned;
  j["failures"] = p.failures;
  return j;
}

nlohmann::json suite_report_json(const std::string& suite, bool simulated, const Headline& h,
                                 const std::vector<ProblemOutcome>& outcomes) {
  nlohmann::json j = {{"schema", "ucutlass.bench-report/1"}, {"suite", suite}, {"simulated", simulated},
                      {"headline", headline_to_json(h)}, {"problems", nlohmann::json::array()}};
  for (const auto& oc : outcomes)
    j["problems"].push_back({{"name", oc.name}, {"speedup_eager", oc.speedup_eager()},
                             {"frac_sol", oc.frac_sol()}, {"ceiling_speedup_eager", oc.ceiling_eager()},
                             {"kernel_share", oc.kernel_share},
                             {"failure", oc.failure}, {"status", oc.status()},
                             {"result", oc.correct() ? "kernel" : oc.fallback() ? "fallback" : "none"},
                             {"attempts", oc.attempts}, {"attempts_to_best", oc.attempts_to_best},
                             {"time_to_best_s", oc.time_to_best_s},
                             {"stop_reason", oc.stop_reason}, {"best", oc.best_name},
                             {"reference_limited", oc.reference_limited},
                             {"passed_by", oc.correct() ? (oc.passed_by_float64 ? "float64" : "allclose") : ""},
                             {"tokens_in", oc.tokens_in},
                             {"tokens_out", oc.tokens_out}, {"llm_cost_usd", oc.llm_cost_usd},
                             {"worst_stage", stage_gap_to_json(oc.worst_stage)}});
  return j;
}

std::string suite_report_markdown(bool simulated, const std::string& headline_text, const Headline& h,
                                  const std::vector<ProblemOutcome>& outcomes) {
  std::string md = std::string("# ucutlass bench") + (simulated ? " (SIMULATED)" : "") + "\n\n```\n" +
                   headline_text + "```\n\n";
  md += "| problem | status | × eager | × torch.compile | % SOL | ceiling × eager | kernels' share | attempts | best at "
        "| time to best | stop | best candidate |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& oc : outcomes) {
    // A kernel that passed by the reference-class pass says so where its status is.
    const std::string status = oc.status() + (oc.correct() && oc.passed_by_float64 ? " (passed by float64)" : "");
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", oc.name, status,
                      oc.correct() || oc.fallback() ? fmt::format("{:.2f}", oc.speedup_eager()) : "-",
                      oc.correct() && oc.compile_s > 0 ? fmt::format("{:.2f}", oc.speedup_compile()) : "-",
                      (oc.correct() || oc.fallback()) && oc.frac_sol() > 0 ? fmt::format("{:.0f}", 100 * oc.frac_sol()) : "-",
                      oc.ceiling_eager() > 0 ? fmt::format("{:.2f}", oc.ceiling_eager()) : "-",
                      // the work its kernel stages do; the rest runs in torch stages
                      oc.correct() ? fmt::format("{:.0f}%", 100 * oc.kernel_share) : "-",
                      oc.attempts, oc.attempts_to_best > 0 ? std::to_string(oc.attempts_to_best) : "-",
                      oc.correct() && oc.time_to_best_s > 0 ? fmt::format("{:.1f} min", oc.time_to_best_s / 60) : "-",
                      oc.stop_reason.empty() ? "-" : oc.stop_reason, oc.best_name.empty() ? "-" : "`" + oc.best_name + "`");
  }
  // The stage of each profiled kernel with the most time above its floor, most of the kernel's
  // time first: where the next kernel work pays (docs/eval-contract.md, "Per-stage times").
  std::vector<const ProblemOutcome*> profiled;
  for (const auto& oc : outcomes)
    if (oc.correct() && !oc.worst_stage.stage.empty()) profiled.push_back(&oc);
  auto excess = [](const ProblemOutcome* o) {
    return o->worst_stage.share * (o->worst_stage.ms > 0 ? 1 - o->worst_stage.floor_ms / o->worst_stage.ms : 0);
  };
  std::stable_sort(profiled.begin(), profiled.end(),
                   [&](const ProblemOutcome* a, const ProblemOutcome* b) { return excess(a) > excess(b); });
  if (!profiled.empty()) {
    md += "\n## Where the time goes\n\nPer kernel, the stage with the most time above its program-level floor "
          "(its per-stage profile; docs/eval-contract.md, \"Per-stage times\"), the largest share of a kernel's "
          "time above a floor first; each problem's report.md has every stage.\n\n"
          "| problem | stage | kind | configuration | ms | of the kernel | floor ms | above the floor |\n"
          "|---|---|---|---|---:|---:|---:|---:|\n";
    for (const ProblemOutcome* o : profiled) {
      const auto& w = o->worst_stage;
      md += fmt::format("| {} | {} | {} | `{}` | {:.4g} | {:.0f}% | {:.4g} | {:.0f}% of the kernel |\n", o->name, w.stage,
                        w.kind, w.config, w.ms, 100 * w.share, w.floor_ms, 100 * excess(o));
    }
  }
  if (h.cost.tokens_in + h.cost.tokens_out > 0) {
    // The LLM strategies' cost per problem, beside its attempts (docs/agent.md "What it costs").
    md += "\n| problem | attempts | LLM tokens in | LLM tokens out | cost |\n|---|---:|---:|---:|---:|\n";
    for (const auto& oc : outcomes)
      md += fmt::format("| {} | {} | {} | {} | {} |\n", oc.name, oc.attempts, oc.tokens_in, oc.tokens_out,
                        oc.llm_cost_usd > 0 ? fmt::format("${:.4f}", oc.llm_cost_usd) : "-");
  }
  return md;
}

void cost_add(CostFigures& total, const search::SessionCost& problem) {
  total.wall_s = std::max(total.wall_s, problem.wall_s);
  total.compiled += problem.compiled;
  total.compile_s += problem.compile_s;
  total.gpu_s += problem.gpu_s;
  for (const auto& [phase, secs] : problem.gpu_phases) total.gpu_phases[phase] += secs;
  total.tokens_in += problem.llm.tokens_in;
  total.tokens_out += problem.llm.tokens_out;
}

}  // namespace ucut::app
