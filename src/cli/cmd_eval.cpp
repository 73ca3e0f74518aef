// `ucutlass eval problem.py [prog.ucut ...] [--so lib.so ...]`: compiles each program (through
// `ucutlass compile`), evaluates every candidate under the evaluation contract on a pool of GPU
// workers, prints a table (or --json/--csv), and saves every record in the result store.
#include <CLI/CLI.hpp>
#include <future>
#include <optional>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "eval/candidate_build.h"
#include "eval/record_store.h"
#include "eval/sol_link.h"
#include "eval/worker_pool.h"
#include "support/contract_profiles.h"
#include "support/fs.h"

namespace ucut {
namespace {

struct EvalArgs {
  std::string problem;
  std::vector<std::string> programs;
  std::vector<std::string> libs;
  std::string profile = "default";
  std::string policy = "tf32";
  int trials = 5;
  double timeout_s = 120;
  std::string gpus = "all";
  std::string compile_baseline = "default";
  bool no_compile_baseline = false;
  double sol_ms = 0;
  std::string problem_json;
  bool no_sol = false;
  bool json = false;
  bool csv = false;
  std::string store;
  bool no_store = false;
  std::string build_dir;
};

int run_eval(const EvalArgs& a) {
  if (!fs_exists(a.problem))
    return cli_fail("eval", make_error(ErrorCode::not_found, a.problem + ": no such problem file",
                                       "pass a KernelBench-format .py file"));
  if (a.programs.empty() && a.libs.empty())
    return cli_usage("eval", "nothing to evaluate", "name a .ucut program or pass --so LIB.so");
  if (!contract_profile(a.profile)) {
    std::string names;
    for (const auto& n : contract_profile_names()) names += (names.empty() ? "" : " or ") + n;
    return cli_usage("eval", "unknown --profile '" + a.profile + "'", names);
  }
  for (const auto& l : a.libs)
    if (!fs_exists(l)) return cli_fail("eval", make_error(ErrorCode::not_found, "--so " + l + ": no such file"));
  for (const auto& p : a.programs)
    if (!fs_exists(p)) return cli_fail("eval", make_error(ErrorCode::not_found, p + ": no such file"));
  auto gpus = eval::pool_parse_gpus(a.gpus);
  if (!gpus) return cli_fail("eval", gpus.error(), kExitUsage);
  if (int rc = cli_require_gpu("eval"); rc != kExitOk) return rc;
  std::vector<eval::BuiltLibrary> cands;
  std::string build_root = a.build_dir.empty() ? fs_cache_dir() + "/build" : a.build_dir;
  for (const auto& p : a.programs) cands.push_back(eval::candidate_build(p, build_root));
  for (const auto& l : a.libs)
    cands.push_back({std::filesystem::path(l).filename().string(), std::filesystem::absolute(l).string(), ""});

  eval::PoolOptions po;
  po.gpus = *gpus;
  po.compile_mode = a.no_compile_baseline ? "" : a.compile_baseline;
  po.baseline_cache = fs_cache_dir() + "/baselines";
  // The SOL bound needs the Problem IR: extract it while the workers start (each takes seconds).
  const bool want_sol = !(a.sol_ms > 0) && !a.no_sol;
  std::future<Result<eval::TempProblemJson>> extracting;
  if (want_sol && a.problem_json.empty())
    extracting = std::async(std::launch::async, [p = std::filesystem::absolute(a.problem).string()] {
      return eval::extract_problem_json(p);
    });
  eval::WorkerPool pool(po);
  eval::ProblemContext ctx;
  std::string notes;
  std::string problem_abs = std::filesystem::absolute(a.problem).string();
  if (auto st = pool.prepare(problem_abs, ctx, notes); !st) return cli_fail("eval", st.error());
  if (!notes.empty()) std::fprintf(stderr, "ucutlass eval: warning: %s\n", notes.c_str());
  if (a.sol_ms > 0) {
    ctx.t_sol_ms = a.sol_ms;
    ctx.sol_source = "given";
  } else if (want_sol) {
    std::optional<eval::TempProblemJson> extracted;
    Result<eval::SolLink> sol = make_error(ErrorCode::internal, "no Problem IR");
    std::string json = a.problem_json;
    if (extracting.valid()) {
      auto t = extracting.get();
      if (t) {
        extracted.emplace(std::move(*t));
        json = extracted->path();
      } else {
        sol = t.error();
      }
    }
    if (!json.empty()) sol = eval::sol_for_problem(problem_abs, json, ctx.env.value("gpu", ""), cli_policy(a.policy));
    if (sol) {
      ctx.t_sol_ms = sol->t_sol_ms;
      ctx.sol_source = sol->source;
    } else {
      std::fprintf(stderr, "ucutlass eval: warning: no SOL bound (the SOL guard is off): %s\n",
                   sol.error().render().c_str());
    }
  }
  eval::EvalOptions eo;
  eo.profile = a.profile;
  eo.policy = cli_policy(a.policy);
  eo.trials = a.trials;
  eo.timeout = std::chrono::milliseconds(static_cast<int64_t>(a.timeout_s * 1000));
  eo.tool_commit = eval::tool_commit();
  auto records = pool.evaluate_all(cands, ctx, eo, [&](const eval::RunRecord& r) {
    if (!a.json && !a.csv) std::fprintf(stderr, "  %s: %s\n", r.candidate.c_str(), r.status.c_str());
  });

  if (!a.no_store) {
    std::string path = a.store.empty() ? memory::store_default_path() : a.store;
    auto store = memory::store_open_sqlite(path);
    if (!store) {
      std::fprintf(stderr, "ucutlass eval: warning: results not saved: %s\n", store.error().render().c_str());
    } else {
      auto run = (*store)->begin_run({"eval " + a.problem, eo.tool_commit, ctx.env.value("gpu", ""), a.profile, notes});
      for (const auto& r : records) {
        auto saved = run ? eval::record_save(**store, *run, r) : Result<int64_t>(run.error());
        if (!saved) std::fprintf(stderr, "ucutlass eval: warning: a record was not saved: %s\n", saved.error().render().c_str());
      }
      if (run) (void)(*store)->end_run(*run);
    }
  }
  if (a.json) std::fputs(eval::run_records_json(records).c_str(), stdout);
  else if (a.csv) std::fputs(eval::run_records_csv(records).c_str(), stdout);
  else {
    std::printf("problem %s on %s (torch %s), contract %s, t_SOL %s\n\n", ctx.info.value("name", "").c_str(),
                ctx.env.value("gpu", "?").c_str(), ctx.env.value("torch", "?").c_str(),
                records.empty() ? "" : records[0].contract.c_str(),
                std::isfinite(ctx.t_sol_ms) ? (std::to_string(ctx.t_sol_ms) + " ms (" + ctx.sol_source + ")").c_str()
                                            : "unknown");
    std::fputs(eval::run_records_markdown(records).c_str(), stdout);
  }
  for (const auto& r : records)
    if (r.status != "ok") return kExitFailed;
  return kExitOk;
}

}  // namespace

CommandRun cmd_eval(CLI::App& sub) {
  auto a = std::make_shared<EvalArgs>();
  sub.add_option("problem", a->problem, "KernelBench-format problem file")->required();
  sub.add_option("programs", a->programs, ".ucut programs to compile and evaluate");
  sub.add_option("--so", a->libs, "prebuilt kernel library to evaluate (repeatable)");
  sub.add_option("--profile", a->profile, "tolerance profile: default (1e-4 fp32, 1e-2 f16/bf16) or kb-v01 (1e-2)")
      ->capture_default_str()->envname("UCUTLASS_PROFILE");
  cli_add_policy_option(sub, a->policy, "precision policy named in the record and used for SOL: exact|tf32|bf16");
  sub.add_option("--trials", a->trials, "correctness trials (at least 5)")->capture_default_str();
  sub.add_option("--timeout", a->timeout_s, "seconds per candidate evaluation before the worker is killed")
      ->capture_default_str()->envname("UCUTLASS_EVAL_TIMEOUT");
  sub.add_option("--gpus", a->gpus, "GPUs to use, e.g. 0,1 (one worker each), or all")
      ->capture_default_str()->envname("UCUTLASS_GPUS");
  sub.add_option("--compile-mode", a->compile_baseline, "torch.compile baseline mode: default or max-autotune")
      ->capture_default_str();
  sub.add_flag("--no-compile-baseline", a->no_compile_baseline, "skip the torch.compile baseline");
  sub.add_option("--sol-ms", a->sol_ms, "t_SOL in ms (instead of the SOL analyzer's bound)");
  sub.add_option("--problem-json", a->problem_json, "Problem IR to use for SOL instead of extracting it");
  sub.add_flag("--no-sol", a->no_sol, "no SOL bound (the SOL guard is off)");
  sub.add_flag("--json", a->json, "print the records as JSON");
  sub.add_flag("--csv", a->csv, "print the records as CSV");
  cli_add_db_option(sub, a->store, "result store the records are saved in");
  sub.add_option("--store", a->store, "the former name of --db")->group("");  // hidden: old scripts
  sub.add_flag("--no-store", a->no_store, "do not save the records");
  sub.add_option("--build-dir", a->build_dir, "where programs are compiled (default: the cache folder)");
  return [a] {
    if (a->json && a->csv) return cli_usage("eval", "--json and --csv exclude each other");
    if (a->trials < 5)
      return cli_usage("eval", "--trials " + std::to_string(a->trials) + ": the contract needs at least 5");
    return run_eval(*a);
  };
}

}  // namespace ucut
