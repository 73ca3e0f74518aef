// The suite scheduler (ucutlass-paper §3.4): across the problems of a suite, the next attempt
// goes to the problem with the most headroom, i.e. the largest gap t_best / t_SOL, after the
// problems without an attempt and then those with nothing correct yet (fewest attempts first).
// Failing problems used to come first only through their headroom (t_eager / t_SOL), which a
// correct kernel slower than eager outranks: run AF's four failing GEMMs got one attempt each
// in seven minutes while problems at FP32 SIMT parity got up to eleven. Problems whose session has stopped (stop rule or its own cap) get no more attempts;
// their unspent share goes to the others while the suite's attempt pool lasts. Ties go to the
// problem with fewer attempts, then to the earlier one, so the order is deterministic.
#pragma once

#include <atomic>
#include <optional>
#include <vector>

#include "search/session.h"

namespace ucut::search {

struct SuiteOptions {
  int pool = 0;                   // attempts for the whole suite; 0: no suite limit
  double wall_s = 0;              // suite wall-time limit; 0: none
  // Real suites (compiles take a minute, the GPU a second): start every session at once (the
  // baselines spread over the GPU workers), prime every session's compiles (before its baselines
  // when its strategy opens without them, Strategy::opens_without_baselines), and give the next
  // attempt to the problem with the most headroom among those whose next candidate is already
  // built, so the GPU never waits on one problem's compile while another's kernel is ready.
  // The order then depends on compile times; off (the default), a run is deterministic.
  bool overlap = false;
  // Breadth: every problem with a correct kernel gets this many attempts before any problem's
  // headroom buys it more (suite_pick's tier 2). Runs DE and DF (kb suite, 8 minutes) gave a
  // median of one attempt: the headroom rule sent 25 and 27 attempts to GEMM problems while 40
  // problems had one. Per attempt, a problem's second and third gained about as much as the
  // fourth and later ones (DE: 4.2% against 1.2% of speed, DF: 0.8% against 1.4%), so breadth
  // costs the headline little and no problem is judged on its opening alone. 0: headroom alone.
  int breadth = 0;
};

// The scheduler's view of one problem (what `pick` ranks).
struct HeadroomInputs {
  bool stopped = false;
  int attempts = 0;
  std::optional<double> t_best;
  double t_eager = 0;
  double t_sol = 0;
  int since_improvement = 0;  // attempts since the best last improved (StopInputs)
};

// Headroom: t_best / t_SOL, or t_eager / t_SOL before anything is correct (infinite when t_SOL
// is unknown, so unknown problems are never starved).
double suite_headroom(const HeadroomInputs& p);
// The index of the problem to run next, or nullopt when every problem has stopped: a problem
// without an attempt first (so a time budget never ends with a problem untried: run P's
// epi_linear_gelu_tanh_bf16, whose small headroom left it behind 16 others), then a problem
// with no correct candidate (fewest attempts, then headroom; correctness before speed), then
// the highest suite_priority; ties to fewer attempts, then the earlier problem. With `breadth`,
// a correct problem with fewer attempts than that comes before the correct ones that have them
// (fewest attempts first, then suite_priority).
std::optional<size_t> suite_pick(const std::vector<HeadroomInputs>& problems, int breadth = 0);
// A problem with a correct kernel: log(headroom), discounted by the attempts since its best last
// improved (halved after 4, a quarter after 12): runs CU and CV gave 4-28 attempts to a dozen GEMM
// problems, some stuck for 10-23 attempts, while 65 and 59 problems got one, among them problems
// 2-4x from their bound (kb3_mingpt_causal_attention, kb1_layernorm, kb3_mingpt_block).
double suite_priority(const HeadroomInputs& p);

class SuiteScheduler {
 public:
  SuiteScheduler(std::vector<SearchSession*> sessions, SuiteOptions options, Clock& clock);
  // Starts every session, then steps the chosen session until every one has stopped, the pool
  // is spent, the wall limit passes or *interrupt becomes true. Returns the attempts made.
  int run(const std::atomic<bool>* interrupt = nullptr);
  // The order in which problems received attempts (indices into the sessions), for reports.
  const std::vector<size_t>& order() const { return order_; }

 private:
  std::vector<SearchSession*> sessions_;
  SuiteOptions opt_;
  Clock& clock_;
  std::vector<size_t> order_;
};

}  // namespace ucut::search
