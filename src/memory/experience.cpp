#include "memory/experience.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "support/hash.h"

namespace ucut::memory {

namespace {
int log2_round(int64_t v) { return v <= 1 ? 0 : static_cast<int>(std::lround(std::log2(double(v)))); }

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::map<char, int> bucket_parts(const std::string& b) {
  std::map<char, int> out;
  size_t i = 0;
  while (i < b.size()) {
    char name = b[i++];
    size_t j = i;
    while (j < b.size() && b[j] != '_') ++j;
    out[name] = std::atoi(b.substr(i, j - i).c_str());
    i = j + 1;
  }
  return out;
}

MemoryKey key_from_json(const nlohmann::json& j) {
  return {j.value("class", ""), j.value("bucket", ""), j.value("gpu", ""), j.value("policy", "")};
}
nlohmann::json key_to_json(const MemoryKey& k) {
  return {{"class", k.cls}, {"bucket", k.bucket}, {"gpu", k.gpu}, {"policy", k.policy}};
}
}  // namespace

std::string memory_shape_bucket(int64_t m, int64_t n, int64_t k, int64_t batch) {
  std::string b = batch > 1 ? fmt::format("b{}_", log2_round(batch)) : "";
  return b + fmt::format("m{}_n{}_k{}", log2_round(m), log2_round(n), log2_round(k));
}

int memory_bucket_distance(const std::string& a, const std::string& b) {
  if (a == b) return 0;
  auto pa = bucket_parts(a), pb = bucket_parts(b);
  int d = 0;
  for (char c : std::string("bmnk")) {
    bool ia = pa.count(c), ib = pb.count(c);
    if (ia && ib)
      d += std::abs(pa[c] - pb[c]);
    else if (ia != ib)
      d += 4;
  }
  return d;
}

nlohmann::json Experience::move() const {
  nlohmann::json m = nlohmann::json::object();
  if (!fast_config.is_object()) return m;
  for (auto it = fast_config.begin(); it != fast_config.end(); ++it)
    if (!slow_config.is_object() || !slow_config.contains(it.key()) || slow_config[it.key()] != *it)
      m[it.key()] = *it;
  return m;
}

std::string experience_diff(const nlohmann::json& slow, const nlohmann::json& fast) {
  std::string out;
  std::map<std::string, std::pair<std::string, std::string>> keys;
  if (slow.is_object())
    for (auto it = slow.begin(); it != slow.end(); ++it) keys[it.key()].first = value_text(*it);
  if (fast.is_object())
    for (auto it = fast.begin(); it != fast.end(); ++it) keys[it.key()].second = value_text(*it);
  for (const auto& [k, v] : keys) {
    if (v.first == v.second) continue;
    if (!v.first.empty()) out += fmt::format("- {} {}\n", k, v.first);
    if (!v.second.empty()) out += fmt::format("+ {} {}\n", k, v.second);
  }
  return out;
}

std::string experience_lesson(const nlohmann::json& slow, const nlohmann::json& fast, double gain,
                              const MemoryKey& key) {
  std::string changes;
  if (fast.is_object())
    for (auto it = fast.begin(); it != fast.end(); ++it) {
      std::string before = slow.is_object() && slow.contains(it.key()) ? value_text(slow[it.key()]) : "";
      std::string after = value_text(*it);
      if (before == after) continue;
      if (!changes.empty()) changes += ", ";
      changes += before.empty() ? fmt::format("{} {}", it.key(), after)
                                : fmt::format("{} {} -> {}", it.key(), before, after);
    }
  if (changes.empty()) changes = "the same configuration";
  return fmt::format("{} beat the slower configuration by {:.2f}x on {} {} ({}, {})", changes, gain,
                     key.cls, key.bucket, key.gpu, key.policy);
}

Experience experience_make(const MemoryKey& key, const std::string& problem,
                           const std::string& slow_hash, const nlohmann::json& slow_config,
                           double slow_s, const std::string& fast_hash,
                           const nlohmann::json& fast_config, double fast_s) {
  Experience e;
  e.key = key;
  e.problem = problem;
  e.slow_hash = slow_hash;
  e.fast_hash = fast_hash;
  e.slow_config = slow_config;
  e.fast_config = fast_config;
  e.slow_s = slow_s;
  e.fast_s = fast_s;
  e.gain = fast_s > 0 ? slow_s / fast_s : 1;
  e.diff = experience_diff(slow_config, fast_config);
  e.lesson = experience_lesson(slow_config, fast_config, e.gain, key);
  return e;
}

double experience_usefulness(const Experience& e) {
  return 4.0 * e.helps + 1.0 * (e.seen - 1) + std::log(std::max(e.gain, 1.0)) * 10.0 -
         0.5 * std::max(0, e.uses - e.helps);
}

double prior_usefulness(const Prior& p) {
  return 4.0 * p.helps + 2.0 * p.wins + std::log(std::max(p.speedup, 1.0)) -
         0.5 * std::max(0, p.uses - p.helps);
}

std::string experience_dedupe_key(const Experience& e) {
  return Sha256().field(e.key.gpu).field(e.key.policy).field(e.slow_hash).field(e.fast_hash).hex();
}

std::string prior_dedupe_key(const Prior& p) {
  return Sha256()
      .field(p.key.cls).field(p.key.bucket).field(p.key.gpu).field(p.key.policy)
      .field(p.config.dump())
      .hex();
}

nlohmann::json experience_to_json(const Experience& e) {
  return {{"id", e.id},           {"key", key_to_json(e.key)}, {"problem", e.problem},
          {"slow_hash", e.slow_hash}, {"fast_hash", e.fast_hash},
          {"slow_config", e.slow_config}, {"fast_config", e.fast_config},
          {"slow_s", e.slow_s},   {"fast_s", e.fast_s},        {"gain", e.gain},
          {"diff", e.diff},       {"lesson", e.lesson},        {"seen", e.seen},
          {"uses", e.uses},       {"helps", e.helps},          {"created_at", e.created_at}};
}

Experience experience_from_json(const nlohmann::json& j) {
  Experience e;
  e.id = j.value("id", int64_t{0});
  e.key = key_from_json(j.value("key", nlohmann::json::object()));
  e.problem = j.value("problem", "");
  e.slow_hash = j.value("slow_hash", "");
  e.fast_hash = j.value("fast_hash", "");
  e.slow_config = j.value("slow_config", nlohmann::json::object());
  e.fast_config = j.value("fast_config", nlohmann::json::object());
  e.slow_s = j.value("slow_s", 0.0);
  e.fast_s = j.value("fast_s", 0.0);
  e.gain = j.value("gain", 1.0);
  e.diff = j.value("diff", "");
  e.lesson = j.value("lesson", "");
  e.seen = j.value("seen", 1);
  e.uses = j.value("uses", 0);
  e.helps = j.value("helps", 0);
  e.created_at = j.value("created_at", "");
  return e;
}

nlohmann::json prior_to_json(const Prior& p) {
  return {{"id", p.id},         {"key", key_to_json(p.key)}, {"problem", p.problem},
          {"config", p.config}, {"config_name", p.config_name},
          {"program_hash", p.program_hash}, {"speedup", p.speedup}, {"frac_sol", p.frac_sol},
          {"wins", p.wins},     {"uses", p.uses},            {"helps", p.helps},
          {"created_at", p.created_at}};
}

Prior prior_from_json(const nlohmann::json& j) {
  Prior p;
  p.id = j.value("id", int64_t{0});
  p.key = key_from_json(j.value("key", nlohmann::json::object()));
  p.problem = j.value("problem", "");
  p.config = j.value("config", nlohmann::json::object());
  p.config_name = j.value("config_name", "");
  p.program_hash = j.value("program_hash", "");
  p.speedup = j.value("speedup", 0.0);
  p.frac_sol = j.value("frac_sol", 0.0);
  p.wins = j.value("wins", 1);
  p.uses = j.value("uses", 0);
  p.helps = j.value("helps", 0);
  p.created_at = j.value("created_at", "");
  return p;
}

}  // namespace ucut::memory
