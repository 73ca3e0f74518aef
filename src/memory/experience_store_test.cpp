#include "memory/experience_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sqlite3.h>
#include <sstream>

#include "memory/memory_test_scenarios.h"
#include "memory/priors.h"
#include "memory/store.h"

namespace ucut::memory {
namespace {

struct TempDb {
  TempDb() {
    char tmpl[] = "/tmp/ucut-memory-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/store.db";
  }
  ~TempDb() { std::filesystem::remove_all(dir); }
  std::string dir, path;
};

using checks::exp;
using checks::key;

TEST(MemoryDb, DeduplicatesByProgramHashAndKeepsTheBestGain) {
  TempDb t;
  checks::check_dedup(t.path);
}

TEST(MemoryDb, EvictsByUsefulnessNeverTheHelpfulOnes) {
  TempDb t;
  checks::check_eviction(t.path);
}

TEST(MemoryDb, QueriesPreferTheNearestBucketAndFilterTheKey) {
  TempDb t;
  checks::check_nearest_bucket(t.path);
}

TEST(MemoryDb, ExportImportRoundTripMergesDuplicates) {
  TempDb t1, t2;
  auto a = MemoryDb::open(t1.path);
  ASSERT_TRUE(a);
  ASSERT_TRUE((*a)->add_experience(exp("s", "f", 1.3)));
  Prior p;
  p.key = key();
  p.config = {{"tile", "f"}};
  p.speedup = 2;
  ASSERT_TRUE((*a)->add_prior(p));
  auto doc = (*a)->export_json();
  ASSERT_TRUE(doc);
  auto b = MemoryDb::open(t2.path);
  ASSERT_TRUE(b);
  auto n = (*b)->import_json(*doc, "x.json");
  ASSERT_TRUE(n) << n.error().render();
  EXPECT_EQ(n->experiences, 1);
  EXPECT_EQ(n->priors, 1);
  ASSERT_TRUE((*b)->import_json(*doc, "x.json"));  // again: merged, not duplicated
  auto st = (*b)->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->experiences, 1);
  EXPECT_EQ(st->priors, 1);
  auto bad = (*b)->import_json(nlohmann::json{{"schema", "other"}}, "y.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("y.json"), std::string::npos);
}

// The file's bytes, to show an import that fails leaves the store exactly as it was.
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(MemoryDb, ImportChecksTheWholeFileFirstAndNamesTheBadElement) {
  TempDb t;
  nlohmann::json doc;
  {
    auto a = MemoryDb::open(t.path);
    ASSERT_TRUE(a);
    ASSERT_TRUE((*a)->add_experience(exp("s", "f", 1.3)));
    ASSERT_TRUE((*a)->add_experience(exp("s2", "f2", 1.4)));
    auto d = (*a)->export_json();
    ASSERT_TRUE(d);
    doc = *d;
  }
  TempDb t2;
  { ASSERT_TRUE(MemoryDb::open(t2.path)); }
  const std::string before = file_bytes(t2.path);
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](nlohmann::json& d) { d["experiences"][1]["seen"] = "many"; },
       "x.json: $.experiences[1].seen: expected a whole number >= 0, found \"many\""},
      {[](nlohmann::json& d) { d["priors"] = nlohmann::json::array({nlohmann::json::object()}); },
       "x.json: $.priors[0].key: missing (an object)"},
      {[](nlohmann::json& d) { d["experiences"] = "nope"; }, "x.json: $.experiences: expected an array, found \"nope\""},
      {[](nlohmann::json& d) { d.erase("priors"); }, "x.json: $.priors: missing (an array; [] for none)"},
      {[](nlohmann::json& d) { d["experiences"][0]["key"]["gpu"] = 7; },
       "x.json: $.experiences[0].key.gpu: expected a non-empty string, found 7"},
      {[](nlohmann::json& d) { d["experiences"][1] = 3; }, "x.json: $.experiences[1]: expected an object, found 3"},
  };
  for (const auto& c : cases) {
    nlohmann::json d = doc;
    c.edit(d);
    {
      auto b = MemoryDb::open(t2.path);
      ASSERT_TRUE(b);
      auto n = (*b)->import_json(d, "x.json");
      ASSERT_FALSE(n) << c.message;
      EXPECT_EQ(n.error().code, ErrorCode::invalid_input);
      EXPECT_EQ(n.error().message, c.message);
      EXPECT_NE(n.error().hint.find("nothing was imported"), std::string::npos);
    }
    EXPECT_EQ(file_bytes(t2.path), before) << c.message;
  }
}

TEST(MemoryDb, AFailureHalfWayThroughAWriteKeepsNothingOfIt) {
  TempDb t;
  checks::check_learn_is_all_or_nothing(t.path, [&] {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(t.path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "CREATE TRIGGER no_credit BEFORE UPDATE ON priors BEGIN SELECT RAISE(ABORT, 'boom'); END;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  });
}

TEST(MemoryDb, SharesTheResultStoreFileWithoutTouchingItsTables) {
  TempDb t;
  {
    auto store = store_open_sqlite(t.path);
    ASSERT_TRUE(store);
    RunInfo run;
    run.command = "optimize p.py";
    ASSERT_TRUE((*store)->begin_run(run));
  }
  auto db = MemoryDb::open(t.path);
  ASSERT_TRUE(db);
  ASSERT_TRUE((*db)->add_experience(exp("s", "f", 1.3)));
  auto store = store_open_sqlite(t.path);
  ASSERT_TRUE(store);
  EXPECT_EQ((*store)->schema_version(), store_latest_version());
}

TEST(MemoryLearn, ImprovementsBecomeExperiencesAndTheBestAPrior) {
  LearnInput in;
  in.key = key();
  in.problem = "p";
  in.t_eager = 3e-3;
  in.t_sol = 0.8e-3;
  auto att = [](std::string h, bool ok, double t, int64_t prior = 0) {
    MemoryAttempt a;
    a.name = h;
    a.hash = h;
    a.config = {{"tile", h}};
    a.ok = ok;
    a.time_s = t;
    a.prior_id = prior;
    return a;
  };
  in.attempts = {att("a", true, 2e-3), att("b", false, 0), att("c", true, 1.99e-3),  // +0.5%: noise
                 att("d", true, 1.5e-3, 9), att("e", true, 1.6e-3), att("f", true, 1.0e-3)};
  auto exps = memory_learn_experiences(in);
  ASSERT_EQ(exps.size(), 3u);
  EXPECT_EQ(exps[0].slow_hash, "c");
  EXPECT_EQ(exps[0].fast_hash, "d");
  EXPECT_EQ(exps[1].slow_hash, "d");
  EXPECT_EQ(exps[1].fast_hash, "f");
  EXPECT_EQ(exps[2].slow_hash, "a");  // the whole trip
  EXPECT_EQ(exps[2].fast_hash, "f");
  auto prior = memory_learn_prior(in);
  ASSERT_TRUE(prior);
  EXPECT_EQ(prior->config_name, "f");
  EXPECT_DOUBLE_EQ(prior->speedup, 3.0);
  in.t_eager = 0.9e-3;  // nothing beat eager: no prior
  EXPECT_FALSE(memory_learn_prior(in));
  // A strategy's own account of why (the LLM agent's summary) replaces the knob diff's lesson.
  in.lessons[{"d", "f"}] = "fusing the bias saves a pass over the output";
  exps = memory_learn_experiences(in);
  ASSERT_EQ(exps.size(), 3u);
  EXPECT_EQ(exps[1].lesson, "fusing the bias saves a pass over the output");
  EXPECT_NE(exps[0].lesson, exps[1].lesson);
}

}  // namespace
}  // namespace ucut::memory
