// The Strategy interface: what decides the next candidate. The built-in search
// (builtin_strategy.h) is one implementation; the LLM agents implement it too. A strategy sees
// the search state (every attempt so far, in order) and proposes one candidate at a time; it is
// told every result through observe(), in attempt order. Given the same space, seed and results
// a strategy must propose the same candidates: that is what makes --seed runs reproducible and
// --resume exact.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "search/search_types.h"

namespace ucut::search {

struct SearchState {
  std::vector<Attempt> attempts;     // in evaluation order
  std::optional<int> best;           // index into attempts of the fastest correct one
  std::set<std::string> proposed;    // hashes already proposed (evaluated or in flight)
  Baselines baselines;
  double t_sol = 0;                  // problem SOL under the policy, seconds; 0 unknown

  const Attempt* best_attempt() const { return best ? &attempts[*best] : nullptr; }
};

// LLM cost of a strategy: tokens as the endpoint reported them (estimated as ceil(chars / 4) where
// it reported none), requests sent (retries excluded) and the price the user configured.
struct LlmUsage {
  long long tokens_in = 0, tokens_out = 0;
  int requests = 0;
  double cost_usd = 0;
};

// One slow -> fast pair with the reason the faster one is faster.
struct StrategyLesson {
  std::string slow_hash, fast_hash;
  std::string text;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // The next candidate to try, not one of state.proposed; nullopt when there is nothing to
  // propose with what is known now (more results may open new ones).
  virtual std::optional<Candidate> propose(const SearchState& state) = 0;
  // One result, in attempt order (also for results replayed from the journal on --resume).
  virtual void observe(const Attempt& attempt, const SearchState& state) = 0;
  // What the strategy's LLM cost so far (zero for strategies without one).
  virtual LlmUsage usage() const { return {}; }
  // LLM tokens used so far (in + out): what Budget::tokens limits.
  long long tokens() const {
    const LlmUsage u = usage();
    return u.tokens_in + u.tokens_out;
  }
  // Why a measured improvement helped, in the strategy's words (the LLM agent's Summarize step):
  // the memory stores these as the lessons of its slow -> fast experiences.
  virtual std::vector<StrategyLesson> lessons() const { return {}; }
  // Lines for the report about how the strategy worked (requests, repairs, rejected replies).
  virtual std::vector<std::string> notes() const { return {}; }
  // Whether a candidate proposed earlier (compiling ahead, not yet evaluated) is still worth an
  // attempt given everything observed since: the session drops the ones that are not (they
  // cost no attempt). The built-in strategy drops candidates below a raised precision floor and
  // candidates in the summation class of a rounding mismatch.
  virtual bool still_wanted(const Candidate& /*candidate*/, const SearchState& /*state*/) const { return true; }
  // Whether the first proposals need no baselines (state.baselines): then a suite compiles them
  // while the GPU is still measuring the problems' eager and torch.compile times.
  virtual bool opens_without_baselines() const { return false; }
};

}  // namespace ucut::search
