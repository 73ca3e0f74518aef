// record_save stores a candidate and its measurement together or not at all.
#include "eval/record_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>

namespace ucut::eval {
namespace {

int64_t count_rows(const std::string& path, const char* table) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, (std::string("SELECT COUNT(*) FROM ") + table).c_str(), -1, &s, nullptr);
  int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

TEST(RecordSave, AFailedMeasurementLeavesNoCandidateBehind) {
  const std::string path = ::testing::TempDir() + "/record_save" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  {
    auto store = memory::store_open_sqlite(path);
    ASSERT_TRUE(store) << store.error().render();
    RunRecord r;
    r.problem = "p";
    r.problem_sha256 = "sha";
    r.candidate = "k";
    r.status = "ok";
    auto run = (*store)->begin_run({"eval", "", "", "", ""});
    ASSERT_TRUE(run);
    ASSERT_TRUE(record_save(**store, *run, r));
    // A run that does not exist: the measurement's foreign key fails after the candidate row of
    // this new candidate was inserted; the transaction takes that row back.
    r.candidate = "k2";
    auto bad = record_save(**store, *run + 100, r);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("inserting a measurement"), std::string::npos) << bad.error().render();
  }
  EXPECT_EQ(count_rows(path, "candidates"), 1);
  EXPECT_EQ(count_rows(path, "measurements"), 1);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace
}  // namespace ucut::eval
