// Size arithmetic that never overflows silently. Shapes come from files (a program, a problem.json)
// and can be anything; a product of dimensions or a sum of byte counts that does not fit in 64
// bits must become a diagnostic, never a wrapped count (which once passed the checker and emitted
// a kernel) or a division by zero (which crashed it).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ucut {

// a * b and a + b, or nullopt when the result does not fit in int64_t.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// The product of v[first..], or nullopt when it does not fit.
inline std::optional<int64_t> checked_product(const std::vector<int64_t>& v, size_t first = 0) {
  int64_t n = 1;
  for (size_t i = first; i < v.size(); ++i) {
    auto next = checked_mul(n, v[i]);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

}  // namespace ucut
