#include "app/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "app/suite_report.h"
#include "build/builder.h"
#include "search/compile_gate.h"
#include "search/strategy_registry.h"
#include "sol/format.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut::app {

bool ProblemRun::is_synthetic(const std::string& problem) {
  return problem == "synthetic" || problem.rfind("synthetic:", 0) == 0;
}

std::string progress_line(const search::Attempt& a, const search::SearchState& s, int budget,
                          double t_sol_contract) {
  const search::Attempt* b = s.best_attempt();
  // The ceiling beside the best: how much a correct kernel could still gain.
  const std::string ceiling = t_sol_contract > 0 && s.baselines.eager_s > 0
                                  ? fmt::format(" of {:.2f}x", s.baselines.eager_s / t_sol_contract)
                                  : std::string();
  std::string best = !b                ? std::string("best  none")
                     : b->speedup > 0 ? fmt::format("best {:.2f}x{} {:3.0f}% SOL", b->speedup, ceiling, 100 * b->frac_sol)
                                      : fmt::format("best {:.4g} ms {:3.0f}% SOL", b->time_s * 1e3, 100 * b->frac_sol);
  std::string now = a.status == RunStatus::ok ? fmt::format("{:.4g} ms", a.time_s * 1e3)
                                             : std::string(run_status_name(a.status));
  return fmt::format("[{:>3}/{}] {} | {} ({}) {}{}", a.index + 1, budget > 0 ? std::to_string(budget) : "-",
                     best, a.cand.name, a.cand.origin, now, a.replayed ? " [journal]" : "");
}

Status ProblemRun::assemble(search::SearchSpace& space, search::Compiler& compiler, search::Evaluator& evaluator,
                            search::Clock& clock, double t_sol, int lookahead) {
  analytic_rung_ = pipeline_start_rung(tf32_bound_, space);
  search::BuiltinOptions bo;
  bo.seed = opt_.seed;
  bo.top_k = opt_.top_k;
  if (opt_.memory) {
    auto seeds = memory::memory_seeds(*opt_.memory, key_);
    if (!seeds) return seeds.error();
    seeds_ = std::move(*seeds);
    trace_ = search::memory_apply_seeds(seeds_, space, bo);
  }
  bo.start_rung = std::max(bo.start_rung, analytic_rung());
  // The kernel store, where the compiler keeps one (the local build pool's cache).
  bo.store = dynamic_cast<search::KernelStore*>(&compiler);
  bo.max_fresh_compiles = opt_.max_compiles;
  // The memory's lesson may predate a capability that passes lower: one probe there.
  if (trace_.start_rung > analytic_rung()) bo.probe_rung = analytic_rung();
  else if (const int probe = pipeline_reference_class_probe(tf32_bound_, space, opt_.profile); probe >= 0) {
    bo.probe_rung = probe;
    bo.probe_floor = pipeline_reference_class_probe_floor(tf32_bound_);
  }
  search::StrategyContext ctx{space, bo};
  ctx.problem = prepared_.get();
  ctx.hw = prepared_ ? &hw_ : nullptr;
  ctx.memory = opt_.memory ? &seeds_ : nullptr;
  ctx.settings = &opt_.strategy_settings;
  ctx.out_dir = out_dir();
  ctx.profile = opt_.profile;
  ctx.t_sol_contract = t_sol_contract_;
  ctx.measured = measured_;
  if (auto st = fs_mkdirs(out_dir()); !st) return st;
  auto strategy = search::strategy_make(opt_.strategy, ctx);
  if (!strategy) return strategy.error();
  strategy_ = std::move(*strategy);
  const std::string jpath = out_dir() + "/attempts.jsonl";
  // A new run never overwrites an old journal: it is kept beside, numbered.
  if (!opt_.resume)
    if (auto st = fs_set_aside(jpath); !st) return st.error();
  journal_ = std::make_unique<search::FileJournal>(jpath);
  search::SessionOptions so = opt_.session;
  so.t_sol = t_sol;
  so.summation_order_rung = space.summation_order_rung().value_or(-1);
  if (space.has_reference_order())
    so.in_reference_order = [&space](const search::Candidate& c) { return space.in_reference_order(c); };
  if (lookahead > 0) so.lookahead = lookahead;
  search::SessionCallbacks cb;
  FILE* out = opt_.progress;
  int budget = so.budget.attempts;
  if (out)
    cb.on_attempt = [out, budget, t_contract = t_sol_contract_](const search::Attempt& a,
                                                                const search::SearchState& s) {
      std::fprintf(out, "%s\n", progress_line(a, s, budget, t_contract).c_str());
      std::fflush(out);
    };
  session_ = std::make_unique<search::SearchSession>(name_, *strategy_, compiler, evaluator, clock, journal_.get(),
                                                     so, cb);
  return ok_status();
}

Result<std::unique_ptr<ProblemRun>> ProblemRun::synthetic(const std::string& problem,
                                                          const DriverOptions& opt) {
  std::unique_ptr<ProblemRun> r(new ProblemRun());
  r->opt_ = opt;
  std::string variant = problem.size() > 10 ? problem.substr(10) : "gemm";
  r->name_ = "synthetic_" + variant;
  search::SurfaceSpec spec;
  spec.problem = r->name_;
  // Vary times with the name so a suite has different headroom per problem; same optimum, so
  // the memory transfers between them.
  uint64_t h = std::stoull(sha256_hex(variant).substr(0, 8), nullptr, 16);
  spec.t_opt = 1e-3 * (1 + (h % 7) / 10.0);
  spec.t_sol = spec.t_opt * (0.6 + (h % 5) / 20.0);
  spec.t_eager = spec.t_opt * (2 + (h % 3));
  r->key_ = {"synthetic gemm f32", "m12_n12_k12", "synthetic", sol::policy_name(opt.policy)};
  r->simulated_ = true;
  r->note_ = "synthetic problem: a GEMM-like cost surface with one optimum (search/fake_surface.h)";
  auto space = std::make_unique<search::FakeSpace>(spec);
  r->compiler_ = std::make_unique<search::FakeCompiler>(spec);
  r->evaluator_ = std::make_unique<search::FakeEvaluator>(*space, &r->fake_clock_);
  r->space_ = std::move(space);
  r->t_sol_contract_ = spec.t_sol;  // the surface has one precision that passes: its SOL is the ceiling's
  if (auto st = r->assemble(*r->space_, *r->compiler_, *r->evaluator_, r->fake_clock_, spec.t_sol, 0); !st)
    return st.error();
  return r;
}

Result<std::unique_ptr<ProblemRun>> ProblemRun::real(std::shared_ptr<const PreparedProblem> problem,
                                                     const RealRunSetup& setup, const DriverOptions& opt) {
  if (!setup.workers) return make_error(ErrorCode::internal, "a measured search needs GPU workers");
  if (problem->problem_py.empty())
    return make_error(ErrorCode::invalid_input, problem->source + ": measuring needs the problem's .py file",
                      "pass the KernelBench problem.py (a problem.json can only be planned)");
  std::unique_ptr<ProblemRun> r(new ProblemRun());
  r->opt_ = opt;
  r->name_ = problem->name;
  r->prepared_ = problem;
  // The GPU the workers run on decides the ranking's hardware row and the SOL bound.
  sol::HwSpec hw = problem->hw;
  sol::SolReport sol = problem->sol;
  std::string gpu_note;
  auto gpu = setup.workers->gpu_name();
  if (!gpu) return make_error(gpu.error().code, "no GPU worker could start: " + gpu.error().message, gpu.error().hint);
  if (std::string row = sol::hw_match_device(*gpu); !row.empty() && row != hw.name) {
    if (auto h = sol::hw_lookup(row); h) {
      hw = *h;
      if (auto rep = sol::sol_problem_report(problem->ir, hw, problem->policy)) {
        sol = std::move(*rep);
        r->sol_ = sol;
      }
    }
  } else if (row.empty()) {
    gpu_note = "GPU '" + *gpu + "' is not in the hardware table: SOL and ranking assume " + hw.name;
  }
  const sol::SolBound& bound = sol.reference();
  if (auto st = r->attach_space(hw); !st) return st.error();
  RealCompilerOptions co;
  co.root = setup.build_root;
  co.use_cache = setup.use_cache;
  co.input_name = problem->source;
  auto compiler = std::make_unique<RealCompiler>(co, setup.nvcc);
  RealEvaluatorOptions eo;
  eo.problem_py = problem->problem_py;
  eo.eval = setup.eval;
  eo.eval.policy = opt.policy;
  eo.eval.profile = opt.profile;
  eo.compile_mode = setup.compile_mode;
  eo.baseline_cache = setup.baseline_cache;
  eo.compile_baseline_after = setup.compile_baseline_after;
  eo.t_sol_s = bound.t_sol;
  eo.sol_source = bound.origin;
  auto evaluator = std::make_unique<RealEvaluator>(*setup.workers, eo);
  r->real_evaluator_ = evaluator.get();
  const int gpus = static_cast<int>(setup.workers->size());
  r->compiler_ = std::move(compiler);
  r->evaluator_ = std::move(evaluator);
  r->note_ = fmt::format("measured on {} ({} GPU{}); SOL {} ({})", *gpu, gpus, gpus == 1 ? "" : "s",
                         sol::fmt_time(bound.t_sol), bound.origin);
  if (!gpu_note.empty()) r->note_ += "; " + gpu_note;
  // Compile ahead: enough candidates in flight to keep every GPU and the build pool busy.
  // Compiles of every problem share one gate sized by cores and memory (compile_gate.h).
  if (search::compile_gate().width() == 0) search::compile_gate().set_width(build::build_default_jobs());
  int lookahead = opt.lookahead > 0 ? opt.lookahead
                                    : std::max({2, gpus + 1, std::min(build::build_default_jobs(), 16)});
  r->tf32_bound_ = pipeline_tf32_bound(*problem, opt.profile);
  r->t_sol_contract_ = pipeline_sol_contract(sol, r->tf32_bound_);
  if (auto st = r->assemble(*r->space_, *r->compiler_, *r->evaluator_, r->steady_, bound.t_sol, lookahead); !st)
    return st.error();
  return r;
}

Status ProblemRun::attach_space(const sol::HwSpec& hw) {
  hw_ = hw;
  key_ = pipeline_memory_key(prepared_->lowered.program, hw.name, opt_.policy);
  space::SpaceOptions so;
  so.policy = prepared_->policy;
  auto space = RealSpace::create(prepared_->lowered.program, hw, so);
  if (!space) return space.error();
  real_space_ = space->get();
  space_ = std::move(*space);
  return ok_status();
}

namespace {

// The analytic model's estimate in place of a measurement (ProblemRun::planned).
class AnalyticEvaluator final : public search::Evaluator {
 public:
  search::Baselines baselines() override { return {}; }
  search::EvalOutcome evaluate(const search::Candidate& c, const search::CompileOutcome&) override {
    search::EvalOutcome e;
    if (c.predicted_s > 0) {
      e.status = RunStatus::ok;
      e.time_s = c.predicted_s;
      e.message = "analytic estimate; nothing was measured";
    } else {
      e.status = RunStatus::rejected;
      e.message = "the analytic model has no estimate for this program; nothing was measured";
    }
    return e;
  }
};

}  // namespace

Result<std::unique_ptr<ProblemRun>> ProblemRun::planned(std::shared_ptr<const PreparedProblem> problem,
                                                        const PlanOptions& plan, const DriverOptions& opt) {
  std::unique_ptr<ProblemRun> r(new ProblemRun());
  r->opt_ = opt;
  r->opt_.memory = nullptr;  // estimates are not measurements: nothing to learn from
  r->name_ = problem->name;
  r->prepared_ = problem;
  r->measured_ = false;
  if (auto st = r->attach_space(problem->hw); !st) return st.error();
  RealCompilerOptions co;
  co.root = plan.build_root;
  co.use_cache = plan.use_cache;
  co.emit_only = !plan.compile;
  co.input_name = problem->source;
  r->compiler_ = std::make_unique<RealCompiler>(co, pipeline_plan_compiler(plan));
  r->evaluator_ = std::make_unique<AnalyticEvaluator>();
  r->tf32_bound_ = pipeline_tf32_bound(*problem, opt.profile);
  r->t_sol_contract_ = pipeline_sol_contract(problem->sol, r->tf32_bound_);
  r->note_ = fmt::format("planned with the {} strategy on {} (assumed; no GPU): times are the analytic model's "
                         "estimates, nothing was measured",
                         opt.strategy, problem->hw.name);
  if (auto st = r->assemble(*r->space_, *r->compiler_, *r->evaluator_, r->steady_, problem->t_sol(), 1); !st)
    return st.error();
  return r;
}

std::vector<eval::RunRecord> ProblemRun::records() const {
  return real_evaluator_ ? real_evaluator_->records() : std::vector<eval::RunRecord>{};
}

RunReport ProblemRun::report() const {
  RunReport r;
  r.problem = name_;
  r.policy = opt_.policy;
  r.profile = opt_.profile;
  r.gpu = key_.gpu;
  r.seed = opt_.seed;
  r.t_sol = session_->options().t_sol;
  r.t_sol_contract = t_sol_contract_;
  if (prepared_) r.kernel_share = prepared_->kernel_share;
  r.state = session_->state();
  r.stop = session_->stop_reason();
  r.cost = session_->cost();
  r.note = note_;
  r.simulated = simulated_;
  r.measured = measured_;
  for (const auto& n : strategy_->notes()) r.note += "; " + n;
  if (trace_.priors_applied > 0)
    r.note += fmt::format("; memory: {} prior{} applied", trace_.priors_applied, trace_.priors_applied == 1 ? "" : "s");
  if (trace_.start_rung > analytic_rung())
    r.note += fmt::format("; memory: every remembered winner of this class needed precision rung {} or above, so the "
                          "ladder started there (with one probe of rung {}, which a newer capability may pass)",
                          trace_.start_rung, analytic_rung());
  else if (trace_.start_rung > 0)
    r.note += fmt::format("; memory: every remembered winner of this class needed precision rung {} or above, so the "
                          "ladder started there", trace_.start_rung);
  if (tf32_bound_.fails || tf32_bound_.faithful_fails) r.note += "; precision: " + tf32_bound_.reason;
  if (real_evaluator_ && !real_evaluator_->notes().empty()) r.note += "; baselines: " + real_evaluator_->notes();
  return r;
}

Status ProblemRun::finish() {
  RunReport r = report();
  const std::string dir = out_dir();
  if (auto s = fs_mkdirs(dir); !s) return s;
  const search::Attempt* b = r.state.best_attempt();
  if (!prepared_) {
    if (b)
      if (auto s = fs_write_atomic(dir + "/best.ucut", b->cand.program); !s) return s;
    if (auto s = fs_write_atomic(dir + "/report.json", run_report_json(r).dump(2) + "\n"); !s) return s;
    if (auto s = fs_write_atomic(dir + "/report.md", run_report_markdown(r)); !s) return s;
  } else {
    std::vector<std::string> notes;
    Outputs out;
    out.dir = dir;
    if (b) {
      out.best = b->cand;
      out.cu_path = b->cu_path;
      out.so_path = b->so_path;
      out.export_model = measured_;
    }
    const ProblemOutcome outcome = run_report_outcome(r);
    if (outcome.fallback()) out.fallback_reason = outcome.fallback_reason();
    auto files = pipeline_write_outputs(*prepared_, out, notes);
    if (!files) return files.error();
    if (!b)
      notes.push_back(outcome.fallback() ? "no candidate was correct: model_new.py is the PyTorch fallback (the "
                                           "reference Model)"
                                         : "no candidate was correct and PyTorch eager was not measured: "
                                           "model_new.py is not written");
    if (b && outcome.fallback())
      notes.push_back(fmt::format("the best correct kernel is slower than PyTorch eager ({:.2f}x): the result is the "
                                  "PyTorch fallback (model_new.py runs the reference Model); best.ucut, best.cu and "
                                  "best.so are that kernel, for inspection",
                                  b->speedup));
    // The report's speed of light and memory key are the measured GPU's (run CU, on an H100, printed
    // the H200 row the problem was prepared with beside the H100's bound the search used).
    PreparedProblem shown = *prepared_;
    shown.hw = hw_;
    shown.key = key_;
    if (sol_) shown.sol = *sol_;
    if (auto s = pipeline_write_report(dir, r, pipeline_report_json(shown, real_space_, nullptr, *files, notes),
                                       pipeline_report_markdown(shown, real_space_, nullptr, *files, notes));
        !s)
      return s;
  }
  if (opt_.memory && measured_) {
    // A suite finishes its problems side by side (their model_new.py exports run in Python);
    // they share one memory database.
    static std::mutex memory_mu;
    std::lock_guard<std::mutex> lock(memory_mu);
    memory::LearnInput learn = search::memory_learn_input(r.state, key_, name_, r.t_sol, trace_);
    for (const auto& l : strategy_->lessons()) learn.lessons[{l.slow_hash, l.fast_hash}] = l.text;
    auto n = memory::memory_learn(*opt_.memory, learn);
    if (!n) return n.error();
  }
  return ok_status();
}

ProblemOutcome fallback_problem(const std::string& problem_py, const std::string& status, const std::string& message,
                                double t_sol, const RealRunSetup* setup, const DriverOptions& opt) {
  ProblemOutcome oc;
  oc.name = pipeline_problem_name(problem_py);
  oc.failure = status;
  oc.t_sol = t_sol;
  RunReport r;
  r.problem = oc.name;
  r.policy = opt.policy;
  r.profile = opt.profile;
  r.seed = opt.seed;
  r.t_sol = t_sol;
  r.measured = setup && setup->workers;
  r.note = "no kernel was searched: " + status + ": " + suite_error_line(message);
  std::vector<std::string> notes;
  if (r.measured && !problem_py.empty()) {
    // The reference's own time (and that it runs at all): what the user keeps.
    eval::ProblemContext ctx;
    std::string why;
    auto loaded = setup->workers->with_worker(
        std::filesystem::absolute(problem_py).string(), std::chrono::milliseconds(300000),
        [&](eval::WorkerClient& w) {
          why = eval::measure_baselines(w, ctx, setup->compile_mode, setup->baseline_cache,
                                        std::chrono::milliseconds(1800000));
          if (auto env = w.environment(); env) r.gpu = env->value("gpu", "");
        });
    if (!loaded) why = "the reference did not load on the GPU: " + loaded.error().message;
    if (std::isfinite(ctx.eager_ms)) oc.eager_s = r.state.baselines.eager_s = ctx.eager_ms * 1e-3;
    if (std::isfinite(ctx.compile_ms)) oc.compile_s = r.state.baselines.compile_s = ctx.compile_ms * 1e-3;
    if (!why.empty()) notes.push_back("baselines: " + why);
  }
  const std::string dir = opt.out_dir + "/" + oc.name;
  if (auto st = fs_mkdirs(dir); !st) {
    std::fprintf(stderr, "  %s: %s\n", oc.name.c_str(), st.error().render().c_str());
    return oc;
  }
  std::vector<std::string> files;
  if (oc.fallback() || !r.measured) {
    // Correct by construction wherever the reference runs: written for plans too.
    ProcessSpec ps;
    ps.argv = {python_interpreter(), "-m", "ucutlass_torch.export", "--problem", problem_py, "-o",
               dir + "/model_new.py", "--fallback", status};
    ps.env_set = python_env();
    ps.timeout = std::chrono::milliseconds(120000);
    auto e = subprocess_run(ps);
    if (e && e->success()) files.push_back("model_new.py");
    else notes.push_back("model_new.py not written: " + (e ? e->err.substr(0, 800) : e.error().render()));
  }
  nlohmann::json extra = {{"source", problem_py}, {"files", files}, {"notes", notes}, {"error", message}};
  std::string md = "\n## Why no kernel\n\n```\n" + message + "\n```\n";
  if (!files.empty()) md += "\n## Files\n\n- model_new.py (the PyTorch fallback: the reference Model)\n";
  for (const auto& n : notes) md += "\n- " + n;
  Status st = ok_status();
  if (r.measured) {
    st = pipeline_write_report(dir, r, extra, md + "\n");
  } else {
    // Nothing to rank or measure: the report says what the result will be.
    nlohmann::json j = run_report_json(r);
    for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = *it;
    st = fs_write_atomic(dir + "/report.json", j.dump(2) + "\n");
    if (st)
      st = fs_write_atomic(dir + "/report.md",
                           fmt::format("# ucutlass optimize: {} (no kernel)\n\n**{}.** Nothing was measured: the "
                                       "result is the PyTorch fallback (model_new.py runs the reference Model), "
                                       "at 1.00x by construction.\n{}\n",
                                       oc.name, r.note, md));
  }
  if (!st) std::fprintf(stderr, "  %s: %s\n", oc.name.c_str(), st.error().render().c_str());
  return oc;
}

Result<PlanRun> plan_problem(const PreparedProblem& p, const PlanOptions& po, const DriverOptions& opt,
                             const std::string& why) {
  PlanRun out;
  out.dir = opt.out_dir + "/" + p.name;
  space::SpaceOptions so;
  so.policy = p.policy;
  auto space = RealSpace::create(p.lowered.program, p.hw, so);
  if (!space) return space.error();
  out.plan = pipeline_plan(p, **space, po);
  out.notes = p.notes;
  Outputs o;
  o.dir = out.dir;
  // The best-ranked candidate that emitted / built (all of them when nothing was emitted).
  for (const auto& c : out.plan.top) {
    if (c.built && !c.built->ok) continue;
    o.best = c.cand;
    if (c.built) {
      o.cu_path = c.built->cu_path;
      o.so_path = c.built->so_path;
    }
    if (c.rank > 1)
      out.notes.push_back(fmt::format("best.ucut is rank {} (`{}`): the better-ranked candidates failed to build",
                                      c.rank, c.cand.name));
    break;
  }
  if (!o.best && !out.plan.top.empty())
    out.notes.push_back("no ranked candidate built: best.ucut is not written (see the plan's build column)");
  auto files = pipeline_write_outputs(p, o, out.notes);
  if (!files) return files.error();
  out.files = *files;
  RunReport r;
  r.problem = p.name;
  r.policy = opt.policy;
  r.profile = opt.profile;
  r.gpu = p.hw.name + " (assumed; not measured)";
  r.seed = opt.seed;
  r.t_sol = p.t_sol();
  r.t_sol_contract = out.t_sol_contract = pipeline_sol_contract(p.sol, pipeline_tf32_bound(p, opt.profile));
  r.measured = false;
  r.stop = search::StopReason::none;
  r.note = why;
  if (auto st = pipeline_write_report(out.dir, r, pipeline_report_json(p, space->get(), &out.plan, out.files, out.notes),
                                      pipeline_report_markdown(p, space->get(), &out.plan, out.files, out.notes));
      !st)
    return st.error();
  return out;
}

}  // namespace ucut::app
