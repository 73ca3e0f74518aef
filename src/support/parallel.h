// A parallel loop over indices: `threads` threads (the caller among them) take indices 0..n-1 in
// order from a shared counter and call fn(index, thread). Returns when every index is done.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace ucut {

template <class Fn>
void parallel_for(size_t n, size_t threads, Fn&& fn) {
  threads = std::max<size_t>(1, std::min(threads, n));
  std::atomic<size_t> next{0};
  auto work = [&](size_t t) {
    for (size_t i = next++; i < n; i = next++) fn(i, t);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
}

}  // namespace ucut
