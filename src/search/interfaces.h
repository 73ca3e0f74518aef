// The side effects of a search, each behind a small interface so the whole loop runs in tests
// with fakes (STYLE.md): the configuration space of one lowered problem (SearchSpace), the
// compiler (nvcc through the build pool), the evaluator (the GPU worker) and the clock. The
// search is space -> strategy -> build -> run -> callbacks; this file is the seam between them.
// Real implementations wrap src/space, src/build and src/eval; fakes live in fake_surface.h.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "search/search_types.h"

namespace ucut::search {

// The configurations of one lowered problem. Every method is deterministic.
class SearchSpace {
 public:
  virtual ~SearchSpace() = default;
  // The analytically best `k` candidates at the lowest rung from `min_rung` up that the program
  // has (rung 0 by default; a raised floor ranks its own rung, not rung 0 lifted), best first.
  virtual std::vector<Candidate> ranked(int k, int min_rung = 0) = 0;
  // Candidates one knob step away from `c` (same rung), best predicted first.
  virtual std::vector<Candidate> neighbors(const Candidate& c) = 0;
  // The same, ordered by `c`'s per-stage profile (Attempt::stage_ms): the steps of the stage
  // whose measured time most exceeds the model's prediction for it come first (the model put
  // every stage where it predicts best; where it is most wrong a step may still gain), each
  // stage's steps best predicted first. Without a profile (or in a space that cannot use one)
  // the order of neighbors().
  virtual std::vector<Candidate> neighbors_measured(const Candidate& c, const StageTimes& measured) {
    (void)measured;
    return neighbors(c);
  }
  // `c`'s configuration at precision-ladder rung `rung` (tf32 -> 3xTF32 -> FP32 SIMT under the
  // tf32 policy); nullopt past the last rung or when the rung cannot hold the configuration.
  virtual std::optional<Candidate> at_rung(const Candidate& c, int rung) = 0;
  // The rung whose GEMMs sum every output in one fp32 FMA chain in K order (FP32 SIMT), as
  // PyTorch's fp32 GEMM does: where the reference's own rounding fails every faster kernel
  // (a reference-limited mismatch), this rung reproduces it. nullopt: no such rung here.
  virtual std::optional<int> summation_order_rung() { return std::nullopt; }
  // The same for stages with no precision rung: `c` with every stage that can run in the fp32
  // reference's own order switched to it (scans: PyTorch's row-scan order, `order torch`);
  // nullopt when no stage moves (none has such an order, or `c` is already in it).
  virtual std::optional<Candidate> reference_order(const Candidate& /*c*/) { return std::nullopt; }
  // Whether some candidate of this space runs a stage in the reference's order (as above).
  virtual bool has_reference_order() { return false; }
  // Whether `c` already runs every such stage in the reference's order (the session's stop rule).
  virtual bool in_reference_order(const Candidate& c) { return has_reference_order() && !reference_order(c); }
  // Candidates of one class sum every output in the same order, so on the same inputs they compute
  // bit-identical values: after a rounding mismatch (Attempt::rounding_mismatch) the rest of its
  // class would fail the same way. A space that cannot prove two candidates alike gives each its
  // own class (the default).
  virtual std::string summation_class(const Candidate& c) { return c.hash; }
  // Stage descents: `c` with one of its GEMM stages moved back down to rung `rung` (the rung a
  // mismatch raised the floor from), the others as they are, most predicted time saved first.
  // Where several GEMM stages climbed together after one mismatch, the failure may be one
  // stage's alone (unnormalized attention: q @ k^T passes in TF32, p @ v does not). Only stages
  // above `rung` descend, and only where another GEMM stage stays above it (with one GEMM stage a
  // descent is the failed rung itself). Empty where the space has no stages (the default).
  virtual std::vector<Candidate> descents(const Candidate& /*c*/, int /*rung*/) { return {}; }
  // The rung of each GEMM stage of `c` ("0,1,1"): candidates with the same signature run every
  // stage at the same precision, so a descent that passed admits its neighbours below the floor.
  virtual std::string rung_signature(const Candidate& c) { return std::to_string(c.rung); }
  // A configuration remembered from another problem (memory priors/experiences) applied here;
  // nullopt when it is not valid for this problem.
  virtual std::optional<Candidate> from_config(const nlohmann::json& config) = 0;
};

// Compiles one candidate to a kernel library. Called from several threads at once.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual CompileOutcome compile(const Candidate& c) = 0;
};

// Checks and times one compiled candidate on the GPU (EVAL-CONTRACT §1-2). evaluate() is called
// from the session's thread, in the session's order. A crash, timeout or mismatch is an
// EvalOutcome, never an exception.
//
// An evaluator with several GPUs may measure ahead: when measures_ahead() is true the session
// calls measure_ahead() from the thread that compiled the candidate, as soon as its library is
// built (several at once, each on a free GPU), and evaluate() later hands that outcome back, so
// the order of the attempts, and so the run for a seed, is the same as measuring one at a time.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Baselines baselines() = 0;
  virtual EvalOutcome evaluate(const Candidate& c, const CompileOutcome& built) = 0;
  virtual bool measures_ahead() const { return false; }
  // The torch.compile baseline when the evaluator measured it after baselines() (an evaluator may
  // put it off until the problem's first candidates are measured: on one GPU a suite's 80
  // torch.compile baselines otherwise come before any attempt); nullopt until then.
  virtual std::optional<double> late_compile_baseline_s() { return std::nullopt; }
  // Thread-safe where measures_ahead(): measures `c` now and keeps the outcome for evaluate().
  virtual void measure_ahead(const Candidate& /*c*/, const CompileOutcome& /*built*/) {}
};

// What the kernel store holds (docs/kernel-abi.md, "Stored kernel units"): a candidate's device
// code comes as units, and a unit already stored (compiled for any candidate of any problem)
// costs a link, not a compile. The built-in strategy measures stored candidates first and
// explores runtime-knob neighbours (which share every unit) before fresh compiles.
class KernelStore {
 public:
  virtual ~KernelStore() = default;
  // Stable identities of the units building `c` compiles or takes from the store (its device
  // code: stored kernel units, CUTLASS and SIMT units; the cheap host-only ABI unit is left out).
  // Empty when `c` cannot be generated.
  virtual std::vector<std::string> units(const Candidate& c) = 0;
  // Whether `unit` is in the store now.
  virtual bool stored(const std::string& unit) = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_s() = 0;  // seconds since an arbitrary origin
};

class SteadyClock final : public Clock {
 public:
  double now_s() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

// A clock tests move by hand (or the fake evaluator moves per evaluation).
class FakeClock final : public Clock {
 public:
  double now_s() override { return t_; }
  void advance(double s) { t_ += s; }

 private:
  double t_ = 0;
};

}  // namespace ucut::search
