#include "search/session.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/compile_gate.h"

namespace ucut::search {

SearchSession::SearchSession(std::string problem, Strategy& strategy, Compiler& compiler,
                             Evaluator& evaluator, Clock& clock, Journal* journal,
                             SessionOptions options, SessionCallbacks cb)
    : problem_(std::move(problem)), strategy_(strategy), compiler_(compiler), evaluator_(evaluator),
      clock_(clock), journal_(journal), opt_(std::move(options)), cb_(std::move(cb)) {
  if (opt_.lookahead < 1) opt_.lookahead = 1;
  state_.t_sol = opt_.t_sol;
}

SearchSession::~SearchSession() {
  for (auto& p : queue_)
    if (p.cancel) p.cancel->store(true);  // queued compiles leave the gate without running
  for (auto& p : queue_)
    if (p.build.valid()) p.build.wait();  // never leave a compile thread behind
}

Status SearchSession::load() {
  if (loaded_) return ok_status();
  if (journal_) {
    auto j = journal_->load();
    if (!j) return j.error();
    for (auto& a : j->attempts) {
      prior_s_ = std::max(prior_s_, a.at_s);
      if (!a.cand.hash.empty()) recorded_.emplace(a.cand.hash, std::move(a));
    }
    journal_baselines_ = j->baselines;
  }
  loaded_ = true;
  return ok_status();
}

Status SearchSession::start() {
  start_s_ = clock_.now_s();
  if (auto st = load(); !st) return st;
  std::optional<Baselines> base = journal_baselines_;
  if (!base) {
    base = evaluator_.baselines();
    if (journal_)
      if (auto s = journal_->record_baselines(*base); !s) return s;
  }
  state_.baselines = *base;
  started_ = true;
  return ok_status();
}

StopInputs SearchSession::stop_inputs() const {
  StopInputs in;
  in.attempts = static_cast<int>(state_.attempts.size());
  in.since_improvement = since_improvement_;
  if (state_.best) in.t_best = state_.attempts[*state_.best].time_s;
  in.t_sol = opt_.t_sol;
  in.t_eager = state_.baselines.eager_s;
  in.elapsed_s = clock_.now_s() - start_s_;
  in.tokens = strategy_.tokens();
  // With a summation-order rung, its classes end a hopeless search (SessionOptions).
  // With a reference order (scans), not before a candidate in it has failed as well.
  if (opt_.summation_order_rung < 0) {
    bool order_failed = !opt_.in_reference_order;
    for (const auto& a : state_.attempts) {
      in.reference_limited += a.reference_limited ? 1 : 0;
      if (!order_failed && a.status == RunStatus::mismatch) order_failed = opt_.in_reference_order(a.cand);
    }
    if (!order_failed) in.reference_limited = 0;
  }
  return in;
}

void SearchSession::fill_queue() {
  const int limit = opt_.budget.attempts;
  while (static_cast<int>(queue_.size()) < opt_.lookahead) {
    if (limit > 0 && static_cast<int>(state_.attempts.size() + queue_.size()) >= limit) return;
    auto c = strategy_.propose(state_);
    if (!c) return;
    if (c->hash.empty() || state_.proposed.count(c->hash)) continue;  // a strategy bug; skip it
    state_.proposed.insert(c->hash);
    Pending p;
    p.cand = *c;
    if (auto it = recorded_.find(c->hash); it != recorded_.end()) {
      p.replay = it->second;
    } else {
      Compiler* compiler = &compiler_;
      // Measured as soon as it is built, on a free GPU, where the evaluator has several.
      Evaluator* ahead = evaluator_.measures_ahead() ? &evaluator_ : nullptr;
      Candidate copy = *c;
      p.cancel = std::make_shared<std::atomic<bool>>(false);
      // A problem with nothing correct yet compiles ahead of other problems' speed-ups (compile_gate.h).
      const bool urgent = !state_.best;
      p.build = std::async(std::launch::async, [compiler, ahead, copy, cancel = p.cancel, urgent] {
        if (!compile_gate().acquire(cancel.get(), urgent)) {
          CompileOutcome dropped;
          dropped.message = "dropped before it compiled";
          return dropped;
        }
        CompileOutcome built;
        {
          struct Release {
            ~Release() { compile_gate().release(); }
          } release;
          built = compiler->compile(copy);
        }
        // After the compile slot is given back: the GPU measurement needs no build slot.
        if (ahead && built.ok && !built.so_path.empty()) ahead->measure_ahead(copy, built);
        return built;
      });
    }
    queue_.push_back(std::move(p));
  }
}

void SearchSession::record(Attempt a) {
  if (state_.baselines.compile_s <= 0 && !a.replayed)
    if (auto c = evaluator_.late_compile_baseline_s(); c && *c > 0) {
      state_.baselines.compile_s = *c;
      if (journal_)  // the journal's last baselines line is the one a --resume reads
        if (auto s = journal_->record_baselines(state_.baselines); !s)
          a.message += (a.message.empty() ? "" : "; ") + ("journal: " + s.error().message);
    }
  a.index = static_cast<int>(state_.attempts.size());
  a.improved = false;
  if (a.status == RunStatus::ok && a.time_s > 0) {
    a.speedup = state_.baselines.eager_s > 0 ? state_.baselines.eager_s / a.time_s : 0;
    a.frac_sol = opt_.t_sol > 0 ? opt_.t_sol / a.time_s : 0;
    if (!state_.best || a.time_s < state_.attempts[*state_.best].time_s) {
      a.improved = true;
      state_.best = a.index;
    }
  }
  since_improvement_ = a.improved ? 0 : since_improvement_ + 1;
  if (a.replayed) {
    ++cost_.replayed;
  } else if (journal_) {
    auto s = journal_->record(a);
    if (!s) a.message += (a.message.empty() ? "" : "; ") + ("journal: " + s.error().message);
  }
  cost_.compile_s += a.compile_s;
  cost_.gpu_s += a.gpu_s;
  for (const auto& [phase, secs] : a.gpu_phases) cost_.gpu_phases[phase] += secs;
  state_.attempts.push_back(a);
  strategy_.observe(state_.attempts.back(), state_);
  if (cb_.on_attempt) cb_.on_attempt(state_.attempts.back(), state_);
}

void SearchSession::prime() {
  if (stop_ == StopReason::none && (started_ || (loaded_ && strategy_.opens_without_baselines()))) fill_queue();
}

// Candidates proposed ahead of results the strategy has since seen (a mismatch that raised the
// precision floor) are dropped unevaluated: they cost no attempt. Results are consumed in
// proposal order, so which ones drop is deterministic. A queued compile leaves the gate; one
// already running finishes in the background (the future is kept, not waited on here; the
// kernel cache keeps what it built).
void SearchSession::drop_unwanted() {
  while (!queue_.empty() && !queue_.front().replay && !strategy_.still_wanted(queue_.front().cand, state_)) {
    if (queue_.front().cancel) queue_.front().cancel->store(true);
    if (queue_.front().build.valid()) abandoned_.push_back(std::move(queue_.front().build));
    queue_.pop_front();
    ++cost_.dropped;
    fill_queue();
  }
}

bool SearchSession::ready() {
  if (stop_ != StopReason::none || !started_) return true;  // step() retries a failed start, then stops
  fill_queue();
  // A suite asks before stepping: a session whose next candidate is no longer wanted must not
  // wait for that candidate's compile (it would be dropped unevaluated once built).
  drop_unwanted();
  if (queue_.empty()) return true;  // step() will say the space is exhausted
  const Pending& p = queue_.front();
  return p.replay || !p.build.valid() ||
         p.build.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

bool SearchSession::step() {
  if (!started_) {
    if (auto s = start(); !s) {
      stop_ = StopReason::interrupted;
      return false;
    }
  }
  if (stop_ != StopReason::none) return false;
  if (auto r = stop_check(opt_.budget, opt_.rules, stop_inputs()); r != StopReason::none) {
    stop_ = r;
    return false;
  }
  fill_queue();
  drop_unwanted();
  if (queue_.empty()) {
    stop_ = StopReason::space_exhausted;
    return false;
  }
  Pending p = std::move(queue_.front());
  queue_.pop_front();
  Attempt a;
  if (p.replay) {
    a = *p.replay;
    a.cand = p.cand.program.empty() ? a.cand : p.cand;
    a.replayed = true;
  } else {
    a.cand = p.cand;
    if (cb_.on_start) cb_.on_start(p.cand);
    CompileOutcome built = p.build.get();
    a.compile_s = built.seconds;
    a.so_path = built.so_path;
    a.cu_path = built.cu_path;
    if (!built.cached && built.seconds > 0) ++cost_.compiled;
    if (!built.ok) {
      a.status = RunStatus::compile_error;
      a.message = built.message;
    } else {
      EvalOutcome e = evaluator_.evaluate(p.cand, built);
      a.status = e.status;
      a.message = e.message;
      a.time_s = e.status == RunStatus::ok ? e.time_s : 0;
      a.gpu_s = e.gpu_seconds;
      a.gpu_phases = e.gpu_phases;
      if (e.status == RunStatus::ok) a.stage_ms = e.stage_ms;
      a.max_abs_err = e.max_abs_err;
      a.max_rel_err = e.max_rel_err;
      a.reference_limited = e.reference_limited;
      a.passed_by_float64 = e.status == RunStatus::ok && e.passed_by_float64;
      a.rounding_mismatch = e.rounding_mismatch;
    }
    a.at_s = prior_s_ + (clock_.now_s() - start_s_);
  }
  record(std::move(a));
  stop_ = stop_check(opt_.budget, opt_.rules, stop_inputs());
  return stop_ == StopReason::none;
}

StopReason SearchSession::run(const std::atomic<bool>* interrupt) {
  while (true) {
    if (interrupt && interrupt->load()) {
      stop_ = StopReason::interrupted;
      break;
    }
    if (!step()) break;
  }
  return stop_;
}

SessionCost SearchSession::cost() const {
  SessionCost c = cost_;
  c.wall_s = clock_.now_s() - start_s_;
  c.tokens = strategy_.tokens();
  c.llm = strategy_.usage();
  return c;
}

}  // namespace ucut::search
