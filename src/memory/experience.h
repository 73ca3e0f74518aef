// The optimization memory's records (docs/memory.md), after AccelOpt (research/accelopt.md §3)
// but cross-problem, persistent and curated:
//   Experience: a slow -> fast pair measured on one problem: both configurations, the knob diff,
//               the measured gain and a one-line lesson ("tile 128x128x64 -> 128x256x64 + cluster
//               1x1 -> 2x1: 1.31x on gemm f32 m12_n12_k12");
//   Prior:      a configuration that won a problem of a class, shape bucket, GPU and policy.
// The search seeds itself from priors (try what won on similar problems first) and applies
// experiences as moves around its best (a knob change that helped elsewhere). Pure functions
// here; the SQLite side is experience_store.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ucut::memory {

// What memory is keyed by. `cls` names the problem's structure ("gemm+bias+gelu f32", from the
// lowered program); `bucket` is the shape bucket (memory_shape_bucket).
struct MemoryKey {
  std::string cls;
  std::string bucket;
  std::string gpu;
  std::string policy;
};

// log2 buckets of the GEMM sizes, rounded: "m12_n12_k12" for 4096^3, "b8_m9_n6_k6" with a batch.
std::string memory_shape_bucket(int64_t m, int64_t n, int64_t k, int64_t batch = 1);
// Distance between two buckets: Σ |Δ log2| over the named sizes (a missing size counts 4); 0 for
// equal buckets. Used to prefer the nearest bucket when the exact one has no record.
int memory_bucket_distance(const std::string& a, const std::string& b);

struct Experience {
  int64_t id = 0;
  MemoryKey key;
  std::string problem;
  std::string slow_hash, fast_hash;
  nlohmann::json slow_config = nlohmann::json::object();
  nlohmann::json fast_config = nlohmann::json::object();
  double slow_s = 0, fast_s = 0;
  double gain = 1;            // slow_s / fast_s (> 1)
  std::string diff;           // "- tile 128x128x64\n+ tile 128x256x64\n"
  std::string lesson;
  int seen = 1;               // how often the same pair was recorded (dedup merges)
  int uses = 0;               // times the search applied it
  int helps = 0;              // times applying it produced a new best
  std::string created_at;

  // The knobs that change (fast-side values): the move the search applies to its best.
  nlohmann::json move() const;
};

struct Prior {
  int64_t id = 0;
  MemoryKey key;
  std::string problem;
  nlohmann::json config = nlohmann::json::object();
  std::string config_name;
  std::string program_hash;
  double speedup = 0;         // over eager on the problem where it won
  double frac_sol = 0;
  int wins = 1;               // problems it won (dedup merges)
  int uses = 0;               // times it seeded a search
  int helps = 0;              // times the seed became that search's best
  std::string created_at;
};

// The knob-by-knob diff of two flat configurations, one "- k v" / "+ k v" pair per changed knob.
std::string experience_diff(const nlohmann::json& slow, const nlohmann::json& fast);
// "tile 128x128x64 -> 128x256x64, cluster 1x1 -> 2x1 beat the slower configuration by 1.31x on
// <class> <bucket>".
std::string experience_lesson(const nlohmann::json& slow, const nlohmann::json& fast, double gain,
                              const MemoryKey& key);
// Builds an experience from two measured configurations (slow_s > fast_s).
Experience experience_make(const MemoryKey& key, const std::string& problem,
                           const std::string& slow_hash, const nlohmann::json& slow_config,
                           double slow_s, const std::string& fast_hash,
                           const nlohmann::json& fast_config, double fast_s);

// Usefulness, what curation keeps: measured help counts most, then breadth (seen / wins), then
// the size of the gain. Never random, never by age alone (age only breaks ties).
double experience_usefulness(const Experience& e);
double prior_usefulness(const Prior& p);

// Identity for deduplication: the canonical program hashes (and the key for priors).
std::string experience_dedupe_key(const Experience& e);
std::string prior_dedupe_key(const Prior& p);

nlohmann::json experience_to_json(const Experience& e);
Experience experience_from_json(const nlohmann::json& j);
nlohmann::json prior_to_json(const Prior& p);
Prior prior_from_json(const nlohmann::json& j);

}  // namespace ucut::memory
