// Learning from a finished search and seeding the next one (docs/memory.md).
// Learning: every time the best improved by more than kMinGain, the previous best -> new best
// pair becomes an experience, and so does first correct -> final best (the whole trip); the final
// best becomes a prior for the problem's key when it beat PyTorch eager. Memory records that
// seeded the search are credited: uses + 1, and helps + 1 for the one that became the best.
// Seeding: priors of the same class, GPU and policy, nearest shape bucket first, then the most
// useful; experiences' moves the same way.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memory/experience_store.h"

namespace ucut::memory {

// Gains below this are measurement noise, not lessons (AccelOpt keeps > 1.04, accelopt.md §3.2).
inline constexpr double kMinGain = 1.04;

struct MemoryAttempt {
  std::string name, hash;
  nlohmann::json config = nlohmann::json::object();
  bool ok = false;
  double time_s = 0;
  int64_t prior_id = 0;       // the prior that seeded this candidate, 0 none
  int64_t experience_id = 0;  // the experience whose move produced it, 0 none
};

struct LearnInput {
  MemoryKey key;
  std::string problem;
  double t_eager = 0;
  double t_sol = 0;
  std::vector<MemoryAttempt> attempts;  // in evaluation order
  // (slow hash, fast hash) -> why the fast one is faster, in the search strategy's words (the LLM
  // agent's summaries): an experience of that pair keeps this lesson instead of the knob diff's.
  std::map<std::pair<std::string, std::string>, std::string> lessons;
};

std::vector<Experience> memory_learn_experiences(const LearnInput& in);
std::optional<Prior> memory_learn_prior(const LearnInput& in);

struct LearnCounts {
  int experiences = 0, priors = 0, credited = 0;
};
// Adds what memory_learn_* produce and credits the records that seeded the search, in one
// transaction: all of it is stored or none.
Result<LearnCounts> memory_learn(MemoryDb& db, const LearnInput& in);

struct MemorySeeds {
  std::vector<Prior> priors;            // configurations to try first
  std::vector<Experience> experiences;  // moves to apply around the best
};
Result<MemorySeeds> memory_seeds(MemoryDb& db, const MemoryKey& key, int max_priors = 4,
                                 int max_experiences = 8);

}  // namespace ucut::memory
