#include "eval/evaluate.h"

#include <cstdlib>

#include <fmt/format.h>

#include <ctime>

#include "support/subprocess.h"

namespace ucut::eval {
namespace {

double num(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nan("");
  return j.at(key).get<double>();
}

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return {};
  const auto& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return {};
  return v.dump();
}

}  // namespace

std::string tool_commit() {
  // A binary carried to another machine has no checkout beside it: the batch script passes the
  // commit it was built from.
  if (const char* c = std::getenv("UCUTLASS_COMMIT"); c && *c) return c;
  ProcessSpec ps;
  ps.argv = {"git", "-C", UCUTLASS_SOURCE_DIR, "rev-parse", "HEAD"};
  ps.timeout = std::chrono::milliseconds(5000);
  auto r = subprocess_run(ps);
  if (!r || !r->success() || r->out.size() < 40) return "unknown";
  std::string commit = r->out.substr(0, 40);
  ps.argv = {"git", "-C", UCUTLASS_SOURCE_DIR, "status", "--porcelain", "--untracked-files=no"};
  auto d = subprocess_run(ps);
  if (d && d->success() && !d->out.empty()) commit += "+dirty";
  return commit;
}


RunRecord record_start(const BuiltLibrary& cand, const ProblemContext& ctx, const EvalOptions& opt) {
  RunRecord r;
  r.problem = str(ctx.info, "name");
  r.problem_sha256 = str(ctx.info, "source_sha256");
  r.candidate = cand.name;
  r.so_path = cand.so_path;
  r.profile = opt.profile;
  r.policy = sol::policy_name(opt.policy);
  r.contract = std::string(kContractVersion) + " " + opt.profile + " " + r.policy;
  r.gpu = str(ctx.env, "gpu");
  r.sm_clock_mhz = str(ctx.env, "sm_clock_mhz");
  r.driver = str(ctx.env, "driver");
  r.cuda = str(ctx.env, "cuda");
  r.torch = str(ctx.env, "torch");
  r.tool_commit = opt.tool_commit;
  r.eager_ms = ctx.eager_ms;
  r.compile_ms = ctx.compile_ms;
  r.compile_mode = ctx.compile_mode;
  r.t_sol_ms = ctx.t_sol_ms;
  r.sol_source = ctx.sol_source;
  r.timestamp = utc_timestamp();
  return r;
}

void record_apply_result(RunRecord& r, const nlohmann::json& result) {
  std::string verdict = str(result, "verdict");
  r.phase = str(result, "phase");
  r.error = str(result, "error");
  // rejected: the candidate wrote outside its outputs (guard zones, docs/eval-contract.md §1).
  if (verdict == "ok" || verdict == "mismatch" || verdict == "launch_error" || verdict == "rejected") {
    r.status = verdict;
  } else {
    r.status = "launch_error";
    r.error = "the worker returned an unknown verdict '" + verdict + "': " + r.error;
  }
  const auto& k = result.value("kernel", nlohmann::json::object());
  if (k.is_object()) {
    r.program_hash = str(k, "program_hash");
    r.cutlass = str(k, "cutlass");
    if (k.contains("stages") && k["stages"].is_array()) {
      std::string cfg;
      for (const auto& s : k["stages"])
        if (s.is_object()) cfg += (cfg.empty() ? "" : ";") + s.value("config", s.value("name", ""));
      r.config = cfg;
    }
  }
  const auto& c = result.value("correctness", nlohmann::json());
  if (c.is_object()) {
    r.correctness = c;
    r.trials = c.contains("trials") && c["trials"].is_array() ? static_cast<int64_t>(c["trials"].size()) : 0;
    r.max_abs_err = num(c, "max_abs");
    r.max_rel_err = num(c, "max_rel");
    r.worst_output = c.value("worst_output", 0);
    r.worst_index = c.contains("worst_index") ? c["worst_index"].dump() : "";
    r.deterministic = c.value("deterministic", false);
    r.degenerate = c.value("degenerate", false);
    r.degenerate_reason = str(c, "degenerate_reason");
    r.reference_limited = c.value("reference_limited", false);
    r.passed_by = str(c, "passed_by");
    r.rescaled_trial = str(c, "rescaled_trial");
    if (c.contains("recheck") && c["recheck"].is_object()) r.recheck_passed = c["recheck"].value("passed", false);
  }
  const auto& t = result.value("timing", nlohmann::json());
  if (t.is_object()) {
    r.median_ms = num(t, "median_ms");
    r.mean_ms = num(t, "mean_ms");
    r.p20_ms = num(t, "p20_ms");
    r.p80_ms = num(t, "p80_ms");
    r.min_ms = num(t, "min_ms");
    r.max_ms = num(t, "max_ms");
    r.reps = t.value("reps", 0);
    r.host_ms_per_rep = num(t, "host_ms_per_rep");
    r.timing_suspect = t.value("timing_suspect", false);
    r.timing_note = str(t, "suspect_reason");
    r.l2_flush_bytes = t.value("l2_flush_bytes", 0);
    r.samples_ms = t.value("samples_ms", nlohmann::json::array());
  }
  if (auto st = result.find("stage_ms"); st != result.end() && st->is_array()) r.stage_ms = *st;
  const auto& s = result.value("seconds", nlohmann::json::object());
  r.eval_seconds = num(s, "total");
  r.eval_phases = nlohmann::json::object();
  for (const auto& [phase, secs] : s.items())
    if (phase != "total" && secs.is_number()) r.eval_phases[phase] = secs;
}

void record_finish(RunRecord& r, const ProblemContext& ctx) {
  (void)ctx;
  bool timed = r.status == "ok" && std::isfinite(r.median_ms) && r.median_ms > 0;
  if (timed) {
    if (std::isfinite(r.eager_ms)) r.speedup_eager = r.eager_ms / r.median_ms;
    if (std::isfinite(r.compile_ms)) r.speedup_compile = r.compile_ms / r.median_ms;
    if (std::isfinite(r.t_sol_ms) && r.t_sol_ms > 0) {
      r.frac_sol = r.t_sol_ms / r.median_ms;
      if (r.median_ms < kSolGuard * r.t_sol_ms) {
        r.status = "rejected";
        r.error = fmt::format(
            "rejected: faster than speed of light: median {:.6g} ms < {} x t_SOL {:.6g} ms ({} ceilings); "
            "the kernel likely skips work or runs it outside the timed stream. Kept for inspection, never counted",
            r.median_ms, kSolGuard, r.t_sol_ms, r.sol_source);
        r.speedup_eager = r.speedup_compile = std::nan("");  // an impossible time yields no speedup
      }
    }
  }
  r.counted = r.status == "ok" && !r.degenerate && !r.timing_suspect;
}

RunRecord evaluate_candidate(WorkerClient& worker, const BuiltLibrary& cand, const ProblemContext& ctx,
                             const EvalOptions& opt) {
  RunRecord r = record_start(cand, ctx, opt);
  auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  if (!cand.compile_error.empty() || cand.so_path.empty()) {
    r.status = "compile_error";
    r.phase = "compile";
    r.error = cand.compile_error.empty() ? "no kernel library was built" : cand.compile_error;
    record_finish(r, ctx);
    return r;
  }
  nlohmann::json req = {{"cmd", "evaluate"}, {"so", cand.so_path}, {"profile", opt.profile},
                        {"trials", opt.trials}, {"rescaled", opt.rescaled}, {"min_reps", opt.min_reps},
                        {"target_s", opt.target_s}};
  auto resp = worker.request(req, opt.timeout);
  if (!resp) {
    const Error& e = resp.error();
    r.status = e.code == ErrorCode::timeout ? "timeout" : "launch_error";
    r.phase = "worker";
    r.error = e.code == ErrorCode::timeout
                  ? fmt::format("timeout: no result within {:.0f} s (hang?); the worker was killed and restarted",
                                opt.timeout.count() / 1000.0)
                  : "the worker failed during evaluation: " + e.render();
    r.eval_seconds = seconds();
    record_finish(r, ctx);
    return r;
  }
  if (resp->value("status", "") != "ok") {
    r.status = "launch_error";
    r.phase = "worker";
    r.error = "the worker refused the request: " + resp->value("error", resp->dump());
  } else {
    record_apply_result(r, resp->value("result", nlohmann::json::object()));
    if (resp->value("fatal", false))
      r.error += (r.error.empty() ? "" : " ") + std::string("(the CUDA context was lost; the worker was restarted)");
  }
  if (!std::isfinite(r.eval_seconds)) r.eval_seconds = seconds();
  record_finish(r, ctx);
  return r;
}

std::string measure_baselines(WorkerClient& worker, ProblemContext& ctx, const std::string& compile_mode,
                              const std::string& cache_dir, std::chrono::milliseconds timeout, bool with_eager,
                              const std::string& cached_only_mode) {
  auto wire = [](const std::string& m) { return m == "default" ? std::string("compile") : m; };
  nlohmann::json modes = nlohmann::json::array();
  if (with_eager) modes.push_back("eager");
  if (!compile_mode.empty()) modes.push_back(wire(compile_mode));
  if (modes.empty()) return "";
  nlohmann::json req = {{"cmd", "baseline"}, {"modes", modes}};
  if (!cache_dir.empty()) req["cache_dir"] = cache_dir;
  if (!cached_only_mode.empty()) req["cached_only"] = nlohmann::json::array({wire(cached_only_mode)});
  auto resp = worker.request(req, timeout);
  if (!resp) return "baselines failed: " + resp.error().render();
  if (resp->value("status", "") != "ok") return "baselines failed: " + resp->value("error", resp->dump());
  std::string problems;
  const auto& b = resp->value("baselines", nlohmann::json::object());
  for (const auto& [mode, v] : b.items()) {
    if (v.contains("error")) {
      problems += mode + ": " + v.value("error", "") + "; ";
      continue;
    }
    double ms = num(v.value("timing", nlohmann::json::object()), "median_ms");
    if (v.contains("note") && v["note"].is_string()) problems += v["note"].get<std::string>() + "; ";
    if (mode == "eager") ctx.eager_ms = ms;
    else {
      ctx.compile_ms = ms;
      ctx.compile_mode = mode == "compile" ? "default" : mode;
    }
  }
  return problems;
}

}  // namespace ucut::eval
