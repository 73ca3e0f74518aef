// The result store and the optimization memory on PostgreSQL (sql.h, store_sql.cpp,
// experience_store.cpp): the same behaviour as on SQLite (store_test.cpp, experience_store_test.cpp)
// against a real server, plus what only a shared server has: two writers at once, each with its own
// connection, merging and evicting without duplicates or losses, and two hosts migrating one new
// database at once. Needs UCUTLASS_TEST_PG (a postgresql:// URL of a database the user may create
// schemas in); tests/pg/with_postgres.sh starts a throwaway server and sets it (CTest
// memory.postgres). Without it the server tests skip; the dialect tests run anyway. Each test works
// in a schema of its own (search_path through the URL's options), dropped at the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "memory/experience_store.h"
#include "memory/memory_test_scenarios.h"
#include "memory/priors.h"
#include "memory/sql.h"
#include "memory/store.h"

namespace ucut::memory {
namespace {

std::string pg_base_url() {
  const char* v = std::getenv("UCUTLASS_TEST_PG");
  return v && *v ? v : "";
}

// A fresh schema on the test server; url() opens the store in it.
class Pg : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = pg_base_url();
    if (base_.empty())
      GTEST_SKIP() << "UCUTLASS_TEST_PG is not set: no PostgreSQL server to test against; run this test "
                      "through tests/pg/with_postgres.sh (ctest -R memory.postgres does), or set it to a "
                      "postgresql:// URL";
    static std::atomic<int> n{0};
    schema_ = "ucut_t_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
    auto admin = sql_open_postgres(base_);
    ASSERT_TRUE(admin) << admin.error().render();
    admin_ = std::move(*admin);
    ASSERT_TRUE(admin_->exec("CREATE SCHEMA " + schema_));
    url_ = base_ + (base_.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema_;
  }
  void TearDown() override {
    if (admin_) (void)admin_->exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
  }
  // One value from the test's schema, through a connection of its own.
  int64_t scalar(const std::string& sql) {
    auto c = sql_open_postgres(url_);
    EXPECT_TRUE(c) << c.error().render();
    if (!c) return -1;
    auto r = (*c)->query(sql);
    EXPECT_TRUE(r) << sql << ": " << r.error().render();
    return r && !r->empty() ? r->front().integer(0) : -1;
  }
  Status run_sql(const std::string& sql) {
    auto c = sql_open_postgres(url_);
    if (!c) return c.error();
    return (*c)->exec(sql);
  }
  const std::string& url() const { return url_; }

 private:
  std::string base_, schema_, url_;
  std::unique_ptr<SqlConn> admin_;
};

using checks::exp;
using checks::key;
using checks::prior;

// --- The dialect: needs no server. ---

TEST(SqlDialect, PlaceholdersBecomeNumberedOutsideQuotedText) {
  EXPECT_EQ(sql_placeholders("SELECT id FROM t WHERE a = ? AND b = '?' AND c IN (?, ?)"),
            "SELECT id FROM t WHERE a = $1 AND b = '?' AND c IN ($2, $3)");
  EXPECT_EQ(sql_placeholders("no parameters"), "no parameters");
}

TEST(SqlDialect, MigrationTypesAre64BitOnPostgres) {
  const std::string ddl = "CREATE TABLE t (\n  id INTEGER PRIMARY KEY,\n  n INTEGER NOT NULL,\n  x REAL,\n"
                          "  realm TEXT, integers TEXT\n);";
  EXPECT_EQ(sql_ddl(SqlDialect::sqlite, ddl), ddl);
  EXPECT_EQ(sql_ddl(SqlDialect::postgres, ddl),
            "CREATE TABLE t (\n  id BIGSERIAL PRIMARY KEY,\n  n BIGINT NOT NULL,\n  x DOUBLE PRECISION,\n"
            "  realm TEXT, integers TEXT\n);");
  for (const auto& m : store_migrations()) {
    const std::string pg = sql_ddl(SqlDialect::postgres, m);
    EXPECT_EQ(pg.find("INTEGER"), std::string::npos) << pg;
    EXPECT_EQ(pg.find(" REAL"), std::string::npos) << pg;
  }
  EXPECT_STREQ(sql_greatest(SqlDialect::sqlite), "MAX");
  EXPECT_STREQ(sql_greatest(SqlDialect::postgres), "GREATEST");
}

TEST(SqlDialect, PathsDispatchOnTheScheme) {
  EXPECT_TRUE(sql_is_postgres_url("postgresql://ann@db.example/ucut"));
  EXPECT_TRUE(sql_is_postgres_url("postgres://db/ucut"));
  EXPECT_FALSE(sql_is_postgres_url("/home/ann/postgresql://x.db"));
  EXPECT_FALSE(sql_is_postgres_url("ucutlass.db"));
  auto s = store_open(":memory:");
  ASSERT_TRUE(s) << s.error().render();
  EXPECT_EQ((*s)->schema_version(), store_latest_version());
  // store_open_sqlite hands a URL on (port 1: refused at once) instead of making folders of it.
  auto u = store_open_sqlite("postgresql://ann@127.0.0.1:1/ucut");
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("cannot connect to the PostgreSQL store"), std::string::npos)
      << u.error().render();
}

TEST(SqlDialect, MessagesNeverShowThePassword) {
  EXPECT_EQ(sql_redact_url("postgresql://ann:s3cret@db:5432/ucut?sslmode=require"),
            "postgresql://ann@db:5432/ucut?sslmode=require");
  EXPECT_EQ(sql_redact_url("postgresql://ann@db/ucut"), "postgresql://ann@db/ucut");
  EXPECT_EQ(sql_redact_url("postgresql://db:5432/ucut"), "postgresql://db:5432/ucut");
  // Port 1 on the loopback: nothing listens, the connection is refused at once.
  auto s = store_open("postgresql://ann:s3cret@127.0.0.1:1/ucut");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::io);
  EXPECT_NE(s.error().message.find("postgresql://ann@127.0.0.1:1/ucut: cannot connect"), std::string::npos)
      << s.error().render();
  EXPECT_EQ(s.error().render().find("s3cret"), std::string::npos) << s.error().render();
  EXPECT_FALSE(s.error().hint.empty());
}

// --- The store. ---

TEST_F(Pg, StoreMigratesFromEmptyAndKeepsDataAcrossReopen) {
  int64_t run = 0;
  {
    auto s = store_open(url());
    ASSERT_TRUE(s) << s.error().render();
    EXPECT_EQ((*s)->schema_version(), store_latest_version());
    auto r = (*s)->begin_run({"eval p.py k.so", "abc", "H200", "default", ""});
    ASSERT_TRUE(r) << r.error().render();
    run = *r;
    auto c1 = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"});
    auto c2 = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"});
    ASSERT_TRUE(c1 && c2);
    EXPECT_EQ(*c1, *c2);
    MeasurementRow m;
    m.run_id = run;
    m.candidate_id = *c1;
    m.status = "ok";
    m.median_ms = 1.0 / 3.0;  // no digit lost on the way through text
    m.speedup_eager = std::nan("");
    m.frac_sol = 0.5;
    m.counted = true;
    m.record_json = "{\"x\":1}";
    auto id = (*s)->add_measurement(m);
    ASSERT_TRUE(id) << id.error().render();
    m.status = "mismatch";
    ASSERT_TRUE((*s)->add_measurement(m));  // the same candidate again: both rows are kept
    ASSERT_TRUE((*s)->end_run(run));
  }
  auto s = store_open(url(), StoreAccess::existing);
  ASSERT_TRUE(s) << s.error().render();
  auto rows = (*s)->measurements(run);
  ASSERT_TRUE(rows) << rows.error().render();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].status, "ok");
  EXPECT_EQ((*rows)[1].status, "mismatch");
  EXPECT_EQ((*rows)[0].median_ms, 1.0 / 3.0);
  EXPECT_TRUE(std::isnan((*rows)[0].speedup_eager));
  EXPECT_TRUE((*rows)[0].counted);
  EXPECT_FALSE((*rows)[0].degenerate);
  EXPECT_EQ((*rows)[0].record_json, "{\"x\":1}");
  EXPECT_FALSE((*rows)[0].created_at.empty());
  auto by_problem = (*s)->measurements_for_problem("sha");
  ASSERT_TRUE(by_problem);
  EXPECT_EQ(by_problem->size(), 2u);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM runs WHERE ended_at IS NOT NULL"), 1);
}

TEST_F(Pg, StoreKeepsItsVersionInOneRowAndMigratesAnOldDatabaseInOrder) {
  int64_t run = 0;
  {
    auto s = store_open(url());
    ASSERT_TRUE(s) << s.error().render();
    auto r = (*s)->begin_run({"optimize p.py", "", "", "", ""});
    ASSERT_TRUE(r);
    run = *r;
  }
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM ucutlass_schema_version"), 1);
  EXPECT_EQ(scalar("SELECT version FROM ucutlass_schema_version"), store_latest_version());
  // Back to version 1: the memory's tables gone, as a store from before migration 1 -> 2 was.
  ASSERT_TRUE(run_sql("DROP TABLE experiences; DROP TABLE priors; DROP TABLE memory_meta; "
                      "UPDATE ucutlass_schema_version SET version = 1;"));
  auto db = MemoryDb::open(url());
  ASSERT_TRUE(db) << db.error().render();
  ASSERT_TRUE((*db)->add_experience(exp("s", "f", 1.3)));
  EXPECT_EQ(scalar("SELECT version FROM ucutlass_schema_version"), store_latest_version());
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM ucutlass_schema_version"), 1);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM runs WHERE id = " + std::to_string(run)), 1) << "migrating lost a run";
  // A second row cannot be added: the version is one value.
  EXPECT_FALSE(run_sql("INSERT INTO ucutlass_schema_version(version) VALUES(7)"));
}

TEST_F(Pg, StoreRefusesANewerSchema) {
  { ASSERT_TRUE(store_open(url())); }
  ASSERT_TRUE(run_sql("UPDATE ucutlass_schema_version SET version = 99"));
  auto s = store_open(url());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::unsupported);
  EXPECT_NE(s.error().message.find("schema version 99"), std::string::npos) << s.error().render();
  auto db = MemoryDb::open(url());
  ASSERT_FALSE(db);
  EXPECT_NE(db.error().message.find("schema version 99"), std::string::npos) << db.error().render();
  EXPECT_EQ(scalar("SELECT version FROM ucutlass_schema_version"), 99) << "a newer store was touched";
}

TEST_F(Pg, ReadersNeverCreateAStore) {
  auto s = store_open(url(), StoreAccess::existing);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::not_found);
  EXPECT_NE(s.error().message.find("no result store there"), std::string::npos) << s.error().render();
  auto db = MemoryDb::open(url(), {}, StoreAccess::existing);
  ASSERT_FALSE(db);
  EXPECT_EQ(db.error().code, ErrorCode::not_found);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()"), 0)
      << "a reader created tables";
}

TEST_F(Pg, StoreEnforcesForeignKeys) {
  auto s = store_open(url());
  ASSERT_TRUE(s);
  MeasurementRow m;
  m.run_id = 42;
  m.candidate_id = 7;
  m.status = "ok";
  m.record_json = "{}";
  auto r = (*s)->add_measurement(m);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("inserting a measurement"), std::string::npos) << r.error().render();
}

TEST_F(Pg, StoreTransactionKeepsAllOrNothing) {
  auto s = store_open(url());
  ASSERT_TRUE(s);
  ASSERT_TRUE((*s)->begin_run({"eval", "", "", "", ""}));
  auto failed = (*s)->transaction([&]() -> Status {
    if (auto c = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"}); !c) return c.error();
    return make_error(ErrorCode::invalid_input, "stop here");
  });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "stop here");
  // Nested: the inner failure undoes only the inner write, even after a statement that failed
  // (which on PostgreSQL aborts everything up to the savepoint).
  auto outer = (*s)->transaction([&]() -> Status {
    if (auto c = (*s)->upsert_candidate({"p", "sha", "a", "ph", "cfg", "/a.so"}); !c) return c.error();
    auto inner = (*s)->transaction([&]() -> Status {
      if (auto c = (*s)->upsert_candidate({"p", "sha", "b", "ph", "cfg", "/b.so"}); !c) return c.error();
      MeasurementRow bad;
      bad.run_id = 999;
      bad.candidate_id = 999;
      bad.status = "ok";
      bad.record_json = "{}";
      if (auto m = (*s)->add_measurement(bad); !m) return m.error();
      return ok_status();
    });
    EXPECT_FALSE(inner);
    return ok_status();
  });
  ASSERT_TRUE(outer) << outer.error().render();
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM candidates WHERE name = 'a'"), 1);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM candidates WHERE name IN ('b', 'k')"), 0);
  // A body that ignores a failed statement and returns ok still stores nothing of it.
  auto ignored = (*s)->transaction([&]() -> Status {
    if (auto c = (*s)->upsert_candidate({"p", "sha", "z", "ph", "cfg", "/z.so"}); !c) return c.error();
    MeasurementRow bad;
    bad.run_id = 999;
    bad.candidate_id = 999;
    bad.status = "ok";
    bad.record_json = "{}";
    (void)(*s)->add_measurement(bad);
    return ok_status();
  });
  EXPECT_FALSE(ignored);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM candidates WHERE name = 'z'"), 0);
}

// Two hosts opening one new database at the same moment: it is migrated once, and both open it.
TEST_F(Pg, TwoHostsMigrateANewDatabaseOnce) {
  std::latch start(4);
  std::vector<std::string> errors(4);
  std::vector<std::thread> hosts;
  for (int t = 0; t < 4; ++t)
    hosts.emplace_back([&, t] {
      start.arrive_and_wait();
      auto s = t % 2 ? store_open(url()) : [&]() -> Result<std::unique_ptr<Store>> {
        auto db = MemoryDb::open(url());
        if (!db) return db.error();
        return store_open(url());
      }();
      if (!s) errors[t] = s.error().render();
    });
  for (auto& h : hosts) h.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(scalar("SELECT version FROM ucutlass_schema_version"), store_latest_version());
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM ucutlass_schema_version"), 1);
}

TEST_F(Pg, TwoWritersShareOneCandidateRow) {
  constexpr int kRounds = 40;
  { ASSERT_TRUE(store_open(url())); }
  std::latch start(2);
  std::vector<std::vector<int64_t>> ids(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t)
    writers.emplace_back([&, t] {
      auto s = store_open(url());
      if (!s) {
        errors[t] = s.error().render();
        start.count_down();
        return;
      }
      start.arrive_and_wait();
      for (int i = 0; i < kRounds; ++i) {
        auto c = (*s)->upsert_candidate({"p", "sha", "k" + std::to_string(i), "ph", "cfg", "/k.so"});
        if (!c) {
          errors[t] = c.error().render();
          return;
        }
        ids[t].push_back(*c);
      }
    });
  for (auto& w : writers) w.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM candidates"), kRounds);
}

// --- The memory. ---

TEST_F(Pg, MemoryDeduplicatesByProgramHashAndKeepsTheBest) {
  checks::check_dedup(url());
  auto st = (*MemoryDb::open(url()))->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->path.rfind("postgresql://", 0), 0u) << st->path;
}

TEST_F(Pg, MemoryEvictsByUsefulnessNeverTheHelpfulOnes) { checks::check_eviction(url()); }

TEST_F(Pg, MemoryQueriesPreferTheNearestBucket) { checks::check_nearest_bucket(url()); }

TEST_F(Pg, MemoryExportImportRoundTripsAndAFailedImportKeepsNothing) {
  auto a = MemoryDb::open(url());
  ASSERT_TRUE(a);
  ASSERT_TRUE((*a)->add_experience(exp("s", "f", 1.3)));
  ASSERT_TRUE((*a)->add_prior(prior("f")));
  auto doc = (*a)->export_json();
  ASSERT_TRUE(doc);
  auto n = (*a)->import_json(*doc, "x.json");  // the same records again: merged, not duplicated
  ASSERT_TRUE(n) << n.error().render();
  EXPECT_EQ(n->experiences, 1);
  EXPECT_EQ(n->priors, 1);
  auto st = (*a)->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->experiences, 1);
  EXPECT_EQ(st->priors, 1);
  EXPECT_EQ(st->merged, 2);
  // A new record, then a prior the database rejects (a constraint added here): nothing of the
  // import stays, the new experience included.
  ASSERT_TRUE(run_sql("ALTER TABLE priors ADD CONSTRAINT no_bad CHECK (config NOT LIKE '%bad%')"));
  nlohmann::json more = *doc;
  more["experiences"].push_back(experience_to_json(exp("s9", "f9", 1.7)));
  more["priors"].push_back(prior_to_json(prior("bad")));
  auto failed = (*a)->import_json(more, "y.json");
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("no_bad"), std::string::npos) << failed.error().render();
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences"), 1);
  EXPECT_EQ(scalar("SELECT value FROM memory_meta WHERE key = 'merged'"), 2);
}

TEST_F(Pg, MemoryAFailureHalfWayThroughAWriteKeepsNothingOfIt) {
  checks::check_learn_is_all_or_nothing(url(), [&] {
    ASSERT_TRUE(run_sql("CREATE FUNCTION no_credit() RETURNS trigger LANGUAGE plpgsql AS "
                        "$$ BEGIN RAISE EXCEPTION 'boom'; END $$; "
                        "CREATE TRIGGER no_credit BEFORE UPDATE ON priors FOR EACH ROW EXECUTE FUNCTION no_credit();"));
  });
}

// Two writers (as two hosts would), each with its own connection, add the same records and their
// own ones at the same time, many times: merging must neither duplicate a record nor lose an add.
TEST_F(Pg, TwoWritersMergeWithoutDuplicatesOrLosses) {
  constexpr int kRounds = 60;
  { ASSERT_TRUE(MemoryDb::open(url())); }
  std::latch start(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t)
    writers.emplace_back([&, t] {
      auto db = MemoryDb::open(url());
      auto fail = [&](const Error& e) { errors[t] = "writer " + std::to_string(t) + ": " + e.render(); };
      if (!db) {
        fail(db.error());
        start.count_down();
        return;
      }
      start.arrive_and_wait();
      const std::string me = "w" + std::to_string(t) + "_";
      for (int i = 0; i < kRounds; ++i) {
        const std::string n = std::to_string(i);
        // A record both add this round (both may find it missing and insert it), the one they
        // share all along (merged every time), and one of their own.
        if (auto r = (*db)->add_experience(exp("round_s" + n, "round_f" + n, 1.3)); !r) return fail(r.error());
        if (auto r = (*db)->add_experience(exp("shared_s", "shared_f", 1.1 + 0.01 * i)); !r) return fail(r.error());
        if (auto r = (*db)->add_experience(exp(me + "s" + n, me + "f" + n, 1.2)); !r) return fail(r.error());
        if (auto r = (*db)->add_prior(prior("round" + n)); !r) return fail(r.error());
        if (auto r = (*db)->add_prior(prior("shared", 1 + i)); !r) return fail(r.error());
        if (auto r = (*db)->add_prior(prior(me + n)); !r) return fail(r.error());
      }
    });
  for (auto& w : writers) w.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences"), 1 + 3 * kRounds);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM priors"), 1 + 3 * kRounds);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences WHERE slow_hash = 'shared_s'"), 1);
  EXPECT_EQ(scalar("SELECT seen FROM experiences WHERE slow_hash = 'shared_s'"), 2 * kRounds);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences WHERE slow_hash LIKE 'round_s%' AND seen = 2"), kRounds);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences WHERE slow_hash LIKE 'w%' AND seen = 1"), 2 * kRounds);
  EXPECT_EQ(scalar("SELECT SUM(seen) FROM experiences"), 6 * kRounds) << "an add was lost";
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM priors WHERE config LIKE '%round%' AND wins = 2"), kRounds);
  EXPECT_EQ(scalar("SELECT SUM(wins) FROM priors"), 6 * kRounds) << "an add was lost";
  auto db = MemoryDb::open(url());
  ASSERT_TRUE(db);
  auto shared = (*db)->priors(MemoryQuery{});
  ASSERT_TRUE(shared);
  bool found = false;
  for (const auto& p : *shared)
    if (p.config == nlohmann::json({{"tile", "shared"}})) {
      found = true;
      EXPECT_EQ(p.wins, 2 * kRounds);
      EXPECT_DOUBLE_EQ(p.speedup, kRounds);  // the best of every add
    }
  EXPECT_TRUE(found);
  auto st = (*db)->stats();
  ASSERT_TRUE(st);
  // Each record merges every add after its first: the long-shared ones 2k - 1 times, each round's once.
  EXPECT_EQ(st->merged, 2 * (2 * kRounds - 1) + 2 * kRounds) << "merges miscounted";
  EXPECT_EQ(st->evicted_experiences + st->evicted_priors, 0);
}

// Two writers filling a capped memory at once: eviction keeps exactly the cap and counts exactly
// what it removed (two evictions interleaved would remove or count a record twice).
TEST_F(Pg, TwoWritersEvictExactlyDownToTheCap) {
  constexpr int kRounds = 40, kCap = 10;
  { ASSERT_TRUE(MemoryDb::open(url())); }
  std::latch start(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t)
    writers.emplace_back([&, t] {
      auto db = MemoryDb::open(url(), MemoryCaps{kCap, kCap});
      auto fail = [&](const Error& e) { errors[t] = "writer " + std::to_string(t) + ": " + e.render(); };
      if (!db) {
        fail(db.error());
        start.count_down();
        return;
      }
      start.arrive_and_wait();
      const std::string me = "w" + std::to_string(t) + "_";
      for (int i = 0; i < kRounds; ++i) {
        const std::string n = std::to_string(i);
        if (auto r = (*db)->add_experience(exp(me + "s" + n, me + "f" + n, 1.1 + 0.01 * i)); !r)
          return fail(r.error());
        if (auto r = (*db)->add_prior(prior(me + n, 1 + i)); !r) return fail(r.error());
      }
    });
  for (auto& w : writers) w.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences"), kCap);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM priors"), kCap);
  EXPECT_EQ(scalar("SELECT value FROM memory_meta WHERE key = 'evicted_experiences'"), 2 * kRounds - kCap);
  EXPECT_EQ(scalar("SELECT value FROM memory_meta WHERE key = 'evicted_priors'"), 2 * kRounds - kCap);
}

}  // namespace
}  // namespace ucut::memory
