// The SQLite store: migrations from empty, reopening, refusing a newer schema, append-only rows,
// NaN as NULL, candidate dedup.
#include "memory/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace ucut::memory {
namespace {

// A fresh database path for one test; its files are removed when the test program ends.
std::string temp_db(const char* name) {
  struct Made {
    std::vector<std::string> paths;
    static void remove(const std::string& p) {
      std::remove(p.c_str());
      std::remove((p + "-wal").c_str());
      std::remove((p + "-shm").c_str());
    }
    ~Made() {
      for (const auto& p : paths) remove(p);
    }
  };
  static Made made;
  std::string p = ::testing::TempDir() + "/" + name + std::to_string(::getpid()) + ".db";
  Made::remove(p);
  made.paths.push_back(p);
  return p;
}

TEST(Store, MigratesFromEmptyAndKeepsDataAcrossReopen) {
  std::string path = temp_db("store_a");
  int64_t run = 0;
  {
    auto s = store_open_sqlite(path);
    ASSERT_TRUE(s) << s.error().render();
    EXPECT_EQ((*s)->schema_version(), store_latest_version());
    auto r = (*s)->begin_run({"eval p.py k.so", "abc", "H200", "default", ""});
    ASSERT_TRUE(r);
    run = *r;
    auto c1 = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"});
    auto c2 = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"});
    ASSERT_TRUE(c1 && c2);
    EXPECT_EQ(*c1, *c2);
    MeasurementRow m;
    m.run_id = run;
    m.candidate_id = *c1;
    m.status = "ok";
    m.median_ms = 1.5;
    m.speedup_eager = std::nan("");
    m.frac_sol = 0.5;
    m.counted = true;
    m.record_json = "{\"x\":1}";
    ASSERT_TRUE((*s)->add_measurement(m));
    m.status = "mismatch";
    ASSERT_TRUE((*s)->add_measurement(m));  // the same candidate again: both rows are kept
    ASSERT_TRUE((*s)->end_run(run));
  }
  auto s = store_open_sqlite(path);
  ASSERT_TRUE(s);
  auto rows = (*s)->measurements(run);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].status, "ok");
  EXPECT_EQ((*rows)[1].status, "mismatch");
  EXPECT_DOUBLE_EQ((*rows)[0].median_ms, 1.5);
  EXPECT_TRUE(std::isnan((*rows)[0].speedup_eager));
  EXPECT_EQ((*rows)[0].record_json, "{\"x\":1}");
  auto by_problem = (*s)->measurements_for_problem("sha");
  ASSERT_TRUE(by_problem);
  EXPECT_EQ(by_problem->size(), 2u);
}

TEST(Store, RefusesANewerSchema) {
  std::string path = temp_db("store_b");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 99;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto s = store_open_sqlite(path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("schema version 99"), std::string::npos);
}

TEST(Store, NotADatabaseIsAClearError) {
  std::string path = temp_db("store_c");
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("this is not sqlite, just text that is long enough to look like a header.......\n", f);
  std::fclose(f);
  auto s = store_open_sqlite(path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().render().find(path), std::string::npos);
}

TEST(Store, ForeignKeysAreEnforced) {
  auto s = store_open_sqlite(":memory:");
  ASSERT_TRUE(s);
  MeasurementRow m;
  m.run_id = 42;
  m.candidate_id = 7;
  m.status = "ok";
  m.record_json = "{}";
  EXPECT_FALSE((*s)->add_measurement(m));
}

TEST(Store, ReadersNeverCreateAStore) {
  const std::string dir = ::testing::TempDir() + "/no_such_dir" + std::to_string(::getpid());
  auto s = store_open_sqlite(dir + "/x.db", StoreAccess::existing);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::not_found);
  EXPECT_NE(s.error().message.find(dir + "/x.db: no result store there"), std::string::npos) << s.error().render();
  FILE* f = std::fopen(dir.c_str(), "r");
  EXPECT_EQ(f, nullptr) << "the folder was created";
  if (f) std::fclose(f);
}

TEST(Store, ATransactionKeepsAllOrNothing) {
  auto s = store_open_sqlite(":memory:");
  ASSERT_TRUE(s);
  auto run = (*s)->begin_run({"eval", "", "", "", ""});
  ASSERT_TRUE(run);
  auto failed = (*s)->transaction([&]() -> Status {
    if (auto c = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"}); !c) return c.error();
    return make_error(ErrorCode::invalid_input, "stop here");
  });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "stop here");
  // Nested: the inner failure undoes only the inner write.
  auto outer = (*s)->transaction([&]() -> Status {
    if (auto c = (*s)->upsert_candidate({"p", "sha", "a", "ph", "cfg", "/a.so"}); !c) return c.error();
    auto inner = (*s)->transaction([&]() -> Status {
      if (auto c = (*s)->upsert_candidate({"p", "sha", "b", "ph", "cfg", "/b.so"}); !c) return c.error();
      return make_error(ErrorCode::invalid_input, "inner");
    });
    EXPECT_FALSE(inner);
    return ok_status();
  });
  ASSERT_TRUE(outer) << outer.error().render();
  // Ids restart where the undone rows were: only 'a' was kept.
  auto a = (*s)->upsert_candidate({"p", "sha", "a", "ph", "cfg", "/a.so"});
  auto k = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"});
  ASSERT_TRUE(a && k);
  EXPECT_EQ(*a, 1);
  EXPECT_EQ(*k, 2);
}

TEST(Store, MigrationsAreNonEmptyAndVersioned) {
  ASSERT_GE(store_latest_version(), 1);
  for (const auto& m : store_migrations()) EXPECT_NE(m.find("CREATE"), std::string::npos);
}

}  // namespace
}  // namespace ucut::memory
