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

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // The next candidate to try, not one of state.proposed; nullopt when there is nothing to
  // propose with what is known now (more results may open new ones).
  virtual std::optional<Candidate> propose(const SearchState& state) = 0;
  // One result, in attempt order (also for results replayed from the journal on --resume).
  virtual void observe(const Attempt& attempt, const SearchState& state) = 0;
  // LLM tokens used so far (in + out); 0 for strategies without an LLM.
  virtual long long tokens() const { return 0; }
  // Whether a candidate proposed earlier (compiling ahead, not yet evaluated) is still worth an
  // attempt given everything observed since: the session drops the ones that are not (they
  // cost no attempt). The built-in strategy drops candidates below a raised precision floor and
  // candidates in the summation class of a rounding mismatch.
  virtual bool still_wanted(const Candidate& /*candidate*/, const SearchState& /*state*/) const { return true; }
};

}  // namespace ucut::search
