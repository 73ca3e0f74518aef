// Budgets and stop rules (ucutlass-paper §3.4): when one problem's search ends.
//   budget:      attempts, wall time and (for the LLM strategies, later) tokens;
//   SOL proximity:  t_best <= (1 + eps) * t_SOL          and the best beats the eager baseline;
//   stagnation:     w attempts in a row without improving and the best beats the eager baseline.
//   reference-limited: nothing is correct and `reference_limited` mismatches (default 2) were
//                   the fp32 reference's own rounding (the candidate within tolerance of float64
//                   everywhere) on the summation-order rung (FP32 SIMT; on any rung where the
//                   problem has none): no kernel can pass it, so its budget goes elsewhere.
// Neither stop rule fires before some correct candidate is faster than PyTorch: until then the
// search keeps spending budget, because stopping would leave the user with nothing better.
#pragma once

#include <optional>
#include <string>

namespace ucut::search {

struct Budget {
  int attempts = 40;          // evaluations (every attempt counts, failed or not); 0: no limit
  double wall_s = 0;          // seconds since the search started; 0: no limit
  long long tokens = 0;       // LLM tokens in + out; 0: no limit (the built-in search uses none)
};

struct StopRules {
  double eps = 0.25;          // SOL proximity: stop at t_best <= (1 + eps) * t_SOL; < 0 disables
  int stagnation = 12;        // stop after this many attempts without improvement; 0 disables
  int reference_limited = 2;  // stop after this many reference-limited mismatches with nothing correct; 0 disables
};

enum class StopReason {
  none,
  sol_proximity,
  stagnation,
  attempt_budget,
  time_budget,
  token_budget,
  space_exhausted,
  interrupted,
  reference_limited,
};

const char* stop_reason_name(StopReason r);
// One sentence for progress displays and reports ("within 25% of speed of light (t_best ...)").
std::string stop_reason_text(StopReason r);

// What the stop rules look at; the session fills it after every attempt.
struct StopInputs {
  int attempts = 0;           // attempts recorded so far
  int since_improvement = 0;  // attempts since the best last improved (all of them if no best)
  std::optional<double> t_best;  // best correct time, seconds
  double t_sol = 0;           // problem SOL under the policy, seconds; 0 unknown
  double t_eager = 0;         // PyTorch eager median, seconds; 0 unknown
  double elapsed_s = 0;
  long long tokens = 0;
  int reference_limited = 0;  // mismatches the float64 diagnosis put on the fp32 reference
};

// True when a correct candidate is strictly faster than PyTorch eager. With no eager time known
// (planning, or a baseline that failed) nothing "beats the baseline" and the stop rules stay off.
bool beats_baseline(const StopInputs& in);

// The first rule that fires, in the order: SOL proximity, stagnation, reference-limited,
// attempts, time, tokens.
StopReason stop_check(const Budget& budget, const StopRules& rules, const StopInputs& in);

}  // namespace ucut::search
