#include "memory/priors.h"

#include <set>

namespace ucut::memory {

std::vector<Experience> memory_learn_experiences(const LearnInput& in) {
  std::vector<Experience> out;
  const MemoryAttempt* first = nullptr;
  const MemoryAttempt* best = nullptr;
  for (const auto& a : in.attempts) {
    if (!a.ok || a.time_s <= 0) continue;
    if (!first) first = &a;
    if (best && a.time_s < best->time_s) {
      if (best->time_s / a.time_s > kMinGain && best->hash != a.hash)
        out.push_back(experience_make(in.key, in.problem, best->hash, best->config, best->time_s,
                                      a.hash, a.config, a.time_s));
    }
    if (!best || a.time_s < best->time_s) best = &a;
  }
  for (auto& e : out)
    if (auto it = in.lessons.find({e.slow_hash, e.fast_hash}); it != in.lessons.end() && !it->second.empty())
      e.lesson = it->second;
  if (first && best && first != best && first->time_s / best->time_s > kMinGain) {
    Experience whole = experience_make(in.key, in.problem, first->hash, first->config,
                                       first->time_s, best->hash, best->config, best->time_s);
    bool dup = false;
    for (const auto& e : out) dup = dup || (e.slow_hash == whole.slow_hash && e.fast_hash == whole.fast_hash);
    if (!dup) out.push_back(std::move(whole));
  }
  return out;
}

std::optional<Prior> memory_learn_prior(const LearnInput& in) {
  const MemoryAttempt* best = nullptr;
  for (const auto& a : in.attempts)
    if (a.ok && a.time_s > 0 && (!best || a.time_s < best->time_s)) best = &a;
  if (!best || in.t_eager <= 0 || best->time_s >= in.t_eager) return std::nullopt;
  Prior p;
  p.key = in.key;
  p.problem = in.problem;
  p.config = best->config;
  p.config_name = best->name;
  p.program_hash = best->hash;
  p.speedup = in.t_eager / best->time_s;
  p.frac_sol = in.t_sol > 0 ? in.t_sol / best->time_s : 0;
  return p;
}

Result<LearnCounts> memory_learn(MemoryDb& db, const LearnInput& in) {
  // What one search learns is stored together: a failure leaves the memory as it was.
  LearnCounts n;
  auto st = db.transaction([&]() -> Status {
    n = {};
    for (const auto& e : memory_learn_experiences(in)) {
      if (auto r = db.add_experience(e); !r) return r.error();
      ++n.experiences;
    }
    if (auto p = memory_learn_prior(in)) {
      if (auto r = db.add_prior(*p); !r) return r.error();
      ++n.priors;
    }
    // Credit the records that seeded this search.
    std::string best_hash;
    double best_t = 0;
    for (const auto& a : in.attempts)
      if (a.ok && a.time_s > 0 && (best_hash.empty() || a.time_s < best_t)) {
        best_hash = a.hash;
        best_t = a.time_s;
      }
    std::set<int64_t> priors_done, exps_done;
    for (const auto& a : in.attempts) {
      const bool helped = !best_hash.empty() && a.hash == best_hash;
      if (a.prior_id && priors_done.insert(a.prior_id).second) {
        if (auto s = db.mark_prior_used(a.prior_id, helped); !s) return s;
        ++n.credited;
      }
      if (a.experience_id && exps_done.insert(a.experience_id).second) {
        if (auto s = db.mark_experience_used(a.experience_id, helped); !s) return s;
        ++n.credited;
      }
    }
    return ok_status();
  });
  if (!st) return st.error();
  return n;
}

Result<MemorySeeds> memory_seeds(MemoryDb& db, const MemoryKey& key, int max_priors,
                                 int max_experiences) {
  MemoryQuery q;
  q.cls = key.cls;
  q.gpu = key.gpu;
  q.policy = key.policy;
  q.bucket = key.bucket;
  q.max_distance = 6;  // farther than ~2 doublings in each of M, N, K rarely transfers
  MemorySeeds s;
  q.limit = max_priors;
  auto p = db.priors(q);
  if (!p) return p.error();
  s.priors = std::move(*p);
  q.limit = max_experiences;
  auto e = db.experiences(q);
  if (!e) return e.error();
  s.experiences = std::move(*e);
  return s;
}

}  // namespace ucut::memory
