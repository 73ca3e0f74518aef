// Between the search and the optimization memory (src/memory/priors.h): turns remembered
// priors and experiences into the built-in strategy's seeds and moves for this problem's space,
// and a finished search into what the memory learns (crediting the records that seeded it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memory/priors.h"
#include "search/builtin_strategy.h"
#include "search/strategy.h"

namespace ucut::search {

struct SeedTrace {
  std::map<std::string, int64_t> prior_by_hash;  // seeded candidate hash -> prior id
  std::vector<int64_t> experience_by_move;       // BuiltinOptions::moves index -> experience id
  int priors_found = 0, priors_applied = 0, moves = 0;
  int start_rung = 0;  // the lesson: every remembered winner (2 or more) needed at least this rung
};

// Applies `seeds` to `space`: priors valid here become options.seeds (deduplicated), experience
// moves become options.moves. The precision lesson: when two or more remembered winners of this
// class apply here and every one of them sits above rung 0 (e.g. 3xTF32: plain TF32 failed the
// tolerance on each of those problems), options.start_rung starts the ladder at their lowest rung
// instead of spending the first attempt on a TF32 mismatch. Winners on the summation-order rung
// (FP32 SIMT) are neither seeds nor part of that lesson.
SeedTrace memory_apply_seeds(const memory::MemorySeeds& seeds, SearchSpace& space,
                             BuiltinOptions& options);

// What the memory learns from a finished (or interrupted) search.
memory::LearnInput memory_learn_input(const SearchState& state, const memory::MemoryKey& key,
                                      const std::string& problem, double t_sol,
                                      const SeedTrace& trace);

}  // namespace ucut::search
