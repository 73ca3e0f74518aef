// Stable content hashes: SHA-256 for cache keys and program identity. Stable across runs,
// machines and compilers, so a hash printed today names the same program tomorrow.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ucut {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  // Adds a field with its length, so ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view data);
  std::array<uint8_t, 32> digest();
  std::string hex();  // 64 lowercase hex characters

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace ucut
