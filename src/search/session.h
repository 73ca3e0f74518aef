// One problem's search loop: strategy -> compile (pool, ahead) -> evaluate (GPU) -> record ->
// observe -> stop rules. Compiling runs ahead of evaluation as a producer/consumer pipeline: up
// to `lookahead` proposed candidates compile in parallel while the head of the queue is being
// measured. Results are consumed strictly in proposal order, and proposal i is always made
// knowing exactly the results of attempts 0 .. i - lookahead, so a run with a given seed and
// lookahead is the same run however long each compile takes.
// Every attempt is written to the journal before the next one starts; on resume, a proposed
// candidate already in the journal takes its recorded result (see journal.h).
// step() makes one attempt, so a suite scheduler can interleave problems (suite.h).
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "search/budget.h"
#include "search/interfaces.h"
#include "search/journal.h"
#include "search/strategy.h"

namespace ucut::search {

struct SessionOptions {
  Budget budget;
  StopRules rules;
  int lookahead = 2;      // candidates compiling ahead of the one being evaluated (>= 1)
  double t_sol = 0;       // problem SOL under the policy (reference bound), seconds
  // SearchSpace::summation_order_rung (-1: none). Where the problem has one, reference-limited
  // mismatches do not count toward the reference_limited stop rule: the ladder jumps to that rung,
  // whose summation classes (one per split count) end the search once every order has failed.
  int summation_order_rung = -1;
  // SearchSpace::has_reference_order: whether `c` runs every stage that can in the reference's
  // own order (empty: the space has none). Where it is set, reference-limited mismatches count
  // toward the stop rule only once a candidate in that order has mismatched too.
  std::function<bool(const Candidate&)> in_reference_order;
};

struct SessionCallbacks {
  std::function<void(const Attempt&, const SearchState&)> on_attempt;   // after each record
  std::function<void(const Candidate&)> on_start;                       // evaluation begins
};

// Cost figures (EVAL-CONTRACT §5).
struct SessionCost {
  double wall_s = 0;
  int compiled = 0;        // compiles that ran (cache hits and replays excluded)
  double compile_s = 0;
  double gpu_s = 0;
  GpuPhases gpu_phases;    // gpu_s by phase (Attempt::gpu_phases)
  int replayed = 0;        // attempts taken from the journal on resume
  int dropped = 0;         // candidates compiled ahead but dropped before evaluation (no attempt)
  long long tokens = 0;     // in + out (Budget::tokens)
  LlmUsage llm;            // the strategy's LLM usage (zero without one)
};

class SearchSession {
 public:
  SearchSession(std::string problem, Strategy& strategy, Compiler& compiler, Evaluator& evaluator,
                Clock& clock, Journal* journal, SessionOptions options, SessionCallbacks cb = {});
  ~SearchSession();
  SearchSession(const SearchSession&) = delete;
  SearchSession& operator=(const SearchSession&) = delete;

  // Loads the journal (for --resume) and measures (or replays) the baselines.
  Status start();
  // Only the journal (start() does it when it has not been done). A suite calls it first so that
  // a strategy whose opening needs no baselines starts compiling before they are measured.
  Status load();
  // One attempt. False once the search has stopped (then stop_reason() says why).
  bool step();
  // Steps until a stop rule fires, the budget is spent or *interrupt becomes true.
  StopReason run(const std::atomic<bool>* interrupt = nullptr);
  void interrupt() { stop_ = StopReason::interrupted; }
  // For a suite: starts compiling this session's lookahead now (no-op once stopped; before start()
  // only after load() and when the strategy opens without baselines), and whether
  // step() would make its next attempt without waiting for a compile (true once stopped).
  void prime();
  bool ready();

  bool stopped() const { return stop_ != StopReason::none; }
  StopReason stop_reason() const { return stop_; }
  const SearchState& state() const { return state_; }
  const std::string& problem() const { return problem_; }
  const SessionOptions& options() const { return opt_; }
  SessionCost cost() const;
  // Attempts since the best last improved (all attempts when nothing is correct yet).
  int since_improvement() const { return since_improvement_; }
  StopInputs stop_inputs() const;

 private:
  struct Pending {
    Candidate cand;
    std::optional<Attempt> replay;
    std::future<CompileOutcome> build;
    std::shared_ptr<std::atomic<bool>> cancel;  // set when dropped: a queued compile never starts
  };
  void fill_queue();
  // Drops queued candidates the strategy no longer wants from the front of the queue (refilling
  // it), so neither step() nor ready() waits on a compile whose result would be thrown away.
  void drop_unwanted();
  void record(Attempt a);

  std::string problem_;
  Strategy& strategy_;
  Compiler& compiler_;
  Evaluator& evaluator_;
  Clock& clock_;
  Journal* journal_;
  SessionOptions opt_;
  SessionCallbacks cb_;
  SearchState state_;
  std::deque<Pending> queue_;
  std::vector<std::future<CompileOutcome>> abandoned_;  // builds of dropped candidates (joined at the end)
  std::map<std::string, Attempt> recorded_;  // journal contents by candidate hash
  StopReason stop_ = StopReason::none;
  int since_improvement_ = 0;
  double start_s_ = 0;
  double prior_s_ = 0;  // search time before this start (the journal's latest at_s, on --resume)
  SessionCost cost_;
  bool started_ = false;
  bool loaded_ = false;
  std::optional<Baselines> journal_baselines_;  // what load() found in the journal
};

}  // namespace ucut::search
