// Test-only: the optimization memory's behaviour checks, written once and run against each backend
// (experience_store_test.cpp on a SQLite file, store_pg_test.cpp on a PostgreSQL schema), so the
// two backends are held to the same checks. Each takes the store's path (a file or a
// postgresql:// URL); the learn-failure check takes the backend's own way of making a write fail.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "memory/experience_store.h"
#include "memory/priors.h"

namespace ucut::memory::checks {

inline MemoryKey key(const std::string& bucket = "m12_n12_k12") { return {"gemm f32", bucket, "h200", "tf32"}; }

inline Experience exp(const std::string& slow, const std::string& fast, double gain,
                      const std::string& bucket = "m12_n12_k12") {
  return experience_make(key(bucket), "p", slow, {{"tile", slow}}, gain * 1e-3, fast, {{"tile", fast}}, 1e-3);
}

inline Prior prior(const std::string& tile, double speedup = 2) {
  Prior p;
  p.key = key();
  p.config = {{"tile", tile}};
  p.speedup = speedup;
  p.frac_sol = 0.5;
  return p;
}

inline MemoryAttempt attempt(const std::string& h, double t, int64_t prior_id = 0) {
  MemoryAttempt a;
  a.name = a.hash = h;
  a.config = {{"tile", h}};
  a.ok = true;
  a.time_s = t;
  a.prior_id = prior_id;
  return a;
}

// A repeated pair or winner merges into its row: seen / wins grow, the best gain or speedup stays.
inline void check_dedup(const std::string& path) {
  auto db = MemoryDb::open(path);
  ASSERT_TRUE(db) << db.error().render();
  auto a = (*db)->add_experience(exp("s1", "f1", 1.2));
  auto b = (*db)->add_experience(exp("s1", "f1", 1.5));
  auto c = (*db)->add_experience(exp("s1", "f1", 1.4));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, *c);
  auto got = (*db)->experience(*a);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->seen, 3);
  EXPECT_DOUBLE_EQ((*got)->gain, 1.5);
  EXPECT_EQ((*got)->slow_config, nlohmann::json({{"tile", "s1"}}));
  auto p1 = (*db)->add_prior(prior("x", 2));
  auto p2 = (*db)->add_prior(prior("x", 3));
  ASSERT_TRUE(p1 && p2);
  EXPECT_EQ(*p1, *p2);
  auto p = (*db)->prior(*p1);
  ASSERT_TRUE(p && *p);
  EXPECT_EQ((*p)->wins, 2);
  EXPECT_DOUBLE_EQ((*p)->speedup, 3);
  ASSERT_TRUE((*db)->mark_prior_used(*p1, true));
  p = (*db)->prior(*p1);
  ASSERT_TRUE(p && *p);
  EXPECT_EQ((*p)->uses, 1);
  EXPECT_EQ((*p)->helps, 1);
  auto st = (*db)->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->experiences, 1);
  EXPECT_EQ(st->priors, 1);
  EXPECT_EQ(st->merged, 3);
}

// Over the cap, the least useful record goes; one that helped a search stays even with a small gain.
inline void check_eviction(const std::string& path) {
  auto db = MemoryDb::open(path, MemoryCaps{3, 3});
  ASSERT_TRUE(db);
  auto helpful = (*db)->add_experience(exp("a", "b", 1.05));
  ASSERT_TRUE(helpful);
  ASSERT_TRUE((*db)->mark_experience_used(*helpful, true));
  ASSERT_TRUE((*db)->mark_experience_used(*helpful, true));
  ASSERT_TRUE((*db)->add_experience(exp("c", "d", 2.0)));
  ASSERT_TRUE((*db)->add_experience(exp("e", "f", 1.5)));
  ASSERT_TRUE((*db)->add_experience(exp("g", "h", 1.1)));  // the least useful: evicted
  auto st = (*db)->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->experiences, 3);
  EXPECT_EQ(st->evicted_experiences, 1);
  auto all = (*db)->experiences(MemoryQuery{});
  ASSERT_TRUE(all);
  std::vector<std::string> kept;
  for (const auto& e : *all) kept.push_back(e.slow_hash);
  EXPECT_EQ(kept, (std::vector<std::string>{"a", "c", "e"}));
}

// Queries filter the key exactly and put the nearest bucket first; max_distance drops far ones.
inline void check_nearest_bucket(const std::string& path) {
  auto db = MemoryDb::open(path);
  ASSERT_TRUE(db);
  Prior far = prior("far", 5), near = prior("near", 1.5), other = prior("other-gpu", 1.5);
  far.key = key("m9_n9_k9");
  near.key = key("m12_n12_k11");
  other.key = key("m12_n12_k11");
  other.key.gpu = "h100-sxm";
  for (const auto& p : {far, near, other}) ASSERT_TRUE((*db)->add_prior(p));
  MemoryQuery q{"gemm f32", "h200", "tf32", "m12_n12_k12", 1000, 10};
  auto got = (*db)->priors(q);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].config["tile"], "near");
  EXPECT_EQ((*got)[1].config["tile"], "far");
  q.max_distance = 3;
  got = (*db)->priors(q);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size(), 1u);
}

// What one search learns is stored together: when crediting its seed fails (`make_updates_fail`
// makes every UPDATE of priors fail with "boom"), none of its experiences stay.
inline void check_learn_is_all_or_nothing(const std::string& path, const std::function<void()>& make_updates_fail) {
  auto db = MemoryDb::open(path);
  ASSERT_TRUE(db);
  auto seed = (*db)->add_prior(prior("x"));
  ASSERT_TRUE(seed);
  make_updates_fail();
  LearnInput in;
  in.key = key();
  in.problem = "p";
  in.attempts = {attempt("a", 2e-3, *seed), attempt("b", 1e-3)};
  auto n = memory_learn(**db, in);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("boom"), std::string::npos) << n.error().render();
  auto st = (*db)->stats();
  ASSERT_TRUE(st) << st.error().render();
  EXPECT_EQ(st->experiences, 0);
  EXPECT_EQ(st->priors, 1);
}

}  // namespace ucut::memory::checks
