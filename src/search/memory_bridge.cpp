#include "search/memory_bridge.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>

namespace ucut::search {

SeedTrace memory_apply_seeds(const memory::MemorySeeds& seeds, SearchSpace& space,
                             BuiltinOptions& options) {
  SeedTrace t;
  std::set<std::string> seen;
  int min_rung = std::numeric_limits<int>::max();
  // A winner on the FP32 SIMT rung won because its problem's fp32 reference rounds beyond the
  // tolerance; whether this problem's does is not a lesson of the class (a 3xTF32 kernel at 2x
  // the speed may pass here): such priors neither seed nor raise the ladder's start.
  const std::optional<int> order = space.summation_order_rung();
  for (const auto& p : seeds.priors) {
    ++t.priors_found;
    auto c = space.from_config(p.config);
    if (!c || (order && c->rung >= *order) || !seen.insert(c->hash).second) continue;
    c->origin = "prior";
    t.prior_by_hash[c->hash] = p.id;
    min_rung = std::min(min_rung, c->rung);
    options.seeds.push_back(std::move(*c));
    ++t.priors_applied;
  }
  if (t.priors_applied >= 2 && min_rung > 0) {  // two applied priors: min_rung is theirs
    t.start_rung = min_rung;
    options.start_rung = std::max(options.start_rung, min_rung);
  }
  for (const auto& e : seeds.experiences) {
    nlohmann::json move = e.move();
    if (move.empty()) continue;
    options.moves.push_back(std::move(move));
    t.experience_by_move.push_back(e.id);
    ++t.moves;
  }
  return t;
}

memory::LearnInput memory_learn_input(const SearchState& state, const memory::MemoryKey& key,
                                      const std::string& problem, double t_sol,
                                      const SeedTrace& trace) {
  memory::LearnInput in;
  in.key = key;
  in.problem = problem;
  in.t_eager = state.baselines.eager_s;
  in.t_sol = t_sol;
  for (const auto& a : state.attempts) {
    memory::MemoryAttempt m;
    m.name = a.cand.name;
    m.hash = a.cand.hash;
    m.config = a.cand.config;
    m.ok = a.status == RunStatus::ok;
    m.time_s = a.time_s;
    if (auto it = trace.prior_by_hash.find(a.cand.hash); it != trace.prior_by_hash.end())
      m.prior_id = it->second;
    const std::string tag = "experience#";
    if (a.cand.origin.rfind(tag, 0) == 0) {
      size_t i = std::strtoul(a.cand.origin.c_str() + tag.size(), nullptr, 10);
      if (i < trace.experience_by_move.size()) m.experience_id = trace.experience_by_move[i];
    }
    in.attempts.push_back(std::move(m));
  }
  return in;
}

}  // namespace ucut::search
