#include "support/parallel.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>

namespace ucut {
namespace {

TEST(ParallelFor, EveryIndexOnceOnAtMostThreadsThreads) {
  std::vector<int> hits(1000, 0);
  std::mutex mu;
  std::set<size_t> used;
  parallel_for(hits.size(), 4, [&](size_t i, size_t t) {
    ++hits[i];  // each index belongs to exactly one call
    std::lock_guard<std::mutex> lock(mu);
    used.insert(t);
  });
  for (int h : hits) EXPECT_EQ(h, 1);
  for (size_t t : used) EXPECT_LT(t, 4u);
  int calls = 0;
  parallel_for(0, 8, [&](size_t, size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  std::set<size_t> few;
  parallel_for(2, 8, [&](size_t, size_t t) {  // never more threads than indices
    std::lock_guard<std::mutex> lock(mu);
    few.insert(t);
  });
  for (size_t t : few) EXPECT_LT(t, 2u);
}

}  // namespace
}  // namespace ucut
