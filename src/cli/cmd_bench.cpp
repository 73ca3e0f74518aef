// `ucutlass bench DIR --budget N`: a suite under the SuiteScheduler (most headroom first), then
// the headline figures of EVAL-CONTRACT §5 with cost figures, report.json/md and an HTML report.
// DIR is a folder of KernelBench-format problem .py files, or 'synthetic': a simulated suite on
// the model surface (search/fake_surface.h) whose reports say SIMULATED in their first line and
// file names (simulated-report.md, ...) and whose memory is its own. Every problem is
// extracted, estimated and lowered first; one that does not lower counts as a failure
// ("unsupported", "extract_error") in the headline. Without a GPU (or with --plan) every problem
// is planned instead (app/driver.h plan_problem) and the suite report says nothing was measured.
// GCC 12 at -O2 reports a false maybe-uninitialized inside nlohmann::json's iterators when
// inlining this file's report code (a known GCC false positive); nothing here is uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <CLI/CLI.hpp>
#include <fmt/format.h>


#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <filesystem>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "memory/store.h"
#include "report/headline_figures.h"
#include "report/html_report.h"
#include "build/builder.h"
#include "eval/evaluate.h"
#include "app/driver.h"
#include "app/suite_report.h"
#include "search/compile_gate.h"
#include "search/suite.h"
#include "support/fs.h"
#include "support/parallel.h"

namespace ucut {

namespace {
std::atomic<bool> g_bench_interrupt{false};
extern "C" void on_bench_sigint(int) { g_bench_interrupt = true; }

struct BenchArgs {
  std::string dir;
  int budget = 40, problems = 4;
  std::string html, out = "out/bench", db, policy = "tf32", profile = "default", strategy = "builtin";
  double eps = 0.25;
  int stagnation = 12;
  uint64_t seed = 1;
  bool no_memory = false;
  std::string gpus = "1", gpu = "h200", build_dir;
  bool plan = false, no_compile = false, emit_only = false, resume = false;
  int top_k = 8, lookahead = 0, max_compiles = 0, breadth = 3;
  double time_budget_min = 0;
  std::string match;
  agent::AgentSettings agent;
  ExecutorArgs exec;
};

// Planning a suite: one plan per problem, then a table. Nothing is measured.
int plan_suite(const BenchArgs& a, const std::vector<std::string>& files, const app::DriverOptions& o,
               const std::string& why) {
  app::PrepareOptions po;
  po.policy = cli_policy(a.policy);
  po.gpu = a.gpu;
  po.out_dir = a.out;
  app::PlanOptions plan;
  plan.top = std::max(1, std::min(a.top_k, a.budget));
  plan.profile = a.profile;
  plan.codegen = !a.no_compile;
  plan.compile = !a.no_compile && !a.emit_only && app::nvcc_available();
  if (plan.compile) {
    auto compiler = cli_executor_compiler(a.exec);
    if (!compiler) return cli_fail("bench", compiler.error());
    plan.compiler = *compiler;
  }
  plan.build_root = a.build_dir.empty() ? fs_cache_dir() + "/build" : a.build_dir;
  app::SuitePlan sp = app::suite_plan(a.dir, files, po, plan, o, why, [](const app::PlannedProblem& r) {
    if (r.status == "planned")
      std::fprintf(stderr, "  %s: planned, %s\n", r.name.c_str(),
                   r.best_ranked.empty() ? "no candidate" : r.best_ranked.c_str());
    else if (r.status != "plan_error")
      std::fprintf(stderr, "  %s: %s: %s\n", r.name.c_str(), r.status.c_str(), app::suite_error_line(r.error).c_str());
  });
  sp.executor = cli_executor_summary(plan.compiler);
  if (!sp.executor.empty()) std::fprintf(stderr, "%s\n", sp.executor.c_str());
  (void)fs_mkdirs(a.out);
  Status st = fs_write_atomic(a.out + "/report.json", app::suite_plan_json(sp).dump(2) + "\n");
  if (st) st = fs_write_atomic(a.out + "/report.md", app::suite_plan_markdown(sp));
  if (!st) return cli_fail("bench", st.error());
  std::printf("%s\n%d of %zu problems planned; report: %s/report.md\n", why.c_str(), sp.planned, files.size(),
              a.out.c_str());
  return 0;
}

int run_bench(const BenchArgs& a) {
  if (int rc = cli_check_executor("bench", a.exec); rc != kExitOk) return rc;
  const auto started = std::chrono::steady_clock::now();
  search::compile_gate().reset_usage();  // the headline's compile-slot figures are this run's
  // Python processes (extraction, ~4 s each; model_new.py exports, ~2 s) run this many at once.
  const unsigned python_width = std::clamp(std::thread::hardware_concurrency() / 2, 1u, 8u);
  const bool synthetic = app::ProblemRun::is_synthetic(a.dir);
  std::vector<std::string> files;
  if (!synthetic) {
    files = cli_suite_files(a.dir, a.match);
    if (files.empty())
      return cli_fail("bench", make_error(fs_exists(a.dir) ? ErrorCode::invalid_input : ErrorCode::not_found,
                                          a.dir + ": no problem .py files found" +
                                              (a.match.empty() ? "" : " matching --match " + a.match),
                                          "pass a folder of KernelBench-format problems (e.g. problems/), or 'synthetic'"));
  }
  if (!synthetic)
    if (int rc = cli_check_agent("bench", a.strategy, a.agent); rc != kExitOk) return rc;
  std::unique_ptr<memory::MemoryDb> mem;
  if (!a.no_memory) {
    auto db = memory::MemoryDb::open(cli_memory_path(a.db, synthetic, a.out));
    if (!db) return cli_fail("bench", db.error());
    mem = std::move(*db);
  }
  app::DriverOptions o;
  o.session.budget.attempts = a.budget;
  o.session.rules.eps = a.eps;
  o.session.rules.stagnation = a.stagnation;
  o.seed = a.seed;
  o.strategy = a.strategy;
  o.strategy_settings = agent::agent_settings_to_json(a.agent);
  o.session.budget.tokens = a.agent.problem_tokens;
  o.top_k = a.top_k;
  o.max_compiles = a.max_compiles;
  o.policy = cli_policy(a.policy);
  o.out_dir = a.out;
  o.resume = a.resume;
  o.lookahead = a.lookahead;
  o.memory = mem.get();
  o.profile = a.profile;
  std::unique_ptr<app::GpuWorkers> workers;  // before runs: the runs' evaluators use it
  app::RealRunSetup fallback_setup;           // the workers and baseline settings, for fallbacks
  std::vector<std::unique_ptr<app::ProblemRun>> runs;
  std::vector<search::SearchSession*> sessions;
  std::vector<app::ProblemOutcome> outcomes;  // problems that never ran first
  struct FallbackJob {
    std::string file, status, message;
  };
  std::vector<FallbackJob> fallback_jobs;  // problems without a search: measured beside the suite
  if (synthetic) {
    for (int i = 0; i < a.problems; ++i) {
      auto r = app::ProblemRun::synthetic(fmt::format("synthetic:p{}", i), o);
      if (!r) return cli_fail("bench", r.error());
      sessions.push_back(&(*r)->session());
      runs.push_back(std::move(*r));
    }
  } else {
    if (a.plan || (a.exec.eval_executor != "ray" && !app::gpu_present())) {
      std::string why = a.plan ? "planning only (--plan): nothing was measured" : "no GPU: nothing was measured";
      if (cli_strategy_uses_agent(a.strategy)) {
        // A suite plans with the built-in ranking alone: say so rather than take --strategy llm silently.
        why += "; the LLM agent was not used (a suite plans with the built-in ranking)";
        std::fprintf(stderr, "ucutlass bench: note: --strategy %s: %s, so the suite is planned with the built-in "
                     "ranking and the model is never asked; 'ucutlass optimize PROBLEM --strategy %s' plans one "
                     "problem with the model\n", a.strategy.c_str(),
                     a.plan ? "--plan measures nothing" : "there is no GPU", a.strategy.c_str());
      }
      return plan_suite(a, files, o, why);
    }
    auto eval_workers = cli_eval_workers(a.exec, a.gpus);
    if (!eval_workers)
      return cli_fail("bench", eval_workers.error(),
                      eval_workers.error().code == ErrorCode::invalid_input ? kExitUsage : kExitEnvironment);
    workers = std::make_unique<app::GpuWorkers>(eval_workers->gpus, eval_workers->worker);
    app::RealRunSetup setup;
    setup.workers = workers.get();
    auto compiler = cli_executor_compiler(a.exec);
    if (!compiler) return cli_fail("bench", compiler.error());
    setup.nvcc = *compiler;
    setup.build_root = a.build_dir.empty() ? fs_cache_dir() + "/build" : a.build_dir;
    setup.baseline_cache = fs_cache_dir() + "/baselines";
    // A suite on one GPU measured every problem's eager and torch.compile baselines before any
    // attempt (run CB: 49 of 80 in 6.5 minutes, no attempt): torch.compile's comes after a
    // problem's first attempt instead (docs/eval-contract.md §2).
    if (files.size() > 1) setup.compile_baseline_after = 1;
    setup.eval.tool_commit = eval::tool_commit();
    fallback_setup = setup;
    if (o.lookahead == 0 && files.size() > 1) {
      // Enough compiles in flight across the suite to keep the build pool busy twice over.
      const int jobs = build::build_default_jobs();
      const int n = static_cast<int>(files.size());
      // A suite of more problems than twice the pool keeps it busy with one each: their first
      // candidates then all compile in the first wave, not half of them behind the others' seconds.
      o.lookahead = std::clamp((2 * jobs + n - 1) / n, 1, 16);
    }
    app::PrepareOptions po;
    po.policy = cli_policy(a.policy);
    po.gpu = a.gpu;
    po.out_dir = a.out;
    po.reuse_extraction = a.resume;
    // Extraction (a Python process each, ~4 s) runs for several problems at once.
    std::vector<std::optional<Result<app::PreparedProblem>>> prepared(files.size());
    parallel_for(files.size(), python_width,
                 [&](size_t i, size_t) { prepared[i] = app::pipeline_prepare(files[i], po); });
    for (size_t fi = 0; fi < files.size(); ++fi) {
      const std::string& f = files[fi];
      auto& p = *prepared[fi];
      app::ProblemOutcome failed;
      failed.name = app::pipeline_problem_name(f);
      if (!p) {
        // No search: the reference is measured and kept (the PyTorch fallback), beside the suite.
        std::fprintf(stderr, "  %s: %s\n", failed.name.c_str(), p.error().message.substr(0, 300).c_str());
        fallback_jobs.push_back({f, app::suite_failure_name(p.error()), p.error().message});
        continue;
      }
      auto r = app::ProblemRun::real(std::make_shared<const app::PreparedProblem>(std::move(*p)), setup, o);
      if (!r) {
        failed.failure = "setup_error";
        std::fprintf(stderr, "  %s: %s\n", failed.name.c_str(), r.error().render().c_str());
        outcomes.push_back(failed);
        continue;
      }
      sessions.push_back(&(*r)->session());
      runs.push_back(std::move(*r));
    }
  }
  search::SteadyClock clock;
  search::SuiteOptions so;
  so.pool = a.budget * static_cast<int>(sessions.size());
  if (a.time_budget_min > 0) {
    // The budget is the whole command's: extraction already spent part of it, and finishing
    // (each problem's model_new.py export in Python, python_width at a time, then the reports)
    // needs the rest, so the search stops early enough for the report to land inside it.
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double finish_s = 10 + 4.0 * std::ceil(static_cast<double>(runs.size() + fallback_jobs.size()) / python_width);
    so.wall_s = std::max(1.0, a.time_budget_min * 60 - spent - finish_s);
    std::fprintf(stderr, "ucutlass bench: %zu problems prepared in %.0f s; searching for %.0f s, %.0f s kept to finish\n",
                 runs.size(), spent, so.wall_s, finish_s);
  }
  so.overlap = !synthetic;
  so.breadth = a.breadth;
  search::SuiteScheduler suite(sessions, so, clock);
  // Until the reports are written, Ctrl-C (or a time limit's SIGINT) stops the search and keeps
  // everything measured: the handler only raises the flag the scheduler reads.
  std::signal(SIGINT, on_bench_sigint);
  struct RestoreSigint {
    ~RestoreSigint() { std::signal(SIGINT, SIG_DFL); }
  } restore_sigint;
  // The fallbacks' baselines share the GPU workers with the suite (each measurement holds its
  // worker alone, so no two timings overlap on one GPU).
  std::vector<app::ProblemOutcome> fallbacks(fallback_jobs.size());
  std::thread fallback_thread([&] {
    for (size_t i = 0; i < fallback_jobs.size(); ++i)
      fallbacks[i] = app::fallback_problem(fallback_jobs[i].file, fallback_jobs[i].status,
                                              fallback_jobs[i].message, 0, &fallback_setup, o);
  });
  const auto search_started = std::chrono::steady_clock::now();
  suite.run(&g_bench_interrupt);
  const double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - search_started).count();
  fallback_thread.join();
  outcomes.insert(outcomes.end(), fallbacks.begin(), fallbacks.end());
  build::build_abort_compiles();  // lookahead still compiling would hold the report past the budget
  app::CostFigures cost;
  report::HtmlReport html;
  html.title = "ucutlass bench: " + a.dir + (synthetic ? " (SIMULATED)" : "");
  html.policy = a.policy;  // the checked name, for the page
  html.profile = a.profile;
  if (synthetic)
    html.banner = std::string(app::kSimulatedBanner) + ": every figure on this page comes from the synthetic cost "
                  "model, a demo and test of the search, not from a GPU.";
  for (const auto& oc : outcomes) html.problems.push_back(report::html_problem(oc, false));
  // Each problem's outputs and report, side by side: writing model_new.py starts Python (~2 s
  // each), which one after another held a 25-problem suite's report ~50 s past its time budget.
  std::vector<Status> finished(runs.size(), ok_status());
  parallel_for(runs.size(), python_width, [&](size_t i, size_t) { finished[i] = runs[i]->finish(); });
  for (size_t i = 0; i < runs.size(); ++i) {
    auto& r = runs[i];
    if (!finished[i]) std::fprintf(stderr, "ucutlass bench: warning: %s\n", finished[i].error().render().c_str());
    auto rep = r->report();
    auto oc = app::run_report_outcome(rep);
    app::cost_add(cost, rep.cost);
    html.problems.push_back(report::html_problem(oc));
    outcomes.push_back(std::move(oc));
  }
  if (!synthetic) {
    const build::BuildStats bs = build::build_stats();
    cost.nvcc_jobs = bs.nvcc_jobs;
    cost.nvcc_s = bs.nvcc_s;
    cost.stored_built = bs.stored_built;
    cost.stored_reused = bs.stored_reused;
    cost.compile_slots = search::compile_gate().width();
    cost.search_s = search_s;
    if (workers) cost.gpus = static_cast<int>(workers->size());
    const search::CompileGate::Usage gate = search::compile_gate().usage();
    cost.compile_waiting_s = gate.waiting_s;
    cost.compile_slot_s_waiting = gate.slot_s_waiting;
    for (const auto& oc : outcomes) cost.attempts += oc.attempts;
    if (workers) {
      const auto use = workers->usage();
      cost.worker_busy_s = use.busy_s;
      cost.worker_load_s = use.load_s;
      cost.worker_loads = use.loads;
      cost.worker_kept_load_s = use.kept_load_s;
      cost.worker_kept_loads = use.kept_loads;
      cost.worker_baseline_s = use.baseline_s;
    }
  }
  auto h = app::headline_compute(outcomes, cost);
  h.simulated = synthetic;
  h.run_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string text = app::headline_render(h);
  std::printf("%s", text.c_str());
  html.figures = report::headline_figures(h);
  // A simulated suite's files say so in their names, beside any real report in the same folder.
  const std::string stem = a.out + (synthetic ? "/simulated-" : "/");
  (void)fs_mkdirs(a.out);
  Status st = fs_write_atomic(stem + "report.json", app::suite_report_json(a.dir, synthetic, h, outcomes).dump(2) + "\n");
  if (st) st = fs_write_atomic(stem + "report.md", app::suite_report_markdown(synthetic, text, h, outcomes));
  if (st) st = fs_write_atomic(a.html.empty() ? stem + "bench.html" : a.html, report::html_render(html));
  if (!st) return cli_fail("bench", st.error());
  std::fflush(stdout);
  // Each problem's conversation with the model; a model no problem ever reached is the exit code.
  return cli_report_agent("bench");
}
}  // namespace

CommandRun cmd_bench(CLI::App& sub) {
  auto a = std::make_shared<BenchArgs>();
  sub.add_option("dir", a->dir,
                 "suite folder of problem.py files, or 'synthetic': a SIMULATED suite on a model cost surface "
                 "(nothing compiles or runs; a demo and test of the search; reports are named simulated-*)")
      ->required();
  sub.add_option("--gpus", a->gpus, "GPUs to evaluate on: a count, a list of indices (0,2) or all")
      ->capture_default_str()->envname("UCUTLASS_GPUS");
  sub.add_option("--gpu", a->gpu, "hardware table row assumed for SOL and ranking when no GPU says otherwise")
      ->capture_default_str()->envname("UCUTLASS_GPU");
  sub.add_flag("--plan", a->plan, "plan every problem (rank, emit, compile), even with a GPU: measure nothing");
  sub.add_flag("--no-compile", a->no_compile, "planning: rank only, emit no kernels");
  sub.add_flag("--emit-only", a->emit_only, "planning: write the top candidates' .cu, run no nvcc");
  sub.add_option("--top-k", a->top_k, "ranked candidates tried first (planning: emitted)")->capture_default_str();
  cli_add_max_compiles_option(sub, a->max_compiles);
  sub.add_option("--build-dir", a->build_dir, "where candidates are built (default: the cache folder)");
  sub.add_option("--budget", a->budget, "attempts per problem (the suite pool is budget x problems)")->capture_default_str();
  sub.add_option("--problems", a->problems, "synthetic suite size")->capture_default_str();
  sub.add_option("--html", a->html, "HTML report path (default OUT/bench.html; synthetic: OUT/simulated-bench.html)");
  cli_add_output_dir_option(sub, a->out, "output folder")->capture_default_str();
  cli_add_db_option(sub, a->db, "result store holding the memory (a synthetic run: OUT/simulated-memory.db)");
  cli_add_policy_option(sub, a->policy, "precision policy: exact | tf32 | bf16");
  cli_add_profile_option(sub, a->profile);
  cli_add_strategy_option(sub, a->strategy);
  cli_add_agent_options(sub, a->agent);
  cli_add_executor_options(sub, a->exec);
  sub.add_option("--eps", a->eps, "SOL proximity stop rule")->capture_default_str();
  sub.add_option("--stagnation", a->stagnation, "stagnation stop rule")->capture_default_str();
  sub.add_option("--seed", a->seed, "makes the run deterministic")->capture_default_str();
  sub.add_flag("--no-memory", a->no_memory, "neither seed from nor learn into the memory");
  sub.add_option("--match", a->match, "only problem files matching these comma-separated patterns, with or without .py (e.g. 'gemm_*,epi_swiglu')");
  sub.add_option("--time-budget", a->time_budget_min, "suite wall-time limit in minutes (0: none); the report is written when it passes")
      ->capture_default_str();
  sub.add_flag("--resume", a->resume, "continue every problem from OUT/<problem>/attempts.jsonl (nothing measured is redone)");
  sub.add_option("--lookahead", a->lookahead, "candidates compiling ahead per problem (0: twice the build pool spread over the problems, 1 to 16)")
      ->capture_default_str();
  sub.add_option("--breadth", a->breadth,
                 "attempts every problem with a correct kernel gets before headroom decides who gets more (0: headroom alone)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  return [a] { return run_bench(*a); };
}

}  // namespace ucut
