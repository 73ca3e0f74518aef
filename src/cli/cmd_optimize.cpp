// `ucutlass optimize PROBLEM`: search for a faster correct kernel (docs/optimizer.md). Live
// progress on stderr; Ctrl-C finishes the current record and writes the report; --resume picks
// up from out/<problem>/attempts.jsonl without measuring anything twice.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "memory/store.h"
#include "search/driver.h"

namespace ucut {

namespace {
std::atomic<bool> g_interrupt{false};
extern "C" void on_sigint(int) { g_interrupt = true; }

struct OptimizeArgs {
  std::string problem;
  int budget = 40;
  double time_budget_min = 0;
  std::string policy = "tf32", profile = "default", db, out = "out";
  double eps = 0.25;
  int stagnation = 12, gpus = 1, top_k = 8;
  uint64_t seed = 1;
  bool resume = false, dry_run = false, no_memory = false;
};

int run_optimize(const OptimizeArgs& a) {
  if (!search::ProblemRun::is_synthetic(a.problem)) {
    std::fprintf(stderr,
                 "ucutlass optimize: %s: real problems are not wired into the search yet (the "
                 "adapters over src/space, src/build and src/eval are pending)\n"
                 "hint: try 'ucutlass optimize synthetic' to see the search loop on a model surface\n",
                 a.problem.c_str());
    return 2;
  }
  std::unique_ptr<memory::MemoryDb> mem;
  if (!a.no_memory) {
    auto db = memory::MemoryDb::open(a.db.empty() ? memory::store_default_path() : a.db);
    if (!db) {
      std::fprintf(stderr, "ucutlass optimize: %s\n", db.error().render().c_str());
      return 2;
    }
    mem = std::move(*db);
  }
  search::DriverOptions o;
  o.session.budget.attempts = a.budget;
  o.session.budget.wall_s = a.time_budget_min * 60;
  o.session.rules.eps = a.eps;
  o.session.rules.stagnation = a.stagnation;
  o.seed = a.seed;
  o.top_k = a.top_k;
  o.policy = a.policy;
  o.profile = a.profile;
  o.out_dir = a.out;
  o.resume = a.resume;
  o.memory = mem.get();
  o.progress = stderr;
  auto run = search::ProblemRun::synthetic(a.problem, o);
  if (!run) {
    std::fprintf(stderr, "ucutlass optimize: %s\n", run.error().render().c_str());
    return 2;
  }
  if (a.dry_run) {
    std::printf("would search %s: budget %d attempts, eps %.2f, stagnation %d, seed %llu\n",
                (*run)->name().c_str(), a.budget, a.eps, a.stagnation,
                static_cast<unsigned long long>(a.seed));
    return 0;
  }
  std::signal(SIGINT, on_sigint);
  auto& s = (*run)->session();
  if (auto st = s.start(); !st) {
    std::fprintf(stderr, "ucutlass optimize: %s\n", st.error().render().c_str());
    return 2;
  }
  auto reason = s.run(&g_interrupt);
  std::signal(SIGINT, SIG_DFL);
  if (auto st = (*run)->finish(); !st) {
    std::fprintf(stderr, "ucutlass optimize: %s\n", st.error().render().c_str());
    return 2;
  }
  std::fprintf(stderr, "stopped: %s\n", search::stop_reason_text(reason).c_str());
  std::printf("report: %s/report.md\n", (*run)->out_dir().c_str());
  return 0;
}
}  // namespace

CommandRun cmd_optimize(CLI::App& sub) {
  auto a = std::make_shared<OptimizeArgs>();
  sub.add_option("problem", a->problem, "problem.py (KernelBench format), or 'synthetic[:name]'")->required();
  sub.add_option("--budget", a->budget, "attempts (every evaluation counts)")->capture_default_str();
  sub.add_option("--time-budget", a->time_budget_min, "wall-time limit in minutes (0: none)")->capture_default_str();
  sub.add_option("--policy", a->policy, "precision policy: exact | tf32 | bf16")->capture_default_str();
  sub.add_option("--profile", a->profile, "contract profile: default | kb-v01")->capture_default_str();
  sub.add_option("--eps", a->eps, "stop when t_best <= (1+eps)*t_SOL and beating eager (<0: off)")->capture_default_str();
  sub.add_option("--stagnation", a->stagnation, "stop after this many attempts without improvement (0: off)")->capture_default_str();
  sub.add_option("--seed", a->seed, "makes the search deterministic")->capture_default_str();
  sub.add_option("--top-k", a->top_k, "ranked candidates tried before refinement")->capture_default_str();
  sub.add_option("--db", a->db, "result store holding the memory")->envname("UCUTLASS_STORE");
  sub.add_option("--out", a->out, "output folder; results go to OUT/<problem>/")->capture_default_str();
  sub.add_option("--gpus", a->gpus, "GPUs to evaluate on")->capture_default_str();
  sub.add_flag("--resume", a->resume, "continue from OUT/<problem>/attempts.jsonl");
  sub.add_flag("--dry-run", a->dry_run, "say what would be searched, run nothing");
  sub.add_flag("--no-memory", a->no_memory, "neither seed from nor learn into the memory");
  return [a] { return run_optimize(*a); };
}

}  // namespace ucut
