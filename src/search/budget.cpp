#include "search/budget.h"

#include <fmt/format.h>

namespace ucut::search {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::none: return "none";
    case StopReason::sol_proximity: return "sol_proximity";
    case StopReason::stagnation: return "stagnation";
    case StopReason::attempt_budget: return "attempt_budget";
    case StopReason::time_budget: return "time_budget";
    case StopReason::token_budget: return "token_budget";
    case StopReason::space_exhausted: return "space_exhausted";
    case StopReason::interrupted: return "interrupted";
    case StopReason::reference_limited: return "reference_limited";
  }
  return "none";
}

std::string stop_reason_text(StopReason r) {
  switch (r) {
    case StopReason::none: return "still running";
    case StopReason::sol_proximity: return "close enough to speed of light (stop rule eps)";
    case StopReason::stagnation: return "no improvement for the stagnation window (stop rule w)";
    case StopReason::attempt_budget: return "attempt budget spent";
    case StopReason::time_budget: return "time budget spent";
    case StopReason::token_budget: return "token budget spent";
    case StopReason::space_exhausted: return "every candidate worth trying was tried";
    case StopReason::interrupted: return "interrupted; resume with --resume";
    case StopReason::reference_limited:
      return "the fp32 reference's own rounding exceeds the tolerance (float64 diagnosis), also against a "
             "kernel summing in its order (FP32 SIMT) where the problem has one: the user keeps PyTorch";
  }
  return "";
}

bool beats_baseline(const StopInputs& in) {
  return in.t_best && in.t_eager > 0 && *in.t_best < in.t_eager;
}

StopReason stop_check(const Budget& budget, const StopRules& rules, const StopInputs& in) {
  if (beats_baseline(in)) {
    if (rules.eps >= 0 && in.t_sol > 0 && *in.t_best <= (1.0 + rules.eps) * in.t_sol)
      return StopReason::sol_proximity;
    if (rules.stagnation > 0 && in.since_improvement >= rules.stagnation)
      return StopReason::stagnation;
  }
  if (!in.t_best && rules.reference_limited > 0 && in.reference_limited >= rules.reference_limited)
    return StopReason::reference_limited;
  if (budget.attempts > 0 && in.attempts >= budget.attempts) return StopReason::attempt_budget;
  if (budget.wall_s > 0 && in.elapsed_s >= budget.wall_s) return StopReason::time_budget;
  if (budget.tokens > 0 && in.tokens >= budget.tokens) return StopReason::token_budget;
  return StopReason::none;
}

}  // namespace ucut::search
