#include "search/builtin_strategy.h"

#include <algorithm>
#include <set>

namespace ucut::search {

uint64_t SplitMix64::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

BuiltinStrategy::BuiltinStrategy(SearchSpace& space, BuiltinOptions options)
    : space_(space), opt_(std::move(options)), rng_(opt_.seed), floor_rung_(std::max(0, opt_.start_rung)) {
  pool_ = space_.ranked(std::max(opt_.pool, opt_.top_k), floor_rung_);
  std::vector<Candidate> top = diverse_top_k(pool_, opt_.top_k);
  // Seeds and the ranked top-k alternate, a seed first: a remembered winner that transfers wins
  // at once, and one that does not costs one attempt before the model's best is tried.
  for (size_t i = 0; i < std::max(opt_.seeds.size(), top.size()); ++i) {
    if (i < opt_.seeds.size()) {
      Candidate c = opt_.seeds[i];
      if (c.origin.empty()) c.origin = "prior";
      first_.push_back(std::move(c));
    }
    if (i < top.size()) {
      top[i].origin = "rank";
      first_.push_back(std::move(top[i]));
    }
  }
  // A more precise rung the ranking predicts clearly faster opens the search, after the first seed.
  RungOpening rungs = rung_opening(space_, floor_rung_, pool_, opt_);
  const size_t after = std::min<size_t>(opt_.seeds.empty() ? 0 : 1, first_.size());
  // one by one: libstdc++'s deque range insert of an empty move range at position 1 empties element 0
  for (size_t i = 0; i < rungs.faster.size(); ++i)
    first_.insert(first_.begin() + static_cast<std::ptrdiff_t>(after + i), std::move(rungs.faster[i]));
  // A rung above in a near tie: its best shape second, after the floor's best.
  if (rungs.tie)
    first_.insert(first_.begin() + static_cast<std::ptrdiff_t>(std::min(after + 1, first_.size())), std::move(*rungs.tie));
  // after the first seed: the probe, then the rungs below it down to probe_floor
  auto at = static_cast<std::ptrdiff_t>(std::min<size_t>(1, first_.size()));
  for (auto& c : probe_opening(space_, opt_.probe_rung, floor_rung_, opt_.probe_floor)) {
    probe_hashes_.insert(c.hash);
    first_.insert(first_.begin() + at++, std::move(c));
  }
  // The kernel store: when the opening's first candidate needs a fresh compile, the best-ranked
  // candidate whose units are all stored is measured first, while the opening compiles behind it.
  if (opt_.store && !first_.empty() && fresh_units(first_.front()) > 0) {
    for (const auto& c : pool_) {
      auto l = lift(c);
      if (!l || l->hash == first_.front().hash || fresh_units(*l) > 0) continue;
      l->origin = "stored";
      first_.push_front(std::move(*l));
      break;
    }
  }
}

int BuiltinStrategy::fresh_units(const Candidate& c) {
  if (!opt_.store) return 1;
  const std::vector<std::string> units = opt_.store->units(c);
  if (units.empty()) return 1;
  int fresh = 0;
  for (const auto& u : units) {
    auto it = unit_known_.find(u);
    if (it == unit_known_.end()) it = unit_known_.emplace(u, opt_.store->stored(u)).first;
    fresh += it->second ? 0 : 1;
  }
  return fresh;
}

void BuiltinStrategy::note_proposed(const Candidate& c) {
  if (!opt_.store) return;
  for (const auto& u : opt_.store->units(c)) unit_known_[u] = true;
}

namespace {

// The space's best-ranked candidates on rung `r` itself (ranked() falls back to the next rung the
// program has when it has none at `r`).
std::vector<Candidate> ranked_on_rung(SearchSpace& space, int r, int k) {
  std::vector<Candidate> at;
  for (auto& c : space.ranked(k, r))
    if (c.rung == r) at.push_back(std::move(c));
  return at;
}

}  // namespace

RungOpening rung_opening(SearchSpace& space, int floor, const std::vector<Candidate>& floor_ranked,
                         const BuiltinOptions& o) {
  // More precision is always admissible, and on shapes where 3xTF32's split passes outweigh its
  // MMAs (K = 32) mma.sync's one-kernel 3xTF32 or FP32 SIMT is the fast kernel (run BN:
  // kb1_matmul_tall_skinny 0.39x eager on f32x3s).
  RungOpening out;
  if (floor_ranked.empty() || floor_ranked.front().predicted_s <= 0) return out;
  const double floor_s = floor_ranked.front().predicted_s;
  double best_s = o.rung_advantage > 0 ? floor_s / o.rung_advantage : 0;
  std::vector<Candidate> faster;
  for (int r = floor + 1; r <= floor + 4; ++r) {
    std::vector<Candidate> at = ranked_on_rung(space, r, std::max(o.pool, o.top_k));
    if (at.empty() || at.front().predicted_s <= 0) continue;
    if (!out.tie && o.rung_tie > 0 && at.front().predicted_s <= floor_s * o.rung_tie) out.tie = at.front();
    if (at.front().predicted_s < best_s) {
      best_s = at.front().predicted_s;
      faster = std::move(at);
    }
  }
  out.faster = diverse_top_k(faster, o.slow_probe_per_rung);
  for (auto& c : out.faster) c.origin = "rank-rung";
  if (!out.faster.empty()) out.tie.reset();
  if (out.tie) out.tie->origin = "rank-rung";
  return out;
}

std::vector<Candidate> probe_opening(SearchSpace& space, int probe_rung, int floor, int probe_floor) {
  if (probe_rung < 0 || probe_rung >= floor) return {};
  auto below = space.ranked(1, probe_rung);
  if (below.empty() || below.front().rung >= floor) return {};
  below.front().origin = "probe";
  std::vector<Candidate> out = chain_probes(space, below.front().rung - 1, probe_floor);
  out.insert(out.begin(), std::move(below.front()));
  return out;
}

std::vector<Candidate> chain_probes(SearchSpace& space, int from_rung, int floor) {
  std::vector<Candidate> out;
  if (floor < 0) return out;
  // A rung may hold kernels of unequal accuracy (f32x3w promotes its tensor-core sums every 128
  // of K, as mma.sync's 3xTF32 does; f32x3s sums longer runs): the best-ranked of each of its
  // first two precision mixes, so the more accurate one is not skipped for the one ranked faster
  // (a wide window: one kernel's best tiles can fill a rung's first hundred places).
  // The more accurate mix is probed first (run DX: four matmuls spent their third attempt on an
  // f32x3s probe that missed the float64 pass and never reached f32x3w's).
  for (int r = from_rung; r >= floor; --r) {
    std::set<std::string> mixes;
    std::vector<Candidate> rung;
    for (auto& c : ranked_on_rung(space, r, 1024)) {
      if (rung.size() >= 2) break;
      if (!mixes.insert(precision_mix(c.config)).second) continue;
      c.origin = "probe";
      rung.push_back(std::move(c));
    }
    std::stable_sort(rung.begin(), rung.end(), [](const Candidate& a, const Candidate& b) {
      return promoting_stages(a.config) > promoting_stages(b.config);
    });
    for (auto& c : rung) out.push_back(std::move(c));
  }
  return out;
}

std::vector<Candidate> diverse_top_k(const std::vector<Candidate>& ranked, int k) {
  std::vector<Candidate> out;
  std::vector<bool> taken(ranked.size(), false);
  std::set<std::string> shapes;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < k; ++i) {
    if (!shapes.insert(shape_signature(ranked[i].config)).second) continue;
    taken[i] = true;
    out.push_back(ranked[i]);
  }
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < k; ++i)
    if (!taken[i]) out.push_back(ranked[i]);
  return out;
}

namespace {

// Calls `visit(key, knob, value)` for each knob of `config`, `knob` being the key's last dotted
// part ("s0.precision" is "precision").
template <class Visit>
void for_each_knob(const nlohmann::json& config, Visit visit) {
  if (!config.is_object()) return;
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string& key = it.key();
    const auto dot = key.rfind('.');
    visit(key, dot == std::string::npos ? key : key.substr(dot + 1), it.value());
  }
}

// "key=value;" for each knob of `config` whose name `keep` accepts.
template <class Keep>
std::string config_signature(const nlohmann::json& config, Keep keep) {
  std::string sig;
  for_each_knob(config, [&](const std::string& key, const std::string& knob, const nlohmann::json& value) {
    if (keep(knob)) sig += key + "=" + value.dump() + ";";
  });
  return sig;
}

}  // namespace

int promoting_stages(const nlohmann::json& config) {
  int n = 0;
  for_each_knob(config, [&](const std::string&, const std::string& knob, const nlohmann::json& value) {
    n += knob == "precision" && value == "f32x3w";
  });
  return n;
}

std::string precision_mix(const nlohmann::json& config) {
  return config_signature(config, [](const std::string& knob) { return knob == "precision"; });
}

std::string shape_signature(const nlohmann::json& config) {
  static const std::set<std::string> minor = {"raster", "swizzle", "cluster", "align"};
  return config_signature(config, [](const std::string& knob) { return minor.count(knob) == 0; });
}

std::optional<Candidate> BuiltinStrategy::lift(const Candidate& c) {
  if (c.rung >= floor_rung_ || below_floor_ok(c)) return c;
  auto lifted = space_.at_rung(c, floor_rung_);
  if (lifted && lifted->origin.empty()) lifted->origin = c.origin;
  return lifted;
}

std::optional<Candidate> BuiltinStrategy::take_fresh(std::deque<Candidate>& q,
                                                     const SearchState& state, const char* origin) {
  while (!q.empty()) {
    Candidate c = std::move(q.front());
    q.pop_front();
    auto l = lift(c);
    if (!l || !fresh(*l, state)) continue;
    if (origin) l->origin = origin;
    return l;
  }
  return std::nullopt;
}

std::optional<Candidate> BuiltinStrategy::explore(const SearchState& state) {
  std::vector<Candidate> open;
  for (const auto& c : pool_) {
    auto l = lift(c);
    if (l && fresh(*l, state)) open.push_back(std::move(*l));
  }
  if (open.empty()) return std::nullopt;
  Candidate pick = open[rng_.below(open.size())];
  pick.origin = "explore";
  return pick;
}

std::optional<Candidate> BuiltinStrategy::refine(const SearchState& state) {
  // Correct results, fastest first (index breaks ties so the order never depends on sorting).
  std::vector<const Attempt*> ok;
  for (const auto& a : state.attempts)
    if (a.status == RunStatus::ok) ok.push_back(&a);
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Attempt* x, const Attempt* y) { return x->time_s < y->time_s; });
  const size_t anchors = std::min(ok.size(), static_cast<size_t>(std::max(0, opt_.anchors)));
  // Experience moves (the memory's knob changes that helped elsewhere) on the best first.
  if (anchors > 0 && ok[0]->cand.config.is_object()) {
    const Candidate& anchor = ok[0]->cand;
    for (size_t mi = 0; mi < opt_.moves.size(); ++mi) {
      const auto& move = opt_.moves[mi];
      nlohmann::json cfg = anchor.config;
      bool changes = false;
      for (auto it = move.begin(); it != move.end(); ++it) {
        if (!cfg.contains(it.key()) || cfg[it.key()] != *it) changes = true;
        cfg[it.key()] = *it;
      }
      if (!changes) continue;
      auto c = space_.from_config(cfg);
      if (!c) continue;
      auto l = lift(*c);
      if (l && fresh(*l, state)) {
        l->origin = "experience#" + std::to_string(mi);
        return l;
      }
    }
  }
  // Neighbours of the best, then of the runner-up, ...; with a store, every anchor's neighbours
  // that compile nothing new (runtime knobs: raster, swizzle, split-K count; units stored or built
  // here already) come before the first one that needs a compile.
  for (int pass = opt_.store ? 0 : 1; pass < 2; ++pass)
    for (size_t i = 0; i < anchors; ++i)
      for (const auto& n : space_.neighbors_measured(ok[i]->cand, ok[i]->stage_ms)) {
        auto l = lift(n);
        if (l && fresh(*l, state) && (pass == 1 || fresh_units(*l) == 0)) {
          l->origin = "neighbor";
          return l;
        }
      }
  return std::nullopt;
}

bool BuiltinStrategy::below_floor_ok(const Candidate& c) const {
  return is_probe(c) || descent_hashes_.count(c.hash) ||
         (!admitted_signatures_.empty() && admitted_signatures_.count(space_.rung_signature(c)));
}

void BuiltinStrategy::queue_descents(const SearchState& state) {
  const Attempt* best = state.best_attempt();
  if (!best) return;  // still pending: nothing has passed on the new floor yet
  descend_pending_ = false;
  if (!descended_from_.insert(best->cand.hash).second) return;
  for (auto& d : space_.descents(best->cand, descend_to_)) {
    if (failed_signatures_.count(space_.rung_signature(d)) || !fresh(d, state)) continue;
    descent_hashes_.insert(d.hash);
    d.origin = "descent";
    descent_.push_back(std::move(d));
  }
}

bool BuiltinStrategy::in_failed_class(const Candidate& c) const {
  return !failed_classes_.empty() && failed_classes_.count(space_.summation_class(c));
}

bool BuiltinStrategy::still_wanted(const Candidate& c, const SearchState& /*state*/) const {
  return (c.rung >= floor_rung_ || below_floor_ok(c)) && !in_failed_class(c) && !rung_exhausted(c);
}

bool BuiltinStrategy::fresh(const Candidate& c, const SearchState& state) const {
  return !state.proposed.count(c.hash) && !passed_over_.count(c.hash) && !in_failed_class(c) && !rung_exhausted(c);
}

std::optional<Candidate> BuiltinStrategy::propose(const SearchState& state) {
  // Each pass either returns or passes one more candidate over, and the space is finite.
  while (true) {
    std::optional<Candidate> c = propose_next(state);
    if (c && opt_.store && opt_.max_fresh_compiles > 0 && fresh_units(*c) > 0) {
      if (fresh_proposed_ >= opt_.max_fresh_compiles) {
        passed_over_.insert(c->hash);
        continue;
      }
      ++fresh_proposed_;
    }
    if (c) note_proposed(*c);
    return c;
  }
}

std::optional<Candidate> BuiltinStrategy::propose_next(const SearchState& state) {
  if (auto c = take_fresh(fallback_, state, nullptr)) return c;  // "fallback" or "rank-rung"
  if (descend_pending_ && fallback_.empty()) queue_descents(state);
  while (!descent_.empty()) {  // a stage descent whose mix of rungs has not failed meanwhile
    Candidate c = std::move(descent_.front());
    descent_.pop_front();
    if (!failed_signatures_.count(space_.rung_signature(c)) && fresh(c, state)) return c;
  }
  if (auto c = take_fresh(speed_, state, "speed-probe")) return c;
  if (auto c = take_fresh(first_, state, nullptr)) return c;
  ++refinements_;
  if (opt_.explore_every > 0 && refinements_ % opt_.explore_every == 0)
    if (auto c = explore(state)) return c;
  if (auto c = refine(state)) return c;
  for (const auto& c : pool_) {  // the tail of the ranked pool
    auto l = lift(c);
    if (l && fresh(*l, state)) {
      l->origin = "rank";
      return l;
    }
  }
  return std::nullopt;
}

void BuiltinStrategy::reopen_at(int r) {
  floor_rung_ = r;
  pool_ = space_.ranked(std::max(opt_.pool, opt_.top_k), floor_rung_);
  // The opening's ranked candidates above the new floor were the old floor's (slower rungs): the
  // new floor's top-k take their place; seeds stay. Probes of the rungs below still waiting (the
  // opening queued the whole chain) come first.
  std::deque<Candidate> probes, kept;
  for (auto& c : first_) {
    if (is_probe(c) && c.rung < r) probes.push_back(std::move(c));
    else if (c.rung <= r || (c.origin != "rank" && c.origin != "rank-rung" && c.origin != "stored"))
      kept.push_back(std::move(c));
  }
  std::vector<Candidate> top = diverse_top_k(pool_, opt_.top_k);
  for (auto& c : top) c.origin = "rank";
  first_ = std::move(probes);
  first_.insert(first_.end(), std::make_move_iterator(top.begin()), std::make_move_iterator(top.end()));
  first_.insert(first_.end(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
}

void BuiltinStrategy::maybe_probe_for_speed(const SearchState& state) {
  const double eager = state.baselines.eager_s;
  const Attempt* best = state.best_attempt();
  if (speed_probed_ || eager <= 0 || !best || best->time_s * opt_.slow_probe_margin <= eager) return;
  int passed = 0;
  for (const auto& a : state.attempts) passed += a.status == RunStatus::ok;
  if (passed < opt_.slow_probe_after) return;
  speed_probed_ = true;
  // Each rung above the floor, up to the last the space has: its own best-ranked shapes.
  for (int r = floor_rung_ + 1; r <= floor_rung_ + 4; ++r)
    for (auto& c : diverse_top_k(ranked_on_rung(space_, r, std::max(opt_.pool, opt_.top_k)), opt_.slow_probe_per_rung))
      speed_.push_back(std::move(c));
}

void BuiltinStrategy::observe(const Attempt& attempt, const SearchState& state) {
  const bool descent = descent_hashes_.count(attempt.cand.hash) > 0;
  if (attempt.status == RunStatus::ok) {
    maybe_probe_for_speed(state);
    // A descent that passed: its mix of rungs is accurate enough (its neighbours are admitted
    // below the floor); every new best on a raised floor is descended from in turn.
    if (descent) admitted_signatures_.insert(space_.rung_signature(attempt.cand));
    if (attempt.improved && descend_to_ >= 0) descend_pending_ = true;
  }
  if (attempt.status == RunStatus::mismatch && descent) failed_signatures_.insert(space_.rung_signature(attempt.cand));
  if (attempt.status == RunStatus::ok && is_probe(attempt.cand) && attempt.cand.rung < floor_rung_) {
    // The probe passed below the floor: the lower rung is open again.
    reopen_at(attempt.cand.rung);
    return;
  }
  if (attempt.status != RunStatus::mismatch) return;
  if (attempt.rounding_mismatch) failed_classes_.insert(space_.summation_class(attempt.cand));
  const int r = attempt.cand.rung;
  if (r < floor_rung_) return;
  // This rung is accurate enough where a candidate with the same rungs stage by stage passed (a
  // remembered mix, 3xTF32 on one GEMM only, says nothing of all of them in TF32).
  const std::string sig = space_.rung_signature(attempt.cand);
  for (const auto& a : state.attempts)
    if (a.status == RunStatus::ok && a.cand.rung <= r && (a.cand.rung < r || space_.rung_signature(a.cand) == sig))
      return;
  std::optional<Candidate> next;
  int nr = r + 1;
  if (attempt.reference_limited) {
    // The fp32 reference's own rounding failed this candidate: more precision cannot pass, the
    // reference's summation order can: stages that have it without a rung (scans in PyTorch's
    // order) are tried next; GEMMs lift to their FP32 SIMT rung (one FMA chain per output).
    if (auto ro = space_.reference_order(attempt.cand); ro && fresh(*ro, state)) {
      ro->origin = "fallback";
      fallback_.push_front(std::move(*ro));
    }
    auto order = space_.summation_order_rung();
    if (!order || *order <= r) return;
    next = space_.at_rung(attempt.cand, *order);
    nr = *order + 1;
  } else {
    // the next rung this program has (a stage without f32x3s, K not a multiple of 4, skips it)
    for (; nr <= r + 4 && !next; ++nr) next = space_.at_rung(attempt.cand, nr);
    const std::string precision = attempt.cand.config.is_object() ? attempt.cand.config.value("precision", "") : "";
    if (!next && attempt.rounding_mismatch && (precision == "tf32" || precision == "bf16" || precision == "f16"))
      precision_failed_[r].insert(space_.summation_class(attempt.cand));
  }
  if (!next) return;
  // The stages climbed together; one of them may have been the failure (stage descents, below).
  if (descend_to_ < 0) descend_to_ = r;
  descend_pending_ = true;
  floor_rung_ = nr - 1;
  for (const auto& a : state.attempts)  // mixes that passed below the new floor stay admissible
    if (a.status == RunStatus::ok && a.cand.rung < floor_rung_) admitted_signatures_.insert(space_.rung_signature(a.cand));
  // The new rung's own ranking: lifting the old pool keeps its tiles but loses what only this
  // rung has (FP32 SIMT's split-K summation orders).
  pool_ = space_.ranked(std::max(opt_.pool, opt_.top_k), floor_rung_);
  // The opening still to come is the new floor's own top-k, not the old one lifted: the lift keeps
  // each stage's tile on the next rung, where the new ranking mixes rungs (run DJ's
  // kb3_relu_self_attention: f32x3s everywhere, 3.3 ms predicted, against p @ v on f32x3, 2.2 ms).
  // Remembered seeds keep their place.
  std::erase_if(first_, [](const Candidate& c) { return c.origin == "rank" || c.origin == "stored"; });
  for (auto& c : diverse_top_k(pool_, opt_.top_k)) {
    c.origin = "rank";
    first_.push_back(std::move(c));
  }
  next->origin = "fallback";
  fallback_.push_front(std::move(*next));
  // A rung above the new floor that the ranking predicts clearly faster (kb3_relu_self_attention:
  // TF32 missed, 3xTF32 on wgmma predicted 3.8 ms, on mma.sync 2.5 ms, measured 4.6 and 2.9 ms)
  // comes right after the retry, as it would have opened a search that started on this floor.
  for (auto& c : rung_opening(space_, floor_rung_, pool_, opt_).faster) fallback_.push_back(std::move(c));
}

}  // namespace ucut::search
