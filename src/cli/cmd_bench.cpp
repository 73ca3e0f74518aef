// `ucutlass bench DIR --budget N`: a suite under the SuiteScheduler (most headroom first), then
// the headline figures of EVAL-CONTRACT §5 with cost figures, report.json/md and an HTML report.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "memory/store.h"
#include "report/html_report.h"
#include "search/driver.h"
#include "search/suite.h"
#include "support/fs.h"

namespace ucut {

namespace {
std::atomic<bool> g_bench_interrupt{false};
extern "C" void on_bench_sigint(int) { g_bench_interrupt = true; }

struct BenchArgs {
  std::string dir;
  int budget = 40, problems = 4;
  std::string html, out = "out/bench", db, policy = "tf32";
  double eps = 0.25;
  int stagnation = 12;
  uint64_t seed = 1;
  bool no_memory = false;
};

int run_bench(const BenchArgs& a) {
  if (!search::ProblemRun::is_synthetic(a.dir)) {
    std::fprintf(stderr,
                 "ucutlass bench: %s: real suites are not wired into the search yet (the adapters "
                 "over src/space, src/build and src/eval are pending)\n"
                 "hint: 'ucutlass bench synthetic --problems 4' runs the scheduler on model problems\n",
                 a.dir.c_str());
    return 2;
  }
  std::unique_ptr<memory::MemoryDb> mem;
  if (!a.no_memory) {
    auto db = memory::MemoryDb::open(a.db.empty() ? memory::store_default_path() : a.db);
    if (!db) {
      std::fprintf(stderr, "ucutlass bench: %s\n", db.error().render().c_str());
      return 2;
    }
    mem = std::move(*db);
  }
  search::DriverOptions o;
  o.session.budget.attempts = a.budget;
  o.session.rules.eps = a.eps;
  o.session.rules.stagnation = a.stagnation;
  o.seed = a.seed;
  o.policy = a.policy;
  o.out_dir = a.out;
  o.memory = mem.get();
  std::vector<std::unique_ptr<search::ProblemRun>> runs;
  std::vector<search::SearchSession*> sessions;
  for (int i = 0; i < a.problems; ++i) {
    auto r = search::ProblemRun::synthetic(fmt::format("synthetic:p{}", i), o);
    if (!r) {
      std::fprintf(stderr, "ucutlass bench: %s\n", r.error().render().c_str());
      return 2;
    }
    sessions.push_back(&(*r)->session());
    runs.push_back(std::move(*r));
  }
  search::SteadyClock clock;
  search::SuiteScheduler suite(sessions, search::SuiteOptions{a.budget * a.problems, 0}, clock);
  std::signal(SIGINT, on_bench_sigint);
  suite.run(&g_bench_interrupt);
  std::signal(SIGINT, SIG_DFL);
  std::vector<search::ProblemOutcome> outcomes;
  search::CostFigures cost;
  report::HtmlReport html;
  html.title = "ucutlass bench: " + a.dir;
  html.contract = a.policy + " policy, default profile";
  for (auto& r : runs) {
    if (auto s = r->finish(); !s) std::fprintf(stderr, "ucutlass bench: %s\n", s.error().render().c_str());
    auto rep = r->report();
    auto oc = search::run_report_outcome(rep);
    cost.wall_s = std::max(cost.wall_s, rep.cost.wall_s);
    cost.compiled += rep.cost.compiled;
    cost.compile_s += rep.cost.compile_s;
    cost.gpu_s += rep.cost.gpu_s;
    html.problems.push_back({oc.name, oc.speedup_eager(), oc.compile_s > 0 ? oc.speedup_compile() : 0,
                             oc.frac_sol(), oc.correct() ? "ok" : oc.failure, oc.best_name, oc.attempts,
                             oc.stop_reason, oc.best_so_far});
    outcomes.push_back(std::move(oc));
  }
  auto h = search::headline_compute(outcomes, cost);
  std::string text = search::headline_render(h);
  std::printf("%s", text.c_str());
  nlohmann::json j = {{"schema", "ucutlass.bench-report/1"}, {"suite", a.dir},
                      {"headline", search::headline_to_json(h)}, {"problems", nlohmann::json::array()}};
  for (const auto& oc : outcomes)
    j["problems"].push_back({{"name", oc.name}, {"speedup_eager", oc.speedup_eager()},
                             {"frac_sol", oc.frac_sol()}, {"failure", oc.failure},
                             {"attempts", oc.attempts}, {"attempts_to_best", oc.attempts_to_best},
                             {"stop_reason", oc.stop_reason}, {"best", oc.best_name}});
  for (const auto& [k, v] : search::headline_to_json(h).items())
    if (!v.is_object()) html.figures.push_back({k, v.dump()});
  (void)fs_mkdirs(a.out);
  Status st = fs_write_atomic(a.out + "/report.json", j.dump(2) + "\n");
  if (st) st = fs_write_atomic(a.out + "/report.md", "# ucutlass bench\n\n```\n" + text + "```\n");
  if (st) st = fs_write_atomic(a.html.empty() ? a.out + "/bench.html" : a.html, report::html_render(html));
  if (!st) {
    std::fprintf(stderr, "ucutlass bench: %s\n", st.error().render().c_str());
    return 2;
  }
  return 0;
}
}  // namespace

CommandRun cmd_bench(CLI::App& sub) {
  auto a = std::make_shared<BenchArgs>();
  sub.add_option("dir", a->dir, "suite folder of problem.py files, or 'synthetic'")->required();
  sub.add_option("--budget", a->budget, "attempts per problem (the suite pool is budget x problems)")->capture_default_str();
  sub.add_option("--problems", a->problems, "synthetic suite size")->capture_default_str();
  sub.add_option("--html", a->html, "HTML report path (default OUT/bench.html)");
  sub.add_option("--out", a->out, "output folder")->capture_default_str();
  sub.add_option("--db", a->db, "result store holding the memory")->envname("UCUTLASS_STORE");
  sub.add_option("--policy", a->policy, "precision policy")->capture_default_str();
  sub.add_option("--eps", a->eps, "SOL proximity stop rule")->capture_default_str();
  sub.add_option("--stagnation", a->stagnation, "stagnation stop rule")->capture_default_str();
  sub.add_option("--seed", a->seed, "makes the run deterministic")->capture_default_str();
  sub.add_flag("--no-memory", a->no_memory, "neither seed from nor learn into the memory");
  return [a] { return run_bench(*a); };
}

}  // namespace ucut
