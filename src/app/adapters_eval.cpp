#include "app/adapters_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "support/subprocess.h"

namespace ucut::app {

namespace {

eval::PoolOptions pool_options(std::vector<int> gpus, eval::WorkerOptions worker) {
  eval::PoolOptions o;
  o.gpus = gpus.empty() ? std::vector<int>{0} : std::move(gpus);
  o.worker = std::move(worker);
  return o;
}

double finite_or(double v, double dflt) { return std::isfinite(v) ? v : dflt; }

}  // namespace

bool gpu_present() {
  if (const char* e = std::getenv("UCUTLASS_NO_GPU"); e && *e && std::strcmp(e, "0") != 0) return false;
  ProcessSpec ps;
  ps.argv = {"nvidia-smi", "-L"};
  ps.timeout = std::chrono::milliseconds(15000);
  auto r = subprocess_run(ps);
  return r && r->success() && r->out.find("GPU ") != std::string::npos;
}

std::optional<int> gpus_count(const std::string& spec) {
  if (spec.empty() || spec.size() > 3 || spec.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int n = std::stoi(spec);
  return n >= 1 ? std::optional<int>(n) : std::nullopt;
}

Result<std::vector<int>> gpus_parse(const std::string& spec) {
  if (spec.empty() || spec == "all" || spec.find(',') != std::string::npos) return eval::pool_parse_gpus(spec);
  auto n = gpus_count(spec);
  if (!n)
    return make_error(ErrorCode::invalid_input, "--gpus " + spec + ": not a GPU count",
                      "give a count (--gpus 2 uses GPUs 0 and 1), a list of indices (--gpus 0,3) or 'all'");
  std::vector<int> out;
  for (int i = 0; i < *n; ++i) out.push_back(i);
  return out;
}

GpuWorkers::GpuWorkers(std::vector<int> gpus, eval::WorkerOptions worker)
    : pool_(pool_options(std::move(gpus), std::move(worker))),
      busy_(pool_.size(), false),
      loaded_(pool_.size()),
      info_(pool_.size()) {}

GpuWorkers::~GpuWorkers() = default;

void GpuWorkers::dispatch_locked() {
  for (size_t w = 0; w < busy_.size() && !waiting_.empty(); ++w) {
    if (busy_[w]) continue;
    auto better = [&](const Waiter* a, const Waiter* b) {
      if (a->turn != b->turn) return a->turn > b->turn;
      const bool la = *a->problem == loaded_[w], lb = *b->problem == loaded_[w];
      if (la != lb) return la;
      return a->seq < b->seq;
    };
    auto it = std::min_element(waiting_.begin(), waiting_.end(), better);
    (*it)->worker = w;
    busy_[w] = true;
    waiting_.erase(it);
  }
}

std::string GpuWorkers::loaded(size_t worker) {
  std::lock_guard<std::mutex> lock(mu_);
  return worker < loaded_.size() ? loaded_[worker] : std::string();
}

void GpuWorkers::note_baseline_seconds(double s) {
  std::lock_guard<std::mutex> lock(mu_);
  usage_.baseline_s += s;
}

GpuWorkers::Usage GpuWorkers::usage() {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

size_t GpuWorkers::waiting() {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.size();
}

Result<nlohmann::json> GpuWorkers::with_worker(const std::string& problem, std::chrono::milliseconds load_timeout,
                                               const std::function<void(eval::WorkerClient&)>& fn, GpuTurn turn) {
  size_t w = 0;
  {
    std::unique_lock<std::mutex> lock(mu_);
    Waiter me{turn, next_seq_++, &problem, std::nullopt};
    waiting_.push_back(&me);
    dispatch_locked();
    cv_.wait(lock, [&] { return me.worker.has_value(); });
    w = *me.worker;
  }
  const auto held = std::chrono::steady_clock::now();
  Result<nlohmann::json> info = nlohmann::json::object();
  if (!problem.empty() && loaded_[w] != problem) {
    info = pool_.worker(w).load_problem(problem, load_timeout);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - held).count();
    std::lock_guard<std::mutex> lock(mu_);  // loaded() reads it from other threads
    usage_.load_s += load_s;
    ++usage_.loads;
    if (info && info->is_object() && info->value("kept", false)) {
      usage_.kept_load_s += load_s;
      ++usage_.kept_loads;
    }
    if (info) {
      loaded_[w] = problem;
      info_[w] = *info;
    }
  } else {
    info = info_[w];
  }
  if (info) fn(pool_.worker(w));
  {
    std::lock_guard<std::mutex> lock(mu_);
    usage_.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - held).count();
    busy_[w] = false;
    dispatch_locked();
  }
  cv_.notify_all();
  return info;
}

Result<std::string> GpuWorkers::gpu_name() {
  std::string name;
  Status failed = ok_status();
  auto r = with_worker("", std::chrono::milliseconds(0), [&](eval::WorkerClient& w) {
    auto env = w.environment();
    if (!env) failed = env.error();
    else name = env->value("gpu", "");
  });
  if (!r) return r.error();
  if (!failed) return failed.error();
  return name;
}

search::EvalOutcome eval_outcome_from_record(const eval::RunRecord& r) {
  search::EvalOutcome e;
  const std::optional<RunStatus> status = run_status_parse(r.status);
  e.status = status.value_or(RunStatus::launch_error);
  e.message = status ? r.error : "unknown status '" + r.status + "': " + r.error;
  e.time_s = e.status == RunStatus::ok ? finite_or(r.median_ms, 0) / 1e3 : 0;
  if (e.status == RunStatus::ok && e.time_s <= 0) {
    e.status = RunStatus::launch_error;
    e.message = "the worker reported success without a time";
  }
  e.max_abs_err = finite_or(r.max_abs_err, 0);
  e.max_rel_err = finite_or(r.max_rel_err, 0);
  e.reference_limited = e.status == RunStatus::mismatch && r.reference_limited;
  e.passed_by_float64 = e.status == RunStatus::ok && r.passed_by == "float64";
  // Repeatable: failed in the trials (not a binding error or the re-check after timing), and the
  // two runs of every trial were bit-identical.
  e.rounding_mismatch = e.status == RunStatus::mismatch && r.phase == "correctness" && r.deterministic &&
                        r.correctness.is_object() && r.correctness.value("bitwise_repeatable", false);
  e.gpu_seconds = finite_or(r.eval_seconds, 0);
  if (r.eval_phases.is_object())
    for (const auto& [phase, secs] : r.eval_phases.items())
      if (secs.is_number()) e.gpu_phases[phase] = secs.get<double>();
  if (e.status == RunStatus::ok) e.stage_ms = search::stage_times_from_json(r.stage_ms);
  return e;
}

RealEvaluator::RealEvaluator(GpuWorkers& workers, RealEvaluatorOptions options)
    : workers_(workers), opt_(std::move(options)) {
  ctx_.path = opt_.problem_py;
  if (opt_.t_sol_s > 0) {
    ctx_.t_sol_ms = opt_.t_sol_s * 1e3;
    ctx_.sol_source = opt_.sol_source;
  }
}

search::Baselines RealEvaluator::baselines() {
  // torch.compile's baseline put off: eager's now, torch.compile's in measure().
  compile_pending_ = opt_.compile_baseline_after > 0 && !opt_.compile_mode.empty();
  auto r = workers_.with_worker(opt_.problem_py, opt_.load_timeout, [&](eval::WorkerClient& w) {
    if (auto env = w.environment(); env) ctx_.env = *env;
    const auto t0 = std::chrono::steady_clock::now();
    notes_ = eval::measure_baselines(w, ctx_, compile_pending_ ? "" : opt_.compile_mode, opt_.baseline_cache,
                                     opt_.baseline_timeout, /*with_eager=*/true,
                                     compile_pending_ ? opt_.compile_mode : "");
    workers_.note_baseline_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // Put off, but measured by an earlier run: taken from the cache now, nothing left to measure.
    if (compile_pending_ && std::isfinite(ctx_.compile_ms)) compile_pending_ = false;
  });
  if (!r) notes_ = "baselines not measured: " + r.error().render();
  else ctx_.info = *r;
  search::Baselines b;
  b.eager_s = finite_or(ctx_.eager_ms, 0) / 1e3;
  b.compile_s = finite_or(ctx_.compile_ms, 0) / 1e3;
  baselines_done_ = true;
  return b;
}

search::EvalOutcome RealEvaluator::measure(const search::Candidate& c, const search::CompileOutcome& built) {
  eval::BuiltLibrary ec{c.name, built.so_path, built.ok ? "" : built.message};
  eval::RunRecord rec;
  GpuTurn turn = GpuTurn::normal;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (measured_ == 0) turn = GpuTurn::first_attempt;  // its problem is usually still loaded
  }
  auto r = workers_.with_worker(opt_.problem_py, opt_.load_timeout, [&](eval::WorkerClient& w) {
    eval::ProblemContext local;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (compile_pending_ && measured_ >= opt_.compile_baseline_after) {
        // With the problem loaded on this worker: no second load for the baseline.
        const auto t0 = std::chrono::steady_clock::now();
        const std::string why = eval::measure_baselines(w, ctx_, opt_.compile_mode, opt_.baseline_cache,
                                                        opt_.baseline_timeout, /*with_eager=*/false);
        workers_.note_baseline_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (!why.empty()) notes_ += (notes_.empty() ? "" : "; ") + why;
        compile_pending_ = false;
      }
      ++measured_;
      local = ctx_;
    }
    if (auto env = w.environment(); env) local.env = *env;
    rec = eval::evaluate_candidate(w, ec, local, opt_.eval);
  }, turn);
  if (!r) {
    search::EvalOutcome e;
    e.status = RunStatus::launch_error;
    e.message = "the problem could not be loaded on a GPU worker: " + r.error().render();
    return e;
  }
  rec.config = c.name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    records_.push_back(rec);
  }
  return eval_outcome_from_record(rec);
}

void RealEvaluator::measure_ahead(const search::Candidate& c, const search::CompileOutcome& built) {
  if (!baselines_done_) return;  // its record needs the problem's context: evaluate() measures it
  search::EvalOutcome e = measure(c, built);
  std::lock_guard<std::mutex> lock(mu_);
  ahead_[c.hash] = std::move(e);
}

search::EvalOutcome RealEvaluator::evaluate(const search::Candidate& c, const search::CompileOutcome& built) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = ahead_.find(c.hash); it != ahead_.end()) {
      search::EvalOutcome e = std::move(it->second);
      ahead_.erase(it);
      return e;
    }
  }
  return measure(c, built);
}

std::optional<double> RealEvaluator::late_compile_baseline_s() {
  std::lock_guard<std::mutex> lock(mu_);
  if (compile_pending_ || opt_.compile_baseline_after <= 0 || !std::isfinite(ctx_.compile_ms)) return std::nullopt;
  return ctx_.compile_ms / 1e3;
}

std::vector<eval::RunRecord> RealEvaluator::records() {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

}  // namespace ucut::app
