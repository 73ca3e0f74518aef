// A synthetic problem for tests and --dry-run demos: a GEMM-like configuration space (tile,
// cluster, stages, precision rung) over a smooth cost surface with one optimum, an analytic
// ranking that is deliberately a little wrong (so measuring and refining matter, as on a real
// GPU), and a fake compiler and evaluator with failure injection (compile errors, crashes,
// timeouts, TF32 mismatches). Nothing here touches a GPU, nvcc or the disk.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "search/interfaces.h"

namespace ucut::search {

struct SurfaceSpec {
  std::string problem = "synthetic";
  int best_m = 128, best_n = 256, best_k = 64, best_cluster = 2, best_stages = 4;  // true optimum
  int rank_shift = 1;        // the ranking believes the optimum is this many steps off in n and k
  double t_opt = 1e-3;       // time of the true optimum at rung 0, seconds
  double t_sol = 0.8e-3;
  double t_eager = 3e-3;
  double t_compile_torch = 2.5e-3;
  bool tf32_mismatch = false;  // every rung-0 (TF32) candidate fails the tolerance
  bool reference_limited = false;  // every candidate mismatches because of the fp32 reference's rounding,
  int summation_order_rung = -1;   // except on this rung (0..2; -1: none), which sums in its order
  std::map<std::string, RunStatus> fail;  // candidate name -> injected failure
  std::set<int> missing_rungs;  // rungs with no valid configuration (at_rung finds none)
  // On this rung (-1: none) a candidate's summation class is its stages knob, as split_k decides
  // FP32 SIMT's (every other knob leaves the values bit-identical); elsewhere its own hash. The
  // rung's candidates with a stage count in order_mismatch_stages fail repeatably (rounding).
  int order_rung = -1;
  std::set<int> order_mismatch_stages;
  bool order_mismatch_reference_limited = false;  // those mismatches are the reference's rounding
  bool order_classes = true;  // false: the space does not know the classes (each candidate its own)
  // at_rung onto order_rung sets the stages knob to its first value, as the real space lifts onto
  // FP32 SIMT with K in one piece: the rung's other classes are only in its own ranking.
  bool lift_to_first_order = false;
  // Candidates with this stages count (-1: none) sum in the reference's own order, as `order
  // torch` scans do: reference-limited mismatches spare them unless reference_order_fails.
  int reference_order_stages = -1;
  bool reference_order_fails = false;
  double eval_seconds = 2.0;   // how far an evaluation moves the fake clock
  // True-time multiplier per rung (empty: the ranking's own 1, 2.6, 6): a more precise rung can be
  // the faster one on a GPU (an FP32 SIMT split against a slow 3xTF32 kernel).
  std::vector<double> rung_cost;
  // The ranking's multiplier per rung (empty: 1, 2.6, 6, as kRungCost): a model that predicts a
  // more precise rung faster (3xTF32's split passes against mma.sync's one kernel at K = 32).
  std::vector<double> predicted_rung_cost;
};

class FakeSpace final : public SearchSpace {
 public:
  explicit FakeSpace(SurfaceSpec spec) : spec_(std::move(spec)) {}
  std::vector<Candidate> ranked(int k, int min_rung = 0) override;
  std::vector<Candidate> neighbors(const Candidate& c) override;
  std::optional<Candidate> at_rung(const Candidate& c, int rung) override;
  std::optional<Candidate> from_config(const nlohmann::json& config) override;
  std::string summation_class(const Candidate& c) override;
  std::optional<Candidate> reference_order(const Candidate& c) override;
  bool has_reference_order() override { return spec_.reference_order_stages >= 0; }
  std::optional<int> summation_order_rung() override {
    return spec_.summation_order_rung >= 0 ? std::optional<int>(spec_.summation_order_rung) : std::nullopt;
  }

  // The candidate of a knob index tuple (for tests).
  Candidate make(int mi, int ni, int ki, int ci, int si, int rung) const;
  // True time of a candidate on the synthetic GPU.
  double true_time(const Candidate& c) const;
  const SurfaceSpec& spec() const { return spec_; }

 private:
  double predicted(int mi, int ni, int ki, int ci, int si, int rung) const;
  SurfaceSpec spec_;
};

class FakeCompiler final : public Compiler {
 public:
  explicit FakeCompiler(const SurfaceSpec& spec) : spec_(spec) {}
  CompileOutcome compile(const Candidate& c) override;
  std::atomic<int> calls{0};

 private:
  SurfaceSpec spec_;
};

class FakeEvaluator final : public Evaluator {
 public:
  FakeEvaluator(FakeSpace& space, FakeClock* clock) : space_(space), clock_(clock) {}
  Baselines baselines() override;
  EvalOutcome evaluate(const Candidate& c, const CompileOutcome& built) override;
  int calls = 0;
  int baseline_calls = 0;

 private:
  FakeSpace& space_;
  FakeClock* clock_;
};

}  // namespace ucut::search
