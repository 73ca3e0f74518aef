// The built-in search, the default strategy (no LLM): it trusts the analytic ranking first and
// the measurements after.
//   1. seeds (configurations that won on problems of the same class and shape bucket: memory
//      priors, applied to this problem, in the order the memory ranks them) alternating with
//   2. the ranked top-k of the space (SOL + wave quantization + tile efficiency + pipeline depth),
//      a seed first: a prior that does not transfer to this shape delays the model's best by one
//      attempt, not by every remembered prior (run E, docs/benchmarks.md);
//   3. local refinement: experience moves applied to the best so far (a knob change that helped
//      elsewhere), then the best's neighbors (one knob step; with its per-stage profile, the
//      steps of the stage the model most underestimated first: neighbors_measured), then the
//      runner-up's, ...; every
//      `explore_every`-th refinement proposal is instead a seeded random pick from the wider
//      ranked pool, so refinement does not tunnel into one basin;
//   4. the rest of the ranked pool, in rank order.
// Precision ladder: a mismatch at rung r when no candidate at rung r has passed means the
// policy's fast math is not accurate enough for this problem: the floor rises to r + 1 (tf32 ->
// 3xTF32 -> FP32), the failed configuration is retried at once at the new rung, and every later
// proposal is lifted to it.
// Never slower than PyTorch: once `slow_probe_after` candidates have passed and the best of them
// is still slower than eager (or within slow_probe_margin of it), the best-ranked candidates of
// each rung above the floor are tried (origin "speed-probe"): more precise kernels are not always
// slower ones (run BA's 4096 x 131072 GEMM: 22 attempts of SM80 3xTF32 at 0.33x eager, none of
// FP32 SIMT's split-K, cuBLAS's own shape).
// The opening's rung: a rung above the floor that the ranking predicts at least rung_advantage
// times faster than the floor's best (the estimates count 3xTF32's split passes and mma.sync's
// rate) puts its best shapes first (origin "rank-rung"); the floor's top-k follow. The same holds
// when a mismatch raises the floor: the new floor's retry first, then such a rung's best shapes.
// Stage descents: the stages of a program climb the ladder together, but one stage's precision
// may have been the whole failure (relu attention under kb-v01: q @ k^T and the projection pass
// in TF32, p @ v sums 1024 unnormalized products and does not). Once the floor a mismatch raised
// has a correct best (after the retry and the opening's rung), each GEMM stage of the best is
// tried alone back on the rung that failed (SearchSpace::descents, most predicted time saved
// first; origin "descent"), and again from every later best. A descent that passes admits its mix
// of rungs (SearchSpace::rung_signature) below the floor, so refinement tunes its neighbours; one
// that fails is not proposed again in any tile.
// Summation classes: after a rounding mismatch (repeatable: Attempt::rounding_mismatch) no other
// candidate of the failed candidate's summation class (SearchSpace::summation_class: e.g. every
// FP32 SIMT tile with K in one piece) is proposed or evaluated: it would compute the same values.
// Deterministic: the only randomness is a splitmix64 stream seeded by --seed.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "search/interfaces.h"
#include "search/strategy.h"

namespace ucut::search {

struct BuiltinOptions {
  int top_k = 8;                  // ranked candidates tried before refinement
  int pool = 128;                 // ranked candidates kept for exploration and the tail
  int explore_every = 5;          // 0: never explore at random
  int anchors = 3;                // how many of the best results refinement starts from
  uint64_t seed = 1;
  std::vector<Candidate> seeds;   // from memory priors, alternating with the top-k, first (valid here)
  std::vector<nlohmann::json> moves;  // from memory experiences: partial configs, best first;
                                      // a candidate made from moves[i] has origin "experience#i"
  int start_rung = 0;             // the precision-ladder floor to start at (memory's lesson)
  // Below a start_rung the memory raised, the rung the problem's own analysis allows (-1: none):
  // its best-ranked candidate is tried once, after the first seed, since what the memory learned
  // may predate a capability that passes there; if it passes, the floor drops to it.
  int probe_rung = -1;
  // The probe chains down to this rung (-1: no chain; chain_probes): the reference-class probe is
  // mma.sync's 3xTF32, the most accurate tensor-core rung, and 3xTF32 on wgmma below it (f32x3w,
  // f32x3s: 1.3-1.45x faster) may pass the float64 pass too, so its probes follow it in the
  // opening; whichever passes lowest sets the floor, and a probe that passes reopens its rung
  // (run DV's kb1_matmul_transposed_b passed its f32x3 probe, 1.43x, and spent its other
  // attempts on FP32 SIMT).
  int probe_floor = -1;
  int slow_probe_after = 3;       // correct attempts, all slower than eager, before the speed probe
  // A best within this factor of eager counts as slow for the speed probe: a 1.00-1.04x kernel is
  // within run-to-run spread of a fallback (run DG's kb1_sdpa: three 3xTF32 attempts at 0.98-1.00x
  // never probed the mma.sync rung that run DE found at 1.45x).
  double slow_probe_margin = 1.05;
  int slow_probe_per_rung = 2;    // candidates the speed probe takes from each rung above the floor
  // A rung above the floor whose best-ranked candidate is predicted this many times faster than
  // the floor's best opens the search with its best slow_probe_per_rung shapes (0: never).
  double rung_advantage = 1.25;
  // Short of that, a rung above whose best is predicted at most this many times the floor's best
  // (a near tie: the estimates' own spread) has its best shape measured second (0: never).
  double rung_tie = 1.1;
  // The kernel store (null: every candidate is a fresh compile). With one, the opening measures
  // the best-ranked candidate whose units are all stored first (origin "stored"), while the
  // ranked top-k compile behind it, and refinement takes neighbours whose units are stored or
  // already being built for this search (raster, swizzle and split-K count are runtime
  // arguments: such neighbours share every unit) before neighbours that need a fresh compile.
  KernelStore* store = nullptr;
  // With a store: how many candidates needing a fresh compile (a unit not stored) this search may
  // propose (0: no cap). Past it, only candidates whose units are all stored or already being
  // built here are proposed; the others are passed over (a suite's problem cannot keep the
  // compile slots to itself).
  int max_fresh_compiles = 0;
};

// splitmix64: a tiny, portable generator (std::mt19937 + distributions differ across standard
// libraries, which would break "one seed, one run" between machines).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next();
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

 private:
  uint64_t s_;
};

// A configuration without its minor knobs (raster, swizzle, cluster, align, per stage): the
// opening top-k attempts take one candidate per signature before any near-twin.
std::string shape_signature(const nlohmann::json& config);
// The configuration's precision knobs alone ("precision", "s0.precision", ...): its precision mix.
std::string precision_mix(const nlohmann::json& config);

// The first k of `ranked` (best first) that have distinct shape signatures, in rank order, then
// the best of the rest if fewer than k shapes exist. The analytic ranking cannot tell raster order,
// swizzle, cluster orientation or alignment apart well, so near-twins of the best-ranked candidate
// would spend the opening attempts (and the plan's compiles) measuring noise; they wait for
// refinement instead.
std::vector<Candidate> diverse_top_k(const std::vector<Candidate>& ranked, int k);

// The rungs above `floor` in the opening, from one ranking of each (origin "rank-rung"; the plan
// shows and compiles the same, app/pipeline.cpp):
//   faster  the opening's rung (above): the best slow_probe_per_rung shapes of the rung above
//           `floor` that the ranking predicts fastest, when that is rung_advantage times faster
//           than `floor_ranked`'s first (the floor's ranking, best first); else empty;
//   tie     where `faster` is empty, the near tie (BuiltinOptions::rung_tie): the best shape of the
//           first rung above whose best-ranked candidate is predicted within rung_tie of the
//           floor's best (run DJ's kb1_bmm on the H200: f32x3s predicted 3.81 ms and f32x3 3.77 ms,
//           and 4 attempts measured only f32x3s, 4.7 ms, where f32x3 had run 3.8 ms on the H100).
struct RungOpening {
  std::vector<Candidate> faster;
  std::optional<Candidate> tie;
};
RungOpening rung_opening(SearchSpace& space, int floor, const std::vector<Candidate>& floor_ranked,
                         const BuiltinOptions& o);

// The probes below `floor` (BuiltinOptions::probe_rung, probe_floor), in the order they are
// measured: the best-ranked candidate from `probe_rung` up, when it is below the floor, then its
// chain_probes down to `probe_floor`; all origin "probe". Empty when there is no probe (and for
// probe_rung < 0).
std::vector<Candidate> probe_opening(SearchSpace& space, int probe_rung, int floor, int probe_floor = -1);

// The probes below a reference-class probe (BuiltinOptions::probe_floor), in the order they are
// measured: for each rung from `from_rung` down to `floor`, the best-ranked candidate of each of
// its first two precision mixes (precision_mix), the one with more promoting stages first
// (promoting_stages), origin "probe". Empty for floor < 0.
std::vector<Candidate> chain_probes(SearchSpace& space, int from_rung, int floor);
// The stages of `config` on f32x3w, which promotes its tensor-core sums every 128 of K as mma.sync's
// 3xTF32 does (the most accurate mix of its rung).
int promoting_stages(const nlohmann::json& config);

class BuiltinStrategy final : public Strategy {
 public:
  BuiltinStrategy(SearchSpace& space, BuiltinOptions options);
  std::string name() const override { return "builtin"; }
  // The opening is the SOL ranking; eager times matter only once attempts exist (the speed probe).
  bool opens_without_baselines() const override { return true; }
  // False for a candidate below the precision floor a mismatch raised (its lifted twin is proposed
  // instead, the fallback queue) or in the summation class of a rounding mismatch: evaluating it
  // would only repeat the mismatch.
  bool still_wanted(const Candidate& c, const SearchState& state) const override;
  std::optional<Candidate> propose(const SearchState& state) override;
  void observe(const Attempt& attempt, const SearchState& state) override;

  int floor_rung() const { return floor_rung_; }

 private:
  std::optional<Candidate> lift(const Candidate& c);
  // The one candidate below the floor that is wanted (BuiltinOptions::probe_rung).
  bool is_probe(const Candidate& c) const { return probe_hashes_.count(c.hash) > 0; }
  // A probe passed at rung `r` below the floor: the floor drops to it, and the opening's candidates
  // still waiting above it give way to the new floor's ranked top-k, after the probes still
  // waiting below it (BuiltinOptions::probe_floor).
  void reopen_at(int r);
  // Wanted below the floor: the probe, a stage descent, or a candidate whose mix of rungs a
  // descent has passed with.
  bool below_floor_ok(const Candidate& c) const;
  // The stage descents of the best so far, once per best (descend_pending_ set).
  void queue_descents(const SearchState& state);
  // In the summation class of a rounding mismatch (it would fail the same way).
  bool in_failed_class(const Candidate& c) const;
  // Not proposed yet and not in a failed summation class.
  bool fresh(const Candidate& c, const SearchState& state) const;
  std::optional<Candidate> take_fresh(std::deque<Candidate>& q, const SearchState& state,
                                      const char* origin);
  std::optional<Candidate> refine(const SearchState& state);
  std::optional<Candidate> propose_next(const SearchState& state);
  // Units of `c` neither stored (as first seen) nor built for a candidate already proposed here;
  // 1 without a store. Answers are kept, so a search's proposals depend on the store as it was
  // when each unit was first looked at.
  int fresh_units(const Candidate& c);
  void note_proposed(const Candidate& c);
  std::map<std::string, bool> unit_known_;  // unit -> stored or being built for this search
  int fresh_proposed_ = 0;                   // proposals that needed a fresh compile
  std::set<std::string> passed_over_;        // hashes passed over past max_fresh_compiles
  std::optional<Candidate> explore(const SearchState& state);

  SearchSpace& space_;
  BuiltinOptions opt_;
  SplitMix64 rng_;
  std::deque<Candidate> fallback_, first_;
  std::vector<Candidate> pool_;
  int floor_rung_ = 0;
  std::set<std::string> probe_hashes_;  // the probes below the floor (BuiltinOptions::probe_rung)
  int refinements_ = 0;
  std::set<std::string> failed_classes_;  // summation classes of rounding mismatches
  // The most precise rung a candidate could reach, where rounding mismatches of a reduced
  // precision (tf32, bf16, f16) failed in kPrecisionFailures classes with nothing correct: the
  // precision, not the order, misses the tolerance (a TF32 conv against cuDNN in fp32), so its
  // other tiles are not measured (the search ends, space_exhausted, and the problem falls back).
  static constexpr int kPrecisionFailures = 2;
  std::map<int, std::set<std::string>> precision_failed_;  // rung -> failed classes there
  bool rung_exhausted(const Candidate& c) const {
    auto it = precision_failed_.find(c.rung);
    return it != precision_failed_.end() && static_cast<int>(it->second.size()) >= kPrecisionFailures;
  }
  std::deque<Candidate> speed_;            // the speed probe's candidates (rungs above the floor)
  // Stage descents: the rung the first raised floor came from (-1: never raised), whether the
  // best so far is still to be descended from, the bests descended from, the queue, the
  // descents proposed, and the rung signatures that passed or failed.
  int descend_to_ = -1;
  bool descend_pending_ = false;
  std::set<std::string> descended_from_;
  std::deque<Candidate> descent_;
  std::set<std::string> descent_hashes_;
  std::set<std::string> admitted_signatures_, failed_signatures_;
  bool speed_probed_ = false;
  // After a correct attempt: queue the speed probe when the best is still slower than eager.
  void maybe_probe_for_speed(const SearchState& state);
};

}  // namespace ucut::search
