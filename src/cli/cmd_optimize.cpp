// `ucutlass optimize PROBLEM`: search for a faster correct kernel (docs/optimizer.md). The
// problem is extracted, its SOL estimated and it is lowered (app/pipeline.h); with a GPU the
// built-in search compiles ahead and measures (app/driver.h), without one (or with --plan) it
// plans: ranks, emits / compiles the top candidates and says plainly that nothing was measured.
// Live progress on stderr; Ctrl-C finishes the current record and writes the report; --resume
// picks up from out/<problem>/attempts.jsonl without measuring anything twice.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "build/builder.h"
#include "eval/evaluate.h"
#include "memory/store.h"
#include "sol/format.h"
#include "app/driver.h"
#include "space/precision.h"
#include "support/fs.h"

namespace ucut {

namespace {
std::atomic<bool> g_interrupt{false};
extern "C" void on_sigint(int) { g_interrupt = true; }

struct OptimizeArgs {
  std::string problem;
  int budget = 40;
  double time_budget_min = 0;
  std::string policy = "tf32", profile = "default", strategy = "builtin", db, out = "out";
  double eps = 0.25;
  int stagnation = 12, top_k = 8, max_compiles = 0;
  std::string gpus = "1", gpu = "h200";
  uint64_t seed = 1;
  bool resume = false, dry_run = false, no_memory = false;
  bool plan = false, no_compile = false, emit_only = false, no_cache = false;
  std::string build_dir, compile_mode = "default";
  double eval_timeout_s = 120;
  agent::AgentSettings agent;
  ExecutorArgs exec;
};

// Runs a prepared search to its stop (Ctrl-C finishes the current record and still writes the
// report), then prints the stop reason and where the report is.
int drive(app::ProblemRun& run) {
  std::signal(SIGINT, on_sigint);
  auto& s = run.session();
  if (auto st = s.start(); !st) return cli_fail("optimize", st.error());
  auto reason = s.run(&g_interrupt);
  std::signal(SIGINT, SIG_DFL);
  build::build_abort_compiles();  // lookahead still compiling would hold the report past the budget
  if (auto st = run.finish(); !st) return cli_fail("optimize", st.error());
  std::fprintf(stderr, "stopped: %s\n", search::stop_reason_text(reason).c_str());
  std::printf("%sreport: %s/report.md\n", run.simulated() ? (std::string(app::kSimulatedBanner) + ": ").c_str() : "",
              run.out_dir().c_str());
  std::fflush(stdout);
  // The LLM agent's conversation: said on stderr, and a model never reached is the exit code.
  return cli_report_agent("optimize");
}

int run_real(const OptimizeArgs& a, app::DriverOptions o) {
  app::PrepareOptions po;
  po.policy = cli_policy(a.policy);
  po.gpu = a.gpu;
  po.out_dir = a.out;
  po.reuse_extraction = a.resume;
  const bool gpu = !a.plan && (a.exec.eval_executor == "ray" || app::gpu_present());
  std::fprintf(stderr, "ucutlass optimize: %s: extracting, estimating SOL, lowering\n", a.problem.c_str());
  auto prepared = app::pipeline_prepare(a.problem, po);
  if (!prepared) {
    if (prepared.error().code != ErrorCode::unsupported || a.problem.ends_with(".json"))
      return cli_fail("optimize", prepared.error());
    std::fprintf(stderr, "ucutlass optimize: %s\n", prepared.error().render().c_str());
    // Outside the language: the result is PyTorch itself (measured where a GPU is).
    std::unique_ptr<app::GpuWorkers> workers;
    app::RealRunSetup setup;
    if (gpu) {
      auto ew = cli_eval_workers(a.exec, a.gpus);
      if (!ew) return cli_fail("optimize", ew.error(), ew.error().code == ErrorCode::invalid_input ? kExitUsage : kExitEnvironment);
      workers = std::make_unique<app::GpuWorkers>(ew->gpus, ew->worker);
      setup.workers = workers.get();
      setup.compile_mode = a.compile_mode == "none" ? "" : a.compile_mode;
      setup.baseline_cache = fs_cache_dir() + "/baselines";
    }
    auto oc = app::fallback_problem(a.problem, "unsupported", prepared.error().message, 0,
                                       gpu ? &setup : nullptr, o);
    std::fprintf(stderr, "ucutlass optimize: no kernel for %s: the result is the PyTorch fallback (model_new.py runs "
                 "the reference Model)%s\n", oc.name.c_str(),
                 oc.fallback() ? fmt::format(", eager {:.4g} ms", oc.eager_s * 1e3).c_str() : "");
    std::printf("report: %s/%s/report.md\n", a.out.c_str(), oc.name.c_str());
    return gpu && !oc.fallback() ? kExitFailed : kExitOk;
  }
  const app::PreparedProblem& p = *prepared;
  // With a GPU the run re-ranks and re-bounds for the GPU its workers find (app/driver.cpp); this
  // line is the plan's hardware row, and says so (run DP printed the H200's SOL on an H100).
  std::fprintf(stderr, "  SOL %s on %s (%s)%s; %zu stage%s lowered\n", sol::fmt_time(p.t_sol()).c_str(),
               p.hw.name.c_str(), sol::policy_name(p.policy),
               gpu ? ", as planned: the GPU the workers find sets the bound and the ranking" : "",
               p.lowered.program.stages.size(), p.lowered.program.stages.size() == 1 ? "" : "s");
  if (const double t_contract = app::pipeline_sol_contract(p.sol, app::pipeline_tf32_bound(p, a.profile));
      t_contract > p.t_sol() * (1 + 1e-9))
    std::fprintf(stderr, "  SOL %s at the precision the tolerance leaves (above the policy's): the bound of a correct "
                 "kernel\n", sol::fmt_time(t_contract).c_str());
  for (const auto& n : p.notes) std::fprintf(stderr, "  note: %s\n", n.c_str());
  const std::string build_root = a.build_dir.empty() ? fs_cache_dir() + "/build" : a.build_dir;
  if (!gpu || p.problem_py.empty()) {
    std::string why = a.plan ? "planning only (--plan): nothing was measured"
                      : !gpu ? "no GPU: nothing was measured"
                             : "a problem.json cannot be measured (the worker needs the .py): nothing was measured";
    app::PlanOptions plan;
    plan.top = std::max(1, std::min(a.top_k, a.budget > 0 ? a.budget : a.top_k));
    plan.profile = a.profile;
    plan.codegen = !a.no_compile;
    plan.compile = !a.emit_only && !a.no_compile;
    plan.build_root = build_root;
    plan.use_cache = !a.no_cache;
    if (plan.compile && !app::nvcc_available()) {
      plan.compile = false;
      why += "; nvcc not found: kernels were emitted (.cu), not compiled";
    }
    if (plan.compile) {
      auto compiler = cli_executor_compiler(a.exec);
      if (!compiler) return cli_fail("optimize", compiler.error());
      plan.compiler = *compiler;
    }
    if (a.strategy != "builtin") {
      // Another strategy plans by searching with the analytic model in place of the GPU: every
      // candidate it proposes is checked and emitted (compiled when nvcc is here), never measured.
      std::fprintf(stderr, "%s: searching with the %s strategy on the analytic model\n", why.c_str(), a.strategy.c_str());
      auto run = app::ProblemRun::planned(std::make_shared<const app::PreparedProblem>(std::move(*prepared)), plan, o);
      if (!run) return cli_fail("optimize", run.error());
      return drive(**run);
    }
    std::fprintf(stderr, "%s: planning\n", why.c_str());
    auto r = app::plan_problem(p, plan, o, why);
    if (!r) return cli_fail("optimize", r.error());
    std::printf("%s: %s\n", p.name.c_str(), why.c_str());
    std::printf("  %zu valid configurations; the %zu a search would measure first (best-ranked per "
                "tile/schedule/scheduler shape):\n", r->plan.valid, r->plan.top.size());
    for (const auto& c : r->plan.top) {
      std::string built = !c.built ? "" : !c.built->ok ? "  [build failed]" : !c.built->so_path.empty() ? "  [built]" : "  [.cu]";
      std::printf("  %2d. %-60s predicted %s%s\n", c.rank, c.cand.name.c_str(), sol::fmt_time(c.cand.predicted_s).c_str(),
                  built.c_str());
    }
    bool tf32_rung = false;
    for (const auto& c : r->plan.top) tf32_rung = tf32_rung || c.cand.name.rfind("gemm_tf32_", 0) == 0 || c.cand.name.rfind("gemm_tf32m_", 0) == 0;
    if (tf32_rung && space::space_profile_rtol_f32(a.profile) < space::kTf32RelativeError)  // kb-v01's 1e-2 holds TF32's rounding
      std::printf("  note: TF32 on fp32 data may miss the contract's tolerance (atol = rtol = 1e-4); on a GPU the\n"
                  "  search then climbs to 3xTF32 (f32x3s or f32x3k on TF32 tensor cores, then f32x3), which is fp32-faithful,\n"
                  "  and to FP32 SIMT where the reference's own rounding is the obstacle (docs/optimizer.md)\n");
    if (!r->plan.precision_note.empty()) std::printf("  note: %s\n", r->plan.precision_note.c_str());
    std::printf("report: %s/report.md\n", r->dir.c_str());
    return 0;
  }
  auto ew = cli_eval_workers(a.exec, a.gpus);
  if (!ew) return cli_fail("optimize", ew.error(), ew.error().code == ErrorCode::invalid_input ? kExitUsage : kExitEnvironment);
  app::GpuWorkers workers(ew->gpus, ew->worker);
  app::RealRunSetup setup;
  setup.workers = &workers;
  auto compiler = cli_executor_compiler(a.exec);
  if (!compiler) return cli_fail("optimize", compiler.error());
  setup.nvcc = *compiler;
  setup.build_root = build_root;
  setup.use_cache = !a.no_cache;
  setup.compile_mode = a.compile_mode == "none" ? "" : a.compile_mode;
  setup.baseline_cache = fs_cache_dir() + "/baselines";
  setup.eval.timeout = std::chrono::milliseconds(static_cast<int64_t>(a.eval_timeout_s * 1000));
  setup.eval.tool_commit = eval::tool_commit();
  auto run = app::ProblemRun::real(std::make_shared<const app::PreparedProblem>(std::move(*prepared)), setup, o);
  if (!run) return cli_fail("optimize", run.error());
  return drive(**run);
}

int run_optimize(const OptimizeArgs& a) {
  if (int rc = cli_check_executor("optimize", a.exec); rc != kExitOk) return rc;
  std::unique_ptr<memory::MemoryDb> mem;
  if (!a.no_memory) {
    auto db = memory::MemoryDb::open(cli_memory_path(a.db, app::ProblemRun::is_synthetic(a.problem), a.out));
    if (!db) return cli_fail("optimize", db.error());
    mem = std::move(*db);
  }
  app::DriverOptions o;
  o.session.budget.attempts = a.budget;
  o.session.budget.wall_s = a.time_budget_min * 60;
  o.session.rules.eps = a.eps;
  o.session.rules.stagnation = a.stagnation;
  o.seed = a.seed;
  o.strategy = a.strategy;
  o.strategy_settings = agent::agent_settings_to_json(a.agent);
  o.session.budget.tokens = a.agent.problem_tokens;
  o.top_k = a.top_k;
  o.max_compiles = a.max_compiles;
  o.policy = cli_policy(a.policy);
  o.profile = a.profile;
  o.out_dir = a.out;
  o.resume = a.resume;
  o.memory = mem.get();
  o.progress = stderr;
  if (!app::ProblemRun::is_synthetic(a.problem)) {
    // The agent's settings before anything runs: a wrong one is the command line's, not a failed request.
    if (int rc = cli_check_agent("optimize", a.strategy, a.agent); rc != kExitOk) return rc;
    if (a.dry_run) {
      std::printf("would %s %s: budget %d attempts, top-k %d, policy %s, seed %llu\n",
                  a.plan || (a.exec.eval_executor != "ray" && !app::gpu_present()) ? "plan (no GPU: measure nothing)"
                                                                                     : "search",
                  a.problem.c_str(),
                  a.budget, a.top_k, a.policy.c_str(), static_cast<unsigned long long>(a.seed));
      return 0;
    }
    return run_real(a, o);
  }
  auto run = app::ProblemRun::synthetic(a.problem, o);
  if (!run) return cli_fail("optimize", run.error());
  if (a.dry_run) {
    std::printf("would search %s: budget %d attempts, eps %.2f, stagnation %d, seed %llu\n",
                (*run)->name().c_str(), a.budget, a.eps, a.stagnation,
                static_cast<unsigned long long>(a.seed));
    return 0;
  }
  return drive(**run);
}
}  // namespace

CommandRun cmd_optimize(CLI::App& sub) {
  auto a = std::make_shared<OptimizeArgs>();
  sub.add_option("problem", a->problem,
                 "problem.py (KernelBench format), a problem.json (planning only), or 'synthetic[:name]': a "
                 "SIMULATED problem on a model cost surface (nothing compiles or runs; a demo and test of the search)")
      ->required();
  sub.add_option("--budget", a->budget, "attempts (every evaluation counts)")->capture_default_str();
  sub.add_option("--time-budget", a->time_budget_min, "wall-time limit in minutes (0: none)")->capture_default_str();
  cli_add_policy_option(sub, a->policy, "precision policy: exact | tf32 | bf16");
  cli_add_profile_option(sub, a->profile);
  cli_add_strategy_option(sub, a->strategy);
  cli_add_agent_options(sub, a->agent);
  cli_add_executor_options(sub, a->exec);
  sub.add_option("--eps", a->eps, "stop when t_best <= (1+eps)*t_SOL and beating eager (<0: off)")->capture_default_str();
  sub.add_option("--stagnation", a->stagnation, "stop after this many attempts without improvement (0: off)")->capture_default_str();
  sub.add_option("--seed", a->seed, "makes the search deterministic")->capture_default_str();
  sub.add_option("--top-k", a->top_k, "ranked candidates tried before refinement")->capture_default_str();
  cli_add_max_compiles_option(sub, a->max_compiles);
  cli_add_db_option(sub, a->db, "result store holding the memory (a synthetic run: OUT/simulated-memory.db)");
  cli_add_output_dir_option(sub, a->out, "output folder; results go to OUT/<problem>/")->capture_default_str();
  sub.add_option("--gpus", a->gpus, "GPUs to evaluate on: a count, a list of indices (0,2) or all")
      ->capture_default_str()->envname("UCUTLASS_GPUS");
  sub.add_option("--gpu", a->gpu, "hardware table row assumed for SOL and ranking when no GPU says otherwise")
      ->capture_default_str()->envname("UCUTLASS_GPU");
  sub.add_flag("--plan", a->plan, "plan only (rank, emit, compile), even with a GPU: measure nothing");
  sub.add_flag("--no-compile", a->no_compile, "planning: rank only, emit no kernels");
  sub.add_flag("--emit-only", a->emit_only, "planning: write the top candidates' .cu, run no nvcc");
  sub.add_flag("--no-cache", a->no_cache, "always run nvcc, ignoring the kernel cache")->envname("UCUTLASS_NO_CACHE");
  sub.add_option("--build-dir", a->build_dir, "where candidates are built (default: the cache folder)");
  sub.add_option("--compile-mode", a->compile_mode, "torch.compile baseline: default, max-autotune or none")
      ->capture_default_str();
  sub.add_option("--eval-timeout", a->eval_timeout_s, "seconds per candidate evaluation before the worker is killed")
      ->capture_default_str()->envname("UCUTLASS_EVAL_TIMEOUT");
  sub.add_flag("--resume", a->resume, "continue from OUT/<problem>/attempts.jsonl");
  sub.add_flag("--dry-run", a->dry_run, "say what would be searched, run nothing");
  sub.add_flag("--no-memory", a->no_memory, "neither seed from nor learn into the memory");
  return [a] { return run_optimize(*a); };
}

}  // namespace ucut
