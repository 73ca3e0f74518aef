#include "search/driver.h"

#include <fmt/format.h>

#include <filesystem>

#include "support/fs.h"
#include "support/hash.h"

namespace ucut::search {

bool ProblemRun::is_synthetic(const std::string& problem) {
  return problem == "synthetic" || problem.rfind("synthetic:", 0) == 0;
}

std::string progress_line(const Attempt& a, const SearchState& s, int budget) {
  const Attempt* b = s.best_attempt();
  std::string best = b ? fmt::format("best {:.2f}x {:3.0f}% SOL", b->speedup, 100 * b->frac_sol)
                       : std::string("best  none");
  std::string now = a.status == AttemptStatus::ok ? fmt::format("{:.4g} ms", a.time_s * 1e3)
                                                  : std::string(attempt_status_name(a.status));
  return fmt::format("[{:>3}/{}] {} | {} ({}) {}{}", a.index + 1, budget > 0 ? std::to_string(budget) : "-",
                     best, a.cand.name, a.cand.origin, now, a.replayed ? " [journal]" : "");
}

Result<std::unique_ptr<ProblemRun>> ProblemRun::synthetic(const std::string& problem,
                                                          const DriverOptions& opt) {
  std::unique_ptr<ProblemRun> r(new ProblemRun());
  r->opt_ = opt;
  std::string variant = problem.size() > 10 ? problem.substr(10) : "gemm";
  r->name_ = "synthetic_" + variant;
  SurfaceSpec spec;
  spec.problem = r->name_;
  // Vary times with the name so a suite has different headroom per problem; same optimum, so
  // the memory transfers between them.
  uint64_t h = std::stoull(sha256_hex(variant).substr(0, 8), nullptr, 16);
  spec.t_opt = 1e-3 * (1 + (h % 7) / 10.0);
  spec.t_sol = spec.t_opt * (0.6 + (h % 5) / 20.0);
  spec.t_eager = spec.t_opt * (2 + (h % 3));
  r->key_ = {"synthetic gemm f32", "m12_n12_k12", "synthetic", opt.policy};
  r->space_ = std::make_unique<FakeSpace>(spec);
  r->compiler_ = std::make_unique<FakeCompiler>(spec);
  r->evaluator_ = std::make_unique<FakeEvaluator>(*r->space_, &r->fake_clock_);
  BuiltinOptions bo;
  bo.seed = opt.seed;
  bo.top_k = opt.top_k;
  if (opt.memory) {
    auto seeds = memory::memory_seeds(*opt.memory, r->key_);
    if (!seeds) return seeds.error();
    r->trace_ = memory_apply_seeds(*seeds, *r->space_, bo);
  }
  r->strategy_ = std::make_unique<BuiltinStrategy>(*r->space_, bo);
  const std::string jpath = r->out_dir() + "/attempts.jsonl";
  if (!opt.resume && fs_exists(jpath)) {
    // A new run never overwrites an old journal: it is kept beside, numbered.
    for (int i = 1;; ++i) {
      std::string old = fmt::format("{}/attempts.{}.jsonl", r->out_dir(), i);
      if (!fs_exists(old)) {
        std::error_code ec;
        std::filesystem::rename(jpath, old, ec);
        if (ec) return make_error(ErrorCode::io, jpath + ": cannot set the old journal aside: " + ec.message());
        break;
      }
    }
  }
  r->journal_ = std::make_unique<FileJournal>(jpath);
  SessionOptions so = opt.session;
  so.t_sol = spec.t_sol;
  SessionCallbacks cb;
  FILE* out = opt.progress;
  int budget = so.budget.attempts;
  if (out)
    cb.on_attempt = [out, budget](const Attempt& a, const SearchState& s) {
      std::fprintf(out, "%s\n", progress_line(a, s, budget).c_str());
      std::fflush(out);
    };
  r->session_ = std::make_unique<SearchSession>(r->name_, *r->strategy_, *r->compiler_, *r->evaluator_,
                                                r->fake_clock_, r->journal_.get(), so, cb);
  return r;
}

RunReport ProblemRun::report() const {
  RunReport r;
  r.problem = name_;
  r.policy = opt_.policy;
  r.profile = opt_.profile;
  r.gpu = key_.gpu;
  r.seed = opt_.seed;
  r.t_sol = session_->options().t_sol;
  r.state = session_->state();
  r.stop = session_->stop_reason();
  r.cost = session_->cost();
  r.note = "synthetic problem: times come from a model surface, not a GPU";
  return r;
}

Status ProblemRun::finish() {
  RunReport r = report();
  const std::string dir = out_dir();
  if (auto s = fs_mkdirs(dir); !s) return s;
  if (const Attempt* b = r.state.best_attempt())
    if (auto s = fs_write_atomic(dir + "/best.ucut", b->cand.program); !s) return s;
  if (auto s = fs_write_atomic(dir + "/report.json", run_report_json(r).dump(2) + "\n"); !s) return s;
  if (auto s = fs_write_atomic(dir + "/report.md", run_report_markdown(r)); !s) return s;
  if (opt_.memory) {
    auto n = memory::memory_learn(*opt_.memory,
                                  memory_learn_input(r.state, key_, name_, r.t_sol, trace_));
    if (!n) return n.error();
  }
  return ok_status();
}

}  // namespace ucut::search
