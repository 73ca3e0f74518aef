#include "app/run_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/library.h"
#include "dsl/dsl.h"
#include "sol/format.h"
#include "sol/hardware.h"
#include "sol/program_estimate.h"

namespace ucut::app {

std::vector<double> run_report_best_so_far(const search::SearchState& s) {
  std::vector<double> out;
  double best = 1.0;
  for (const auto& a : s.attempts) {
    if (a.status == RunStatus::ok && a.speedup > best) best = a.speedup;
    out.push_back(best);
  }
  return out;
}

ProblemOutcome run_report_outcome(const RunReport& r) {
  ProblemOutcome p;
  p.name = r.problem;
  p.eager_s = r.state.baselines.eager_s;
  p.compile_s = r.state.baselines.compile_s;
  p.t_sol = r.t_sol;
  p.t_sol_contract = r.t_sol_contract;
  p.kernel_share = r.kernel_share;
  p.attempts = static_cast<int>(r.state.attempts.size());
  p.stop_reason = search::stop_reason_name(r.stop);
  p.best_so_far = run_report_best_so_far(r.state);
  p.tokens_in = r.cost.llm.tokens_in;
  p.tokens_out = r.cost.llm.tokens_out;
  p.llm_cost_usd = r.cost.llm.cost_usd;
  for (const auto& a : r.state.attempts)
    if (a.status != RunStatus::compile_error && a.at_s > 0) {
      p.first_s = a.at_s;
      break;
    }
  for (const auto& a : r.state.attempts)
    if (a.gpu_s > 0 && a.at_s > 0) p.gpu_spans.emplace_back(a.at_s - a.gpu_s, a.at_s);
  if (const search::Attempt* b = r.state.best_attempt()) {
    p.best_s = b->time_s;
    p.best_name = b->cand.name;
    p.attempts_to_best = b->index + 1;
    p.time_to_best_s = b->at_s;
    p.passed_by_float64 = b->passed_by_float64;
    p.worst_stage = run_report_worst_stage(r);
  } else {
    p.failure = r.state.attempts.empty() ? (r.measured ? "no_attempt" : "not_measured")
                                         : run_status_name(r.state.attempts.back().status);
    for (const auto& a : r.state.attempts) p.reference_limited = p.reference_limited || a.reference_limited;
  }
  return p;
}

std::string run_report_result_kind(const RunReport& r) {
  if (!r.measured) return "plan";
  const ProblemOutcome o = run_report_outcome(r);
  return o.correct() ? "kernel" : o.fallback() ? "fallback" : "none";
}

std::string run_report_result_text(const RunReport& r) {
  const ProblemOutcome o = run_report_outcome(r);
  const std::string kind = run_report_result_kind(r);
  if (kind == "plan") return "not measured (a plan)";
  if (kind == "kernel") return fmt::format("the kernel, {:.2f}x over eager", o.speedup_eager());
  if (kind == "fallback")
    return "the PyTorch fallback at 1.00x (" + o.fallback_reason() + "): model_new.py runs the reference";
  return "none: " + o.status() + " (PyTorch eager was not measured)";
}

std::string run_report_sol_line(const RunReport& r) {
  std::string s = "- speed of light: " + sol::fmt_time(r.t_sol);
  // The contract SOL differs from t_SOL only when the tolerance rules out the policy's precision.
  if (r.t_sol_contract > r.t_sol * (1 + 1e-9))
    s += "; " + sol::fmt_time(r.t_sol_contract) + " at the precision the tolerance leaves (the policy's cannot meet "
         "it: the precision note says which)";
  const double t_contract = std::max(r.t_sol_contract, r.t_sol);
  if (t_contract > 0 && r.state.baselines.eager_s > 0)
    s += fmt::format("; ceiling {:.2f}x over eager (a correct kernel at that speed)",
                     r.state.baselines.eager_s / t_contract);
  return s + "\n";
}

nlohmann::json run_report_json(const RunReport& r) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const auto& a : r.state.attempts) {
    nlohmann::json j = search::attempt_to_json(a);
    j["candidate"].erase("program");  // best.ucut holds the program; keep the report small
    j["origin"] = a.cand.origin;
    attempts.push_back(std::move(j));
  }
  nlohmann::json best = nullptr;
  if (const search::Attempt* b = r.state.best_attempt()) {
    best = {{"index", b->index}, {"name", b->cand.name}, {"hash", b->cand.hash},
            {"time_s", b->time_s}, {"speedup", b->speedup}, {"frac_sol", b->frac_sol},
            {"config", b->cand.config},
            // its stage most above its floor (report.md's "Where the time goes"), for the Python API's report
            {"worst_stage", stage_gap_to_json(run_report_worst_stage(r))}};
  }
  return {{"schema", "ucutlass.optimize-report/1"},
          {"problem", r.problem},
          {"gpu", r.gpu},
          {"policy", sol::policy_name(r.policy)},
          {"profile", r.profile},
          {"strategy", r.strategy},
          {"seed", r.seed},
          {"measured", r.measured},
          {"simulated", r.simulated},
          {"note", r.note},
          {"t_sol_s", r.t_sol},
          {"t_sol_contract_s", r.t_sol_contract},
          {"kernel_share", r.kernel_share},
          {"baselines", {{"eager_s", r.state.baselines.eager_s}, {"compile_s", r.state.baselines.compile_s}}},
          {"attempts", attempts},
          {"best", best},
          {"result", {{"kind", run_report_result_kind(r)}, {"text", run_report_result_text(r)}}},
          {"stop_reason", search::stop_reason_name(r.stop)},
          {"cost",
           {{"wall_s", r.cost.wall_s}, {"compiled", r.cost.compiled}, {"compile_s", r.cost.compile_s},
            {"gpu_s", r.cost.gpu_s}, {"replayed", r.cost.replayed}, {"dropped", r.cost.dropped}, {"tokens", r.cost.tokens},
            {"tokens_in", r.cost.llm.tokens_in}, {"tokens_out", r.cost.llm.tokens_out},
            {"llm_requests", r.cost.llm.requests}, {"llm_cost_usd", r.cost.llm.cost_usd}}}};
}

std::string run_report_markdown(const RunReport& r) {
  std::string s = fmt::format("# ucutlass optimize: {}\n\n", r.problem);
  if (r.simulated)
    s += std::string("**") + kSimulatedBanner + "**: every time, speedup and cost below comes from the synthetic cost "
         "model (a demo and test surface), not a GPU.\n\n";
  if (!r.measured) s += "**Nothing was measured** (no GPU): this is a plan, not a result.\n\n";
  if (!r.note.empty()) s += r.note + "\n\n";
  s += fmt::format("- contract: policy `{}`, profile `{}`; GPU {}\n", sol::policy_name(r.policy), r.profile,
                   r.gpu.empty() ? "unknown" : r.gpu);
  s += run_report_sol_line(r);
  s += fmt::format("- PyTorch eager: {}; torch.compile: {}\n",
                   r.state.baselines.eager_s > 0 ? fmt::format("{:.4g} ms", r.state.baselines.eager_s * 1e3)
                                                 : std::string("not measured"),
                   r.state.baselines.compile_s > 0 ? fmt::format("{:.4g} ms", r.state.baselines.compile_s * 1e3)
                                                   : std::string("not measured"));
  if (const search::Attempt* b = r.state.best_attempt())
    s += fmt::format("- best: `{}` {:.4g} ms, {} over eager, {:.0f}% of SOL (attempt {}{}){}\n",
                     b->cand.name, b->time_s * 1e3,
                     b->speedup > 0 ? fmt::format("{:.2f}x", b->speedup) : std::string("unknown"),
                     100 * b->frac_sol, b->index + 1,
                     b->at_s > 0 ? fmt::format(", {:.0f} s into the search", b->at_s) : "",
                     b->speedup > 0 && b->speedup < 1 ? "; slower than PyTorch eager: keep PyTorch" : "");
  else
    s += "- best: none correct (the user keeps PyTorch)\n";
  s += "- result: " + run_report_result_text(r) + "\n";
  s += fmt::format("- stopped: {} ({})\n", search::stop_reason_name(r.stop), search::stop_reason_text(r.stop));
  s += fmt::format("- cost{}: wall {:.0f} s, {} compiled ({:.0f} s), GPU {:.0f} s, {} replayed from the journal, "
                   "{} dropped unevaluated (below a raised precision floor, or summing like a mismatched kernel)\n\n",
                   r.simulated ? " (modelled on the model's clock; nothing compiled or ran)" : "", r.cost.wall_s,
                   r.cost.compiled, r.cost.compile_s, r.cost.gpu_s, r.cost.replayed, r.cost.dropped);
  if (r.cost.llm.requests > 0)
    s += fmt::format("- LLM: {} requests, {} tokens in / {} out{}\n\n", r.cost.llm.requests, r.cost.llm.tokens_in,
                     r.cost.llm.tokens_out, r.cost.llm.cost_usd > 0 ? fmt::format(", ${:.4f}", r.cost.llm.cost_usd) : "");
  s += "| # | candidate | origin | status | time ms | speedup | % SOL |\n|---|---|---|---|---|---|---|\n";
  for (const auto& a : r.state.attempts) {
    bool ok = a.status == RunStatus::ok;
    s += fmt::format("| {}{} | `{}` | {} | {} | {} | {} | {} |\n", a.index + 1, a.improved ? " *" : "",
                     a.cand.name, a.cand.origin, run_status_name(a.status),
                     ok ? fmt::format("{:.4g}", a.time_s * 1e3) : "-",
                     ok && a.speedup > 0 ? fmt::format("{:.2f}x", a.speedup) : "-",
                     ok && a.frac_sol > 0 ? fmt::format("{:.0f}%", 100 * a.frac_sol) : "-");
  }
  s += "\n`*` marks a new best.\n";
  s += run_report_stage_times(r);
  return s;
}

namespace {

// The best attempt's profile, each stage with its program-level floor in ms (docs/sol.md): the
// library's stages are the program's after codegen's expansions (an f32x3s GEMM is five), as
// `ucutlass sol --program` prices them, matched by name; no floors unless every stage has one.
struct StageRows {
  const search::Attempt* best = nullptr;
  std::vector<double> floor_ms;  // empty: no floors
  double sum_ms = 0;
  size_t worst = 0;              // most time above its floor (floors known)
  double worst_gap_ms = -1;
};

StageRows stage_rows(const RunReport& r) {
  StageRows out;
  out.best = r.state.best_attempt();
  if (!out.best || out.best->stage_ms.empty()) {
    out.best = nullptr;
    return out;
  }
  const search::Attempt* b = out.best;
  if (auto hw = sol::hw_lookup(r.gpu); hw && !b->cand.program.empty()) {
    auto checked = dsl::dsl_compile(SourceFile{"best.ucut", b->cand.program});
    auto runs = checked.program ? codegen::codegen_expand_split_gemms(*checked.program)
                                : Result<dsl::Program>(make_error(ErrorCode::invalid_input, "best.ucut does not check"));
    if (runs) {
      const sol::ProgramEstimate est = sol::sol_program_estimate(*hw, *runs, r.policy);
      for (const auto& t : b->stage_ms) {
        auto it = std::find_if(est.stages.begin(), est.stages.end(), [&](const auto& l) { return l.name == t.stage; });
        if (it == est.stages.end()) {
          out.floor_ms.clear();
          break;
        }
        out.floor_ms.push_back(it->t_floor * 1e3);
      }
    }
  }
  for (size_t i = 0; i < b->stage_ms.size(); ++i) {
    out.sum_ms += b->stage_ms[i].ms;
    if (!out.floor_ms.empty() && b->stage_ms[i].ms - out.floor_ms[i] > out.worst_gap_ms) {
      out.worst_gap_ms = b->stage_ms[i].ms - out.floor_ms[i];
      out.worst = i;
    }
  }
  return out;
}

}  // namespace

ProblemOutcome::StageGap run_report_worst_stage(const RunReport& r) {
  const StageRows rows = stage_rows(r);
  if (!rows.best || rows.floor_ms.empty()) return {};
  const search::StageTime& t = rows.best->stage_ms[rows.worst];
  return {t.stage, t.kind, t.config, t.ms, rows.floor_ms[rows.worst], rows.sum_ms > 0 ? t.ms / rows.sum_ms : 0};
}

std::string run_report_stage_times(const RunReport& r) {
  const StageRows rows = stage_rows(r);
  const search::Attempt* b = rows.best;
  if (!b) return "";
  const std::vector<double>& floor = rows.floor_ms;
  std::string s = fmt::format(
      "\n## Where the time goes (the best kernel, per stage)\n\nCUDA events before each stage and after the last, "
      "median of 3 runs, each after the L2 flush (docs/eval-contract.md, \"Per-stage times\"): a profile beside the "
      "timed median, not the contract's timing.\n\n");
  s += floor.empty() ? "| stage | kind | configuration | ms | share |\n|---|---|---|---|---|\n"
                     : "| stage | kind | configuration | ms | share | floor ms | % of floor |\n|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < b->stage_ms.size(); ++i) {
    const search::StageTime& t = b->stage_ms[i];
    s += fmt::format("| {} | {} | `{}` | {:.4g} | {:.0f}% |", t.stage, t.kind, t.config, t.ms,
                     rows.sum_ms > 0 ? 100 * t.ms / rows.sum_ms : 0.0);
    if (!floor.empty())
      s += fmt::format(" {:.4g} | {} |", floor[i], t.ms > 0 ? fmt::format("{:.0f}%", 100 * floor[i] / t.ms) : "-");
    s += "\n";
  }
  s += fmt::format("\nThe stages sum to {:.4g} ms (the timed median: {:.4g} ms).", rows.sum_ms, b->time_s * 1e3);
  if (!floor.empty() && rows.worst_gap_ms > 0)
    s += fmt::format(" The most time above a floor: stage {} ({}), {:.4g} ms against its floor of {:.4g} ms.",
                     b->stage_ms[rows.worst].stage, b->stage_ms[rows.worst].kind, b->stage_ms[rows.worst].ms,
                     floor[rows.worst]);
  return s + "\n";
}

}  // namespace ucut::app
