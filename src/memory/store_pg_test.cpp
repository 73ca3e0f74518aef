// The result store and the optimization memory on PostgreSQL (sql.h, store_sql.cpp,
// experience_store.cpp): the same behaviour as on SQLite (store_test.cpp, experience_store_test.cpp)
// against a real server, plus what only a shared server has: two writers at once, each with its own
// connection, merging and evicting without duplicates or losses, and two hosts migrating one new
// database at once. Needs UCUTLASS_TEST_PG (a postgresql:// URL of a database the user may create
// schemas in); tests/pg/with_postgres.sh starts a throwaway server and sets it (CTest
// memory.postgres). Without it the server tests skip; the dialect tests run anyway. Each test works
// in a schema of its own (search_path through the URL's options), dropped at the end.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <regex>
#include <sstream>
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
  const std::string& base() const { return base_; }
  const std::string& schema() const { return schema_; }
  SqlConn& admin() { return *admin_; }
  // url() as another role (the user info replaced).
  std::string url_as(const std::string& role) const {
    const size_t start = url_.find("://") + 3;
    const size_t at = url_.find('@', start);
    const size_t host = at == std::string::npos || at > url_.find('/', start) ? start : at + 1;
    return url_.substr(0, start) + role + "@" + url_.substr(host);
  }

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
  EXPECT_TRUE(sql_is_postgres("postgresql://ann@db.example/ucut"));
  EXPECT_TRUE(sql_is_postgres("postgres://db/ucut"));
  EXPECT_FALSE(sql_is_postgres("/home/ann/postgresql://x.db"));
  EXPECT_FALSE(sql_is_postgres("ucutlass.db"));
  auto s = store_open(":memory:");
  ASSERT_TRUE(s) << s.error().render();
  EXPECT_EQ((*s)->schema_version(), store_latest_version());
  // store_open_sqlite hands a URL on (port 1: refused at once) instead of making folders of it.
  auto u = store_open_sqlite("postgresql://ann@127.0.0.1:1/ucut");
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("cannot connect to the PostgreSQL store"), std::string::npos)
      << u.error().render();
}

// libpq's key=value form is a PostgreSQL store too: it used to be taken for a SQLite file's name
// (created in the current folder, password and all).
TEST(SqlDialect, KeyValueConnectionStringsArePostgres) {
  EXPECT_TRUE(sql_is_postgres("host=db dbname=ucut user=ann"));
  EXPECT_TRUE(sql_is_postgres("dbname=ucut"));
  EXPECT_TRUE(sql_is_postgres("host=127.0.0.1 port=1 password='a b' dbname=ucut"));
  EXPECT_FALSE(sql_is_postgres("runs/a=b.db"));        // not a keyword libpq knows
  EXPECT_FALSE(sql_is_postgres("host=db bogus=1"));    // one unknown keyword: not a connection string
  EXPECT_FALSE(sql_is_postgres("store.db"));
  auto s = store_open("host=127.0.0.1 port=1 password=s3cret dbname=ucut", StoreAccess::existing);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("cannot connect to the PostgreSQL store at 127.0.0.1:1"), std::string::npos)
      << s.error().render();
  EXPECT_EQ(s.error().render().find("s3cret"), std::string::npos) << s.error().render();
}

// Every place libpq takes a password from, as written in --db: the password is "***" when shown.
TEST(SqlDialect, EveryPasswordFormIsMasked) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // URL user info, and URLs without a password (unchanged)
      {"postgresql://ann:s3cret@db:5432/ucut?sslmode=require", "postgresql://ann:***@db:5432/ucut?sslmode=require"},
      {"postgres://ann:s3cret@db/ucut", "postgres://ann:***@db/ucut"},
      {"postgresql://ann@db/ucut", "postgresql://ann@db/ucut"},
      {"postgresql://db:5432/ucut", "postgresql://db:5432/ucut"},
      {"postgresql://db:5432", "postgresql://db:5432"},
      {"postgresql://ann:p%40ss@db/ucut", "postgresql://ann:***@db/ucut"},
      {"postgresql://ann:p@ss@db/ucut", "postgresql://ann:***@db/ucut"},    // a raw '@' in the password
      {"postgresql://ann:pa/ss@db/ucut", "postgresql://ann:***@db/ucut"},   // a raw '/'
      {"postgresql://ann:pw?x@db/ucut", "postgresql://ann:***@db/ucut"},    // a raw '?'
      {"postgresql://ann:pw@h1:5432,h2:5433/ucut", "postgresql://ann:***@h1:5432,h2:5433/ucut"},
      {"postgresql://:pw@db/ucut", "postgresql://:***@db/ucut"},
      // URL parameters, by their decoded names
      {"postgresql://ann@db/ucut?password=s3cret", "postgresql://ann@db/ucut?password=***"},
      {"postgresql://db/ucut?sslmode=require&password=s3cret&application_name=x",
       "postgresql://db/ucut?sslmode=require&password=***&application_name=x"},
      {"postgresql://db/ucut?pass%77ord=s3cret", "postgresql://db/ucut?pass%77ord=***"},
      {"postgresql://db/ucut?sslpassword=k3y", "postgresql://db/ucut?sslpassword=***"},
      {"postgresql://ann:a@db/ucut?password=b", "postgresql://ann:***@db/ucut?password=***"},
      {"postgresql://db/ucut?application_name=a@b", "postgresql://db/ucut?application_name=a@b"},
      // key=value pairs: bare, spaced, quoted with escapes, unterminated, malformed around them
      {"host=db password=s3cret dbname=ucut", "host=db password=*** dbname=ucut"},
      {"host=db password = s3cret dbname=ucut", "host=db password = *** dbname=ucut"},
      {"host=db password='s3 cr\\'et' dbname=ucut", "host=db password=*** dbname=ucut"},
      {"host=db password='s3cret", "host=db password=***"},
      {"password=a\\ b dbname=ucut", "password=*** dbname=ucut"},
      {"host=db junk password=s3cret", "host=db junk password=***"},
      {"sslpassword=k3y host=db", "sslpassword=*** host=db"},
      {"dbname=postgresql://ann:s3cret@db/ucut", "dbname='postgresql://ann:***@db/ucut'"},
      // not connection strings: as they are
      {"/home/ann/ucutlass.db", "/home/ann/ucutlass.db"},
      {"runs/a=b.db", "runs/a=b.db"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(sql_redact_conninfo(in), want) << in;
}

TEST(SqlDialect, MessagesLoseThePasswordsTheyQuote) {
  EXPECT_EQ(sql_redact_message("missing \"=\" after \"s3cret\" in connection info string", "host=db password=s3cret"),
            "missing \"=\" after \"***\" in connection info string");
  // As written and decoded; the longer first, so no part of either is left.
  EXPECT_EQ(sql_redact_message("p@ss or p%40ss", "postgresql://ann:p%40ss@db/ucut"), "*** or ***");
  EXPECT_EQ(sql_redact_message("a b and 'a b'", "password='a b'"), "*** and ***");
  EXPECT_EQ(sql_redact_message("nothing to hide", "postgresql://ann@db/ucut"), "nothing to hide");
}

TEST(SqlDialect, MessagesNeverShowThePassword) {
  // Port 1 on the loopback: nothing listens, the connection is refused at once.
  for (const std::string& url : std::vector<std::string>{"postgresql://ann:s3cret@127.0.0.1:1/ucut", "postgresql://ann@127.0.0.1:1/ucut?password=s3cret",
                                "host=127.0.0.1 port=1 user=ann password='s3cret' dbname=ucut"}) {
    auto s = store_open(url);
    ASSERT_FALSE(s) << url;
    EXPECT_EQ(s.error().code, ErrorCode::io);
    EXPECT_NE(s.error().message.find(sql_redact_conninfo(url) + ": cannot connect"), std::string::npos)
        << s.error().render();
    EXPECT_NE(s.error().message.find("127.0.0.1:1"), std::string::npos) << s.error().render();
    EXPECT_EQ(s.error().render().find("s3cret"), std::string::npos) << s.error().render();
    EXPECT_FALSE(s.error().hint.empty());
  }
}

TEST(SqlDialect, ABadStatementTimeoutIsNamed) {
  ::setenv("UCUTLASS_PG_STATEMENT_TIMEOUT", "soon", 1);
  auto t = sql_pg_timeouts();
  ::unsetenv("UCUTLASS_PG_STATEMENT_TIMEOUT");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("UCUTLASS_PG_STATEMENT_TIMEOUT: 'soon' is not a number of seconds"),
            std::string::npos);
  auto d = sql_pg_timeouts();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->connect_s, 10);
  EXPECT_EQ(d->statement_s, 60);
}

// A host that accepts the TCP connection and never answers (a listening socket nobody accepts on:
// the kernel completes the handshake) hung every command: libpq waits for ever by default. Now the
// connect timeout ends the wait, and the message names the host that did not answer.
TEST(SqlDialect, AServerThatNeverAnswersIsNamedAfterTheConnectTimeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  const char* env = std::getenv("PGCONNECT_TIMEOUT");
  const std::string saved = env ? env : "";
  ::unsetenv("PGCONNECT_TIMEOUT");  // the tool's default applies, not libpq's environment
  PgTimeouts t;
  t.connect_s = 2;
  auto c = sql_open_postgres("postgresql://ann:s3cret@127.0.0.1:" + port + "/ucut", t);
  if (!saved.empty()) ::setenv("PGCONNECT_TIMEOUT", saved.c_str(), 1);
  ::close(fd);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::io);  // exit 3: the environment
  EXPECT_NE(c.error().message.find("the PostgreSQL server at 127.0.0.1:" + port + " did not answer within 2 s"),
            std::string::npos)
      << c.error().render();
  EXPECT_NE(c.error().hint.find("connect_timeout"), std::string::npos) << c.error().render();
  EXPECT_EQ(c.error().render().find("s3cret"), std::string::npos) << c.error().render();
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

// A database that does not exist is a named store that does not exist: exit 2 (a missing SQLite
// file's code), not 3; writers do not create databases.
TEST_F(Pg, ADatabaseThatDoesNotExistIsNotFound) {
  std::string other = base().substr(0, base().find('?'));
  other = other.substr(0, other.rfind('/') + 1) + "ucut_no_such_db";
  for (auto access : {StoreAccess::existing, StoreAccess::create}) {
    auto s = store_open(other, access);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::not_found) << s.error().render();
    EXPECT_NE(s.error().message.find("has no database \"ucut_no_such_db\""), std::string::npos) << s.error().render();
    EXPECT_NE(s.error().hint.find("createdb"), std::string::npos) << s.error().render();
  }
}

// `memory stats` prints where the store is: a password given as a URL parameter was printed as it
// was written (the user info was masked, the parameter not).
TEST_F(Pg, TheStoreShownNeverHoldsItsPassword) {
  // Trust authentication here: the server ignores the password, so the store opens with it.
  const size_t start = url().find("://") + 3;
  for (const std::string& with_pw : std::vector<std::string>{url() + "&password=s3cret", url().substr(0, url().find('@')) + ":s3cret" +
                                                                    url().substr(url().find('@', start))}) {
    auto db = MemoryDb::open(with_pw);
    ASSERT_TRUE(db) << db.error().render();
    auto st = (*db)->stats();
    ASSERT_TRUE(st);
    EXPECT_EQ(st->path.find("s3cret"), std::string::npos) << st->path;
    EXPECT_NE(st->path.find("***"), std::string::npos) << st->path;
  }
}

// The tool's statements run under a statement timeout: a memory write waiting on a lock another
// connection holds ends after it, naming the timeout and how to raise it.
TEST_F(Pg, AStatementPastTheStatementTimeoutIsNamed) {
  { ASSERT_TRUE(MemoryDb::open(url())); }
  auto holder = sql_open_postgres(url());
  ASSERT_TRUE(holder) << holder.error().render();
  ASSERT_TRUE((*holder)->exec("BEGIN; SELECT pg_advisory_xact_lock(" + std::to_string(kSqlLockMemory) + ")"));
  ::setenv("UCUTLASS_PG_STATEMENT_TIMEOUT", "1", 1);
  auto db = MemoryDb::open(url());
  ::unsetenv("UCUTLASS_PG_STATEMENT_TIMEOUT");
  ASSERT_TRUE(db) << db.error().render();
  auto r = (*db)->add_experience(exp("s", "f", 1.3));
  ASSERT_TRUE((*holder)->exec("ROLLBACK"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::io);
  EXPECT_NE(r.error().message.find("statement timeout"), std::string::npos) << r.error().render();
  EXPECT_NE(r.error().message.find("(the tool's statement timeout is 1 s)"), std::string::npos) << r.error().render();
  EXPECT_NE(r.error().hint.find("UCUTLASS_PG_STATEMENT_TIMEOUT"), std::string::npos) << r.error().render();
}

// The teammate grants docs/memory.md lists, between its grants markers, with the schema and role
// of the example replaced by `schema` and `role`: the test runs the documentation as written.
std::vector<std::string> documented_grants(const std::string& schema, const std::string& role) {
  std::ifstream in(UCUTLASS_SOURCE_DIR "/docs/memory.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t b = doc.find("<!-- grants:begin -->"), e = doc.find("<!-- grants:end -->");
  if (b == std::string::npos || e == std::string::npos || e < b) return {};
  std::vector<std::string> out;
  std::stringstream block(doc.substr(b, e - b));
  std::string line, stmt;
  while (std::getline(block, line)) {
    if (line.rfind("```", 0) == 0 || line.rfind("<!--", 0) == 0 || line.rfind("--", 0) == 0 || line.empty()) continue;
    stmt += line + "\n";
    if (line.back() == ';') {
      stmt = std::regex_replace(stmt, std::regex(R"(\bucutlass\b)"), schema);
      out.push_back(std::regex_replace(stmt, std::regex(R"(\bteammate\b)"), role));
      stmt.clear();
    }
  }
  return out;
}

// A teammate's role without the grants the tool needs was told "not a ucutlass result store", and
// later to check "the store file". Now each missing grant is named, with the GRANT that gives it;
// and the grants docs/memory.md lists are enough for everything the tool does, tables a later
// migration adds included.
TEST_F(Pg, ATeammateWithoutGrantsIsToldWhichAndTheDocumentedGrantsAreEnough) {
  {
    auto db = MemoryDb::open(url());  // the owner creates the store
    ASSERT_TRUE(db) << db.error().render();
    ASSERT_TRUE((*db)->add_experience(exp("s", "f", 1.3)));
  }
  const std::string role = "ucut_mate_" + schema().substr(std::string("ucut_t_").size());
  if (!admin().exec("CREATE ROLE " + role + " LOGIN"))
    GTEST_SKIP() << "the test server's user may not create roles";
  struct DropRole {
    SqlConn* admin;
    std::string role;
    ~DropRole() { (void)admin->exec("DROP OWNED BY " + role + "; DROP ROLE " + role); }
  } drop_role{&admin(), role};
  const std::string mate = url_as(role);
  const std::string grants = "GRANT USAGE ON SCHEMA " + schema() + " TO " + role +
                             "; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema() + " TO " + role;

  // No USAGE on the schema: the search path skips it, and the store looked missing.
  for (auto access : {StoreAccess::existing, StoreAccess::create}) {
    auto db = MemoryDb::open(mate, {}, access);
    ASSERT_FALSE(db);
    EXPECT_EQ(db.error().code, ErrorCode::io) << db.error().render();
    EXPECT_NE(db.error().message.find("the store is in schema " + schema() + ", on which the role " + role +
                                      " lacks USAGE"),
              std::string::npos)
        << db.error().render();
    EXPECT_NE(db.error().hint.find(grants), std::string::npos) << db.error().render();
  }

  // USAGE alone: reading the schema version needs SELECT.
  ASSERT_TRUE(admin().exec("GRANT USAGE ON SCHEMA " + schema() + " TO " + role));
  {
    auto db = MemoryDb::open(mate, {}, StoreAccess::existing);
    ASSERT_FALSE(db);
    EXPECT_EQ(db.error().code, ErrorCode::io);
    EXPECT_EQ(db.error().message.find("not a ucutlass result store"), std::string::npos) << db.error().render();
    EXPECT_NE(db.error().message.find("permission denied for table ucutlass_schema_version (the role " + role +
                                      " lacks SELECT on table ucutlass_schema_version)"),
              std::string::npos)
        << db.error().render();
    EXPECT_NE(db.error().hint.find(grants), std::string::npos) << db.error().render();
    EXPECT_NE(db.error().hint.find("docs/memory.md"), std::string::npos) << db.error().render();
  }

  // SELECT too: it reads; its first write is refused, naming what the statement needs.
  ASSERT_TRUE(admin().exec("GRANT SELECT ON ALL TABLES IN SCHEMA " + schema() + " TO " + role));
  {
    auto db = MemoryDb::open(mate, {}, StoreAccess::existing);
    ASSERT_TRUE(db) << db.error().render();
    auto st = (*db)->stats();
    ASSERT_TRUE(st) << st.error().render();
    EXPECT_EQ(st->experiences, 1);
    auto w = (*db)->add_experience(exp("s2", "f2", 1.4));
    ASSERT_FALSE(w);
    EXPECT_NE(w.error().message.find("the statement needs INSERT and SELECT on table experiences; the role " + role +
                                     " lacks one of them"),
              std::string::npos)
        << w.error().render();
    EXPECT_NE(w.error().hint.find(grants), std::string::npos) << w.error().render();
    EXPECT_EQ(w.error().hint.find("store file"), std::string::npos) << w.error().render();
  }

  // The grants docs/memory.md lists, run as written there.
  const auto documented = documented_grants(schema(), role);
  ASSERT_GE(documented.size(), 3u) << "docs/memory.md: no grants between <!-- grants:begin --> and <!-- grants:end -->";
  for (const auto& g : documented) ASSERT_TRUE(admin().exec(g)) << g;
  {
    auto s = store_open(mate);
    ASSERT_TRUE(s) << s.error().render();
    auto run = (*s)->begin_run({"eval p.py", "", "", "", ""});
    ASSERT_TRUE(run) << run.error().render();
    auto c = (*s)->upsert_candidate({"p", "sha", "k", "ph", "cfg", "/k.so"});
    ASSERT_TRUE(c) << c.error().render();
    MeasurementRow m;
    m.run_id = *run;
    m.candidate_id = *c;
    m.status = "ok";
    m.record_json = "{}";
    auto id = (*s)->add_measurement(m);
    ASSERT_TRUE(id) << id.error().render();
    ASSERT_TRUE((*s)->end_run(*run));
  }
  {
    auto db = MemoryDb::open(mate, MemoryCaps{2, 2});  // small caps: its writes evict (DELETE)
    ASSERT_TRUE(db) << db.error().render();
    for (int i = 0; i < 3; ++i) {
      auto r = (*db)->add_experience(exp("m" + std::to_string(i), "n" + std::to_string(i), 1.2 + 0.1 * i));
      ASSERT_TRUE(r) << r.error().render();
      auto p = (*db)->add_prior(prior("mate" + std::to_string(i)));
      ASSERT_TRUE(p) << p.error().render();
    }
    auto doc = (*db)->export_json();
    ASSERT_TRUE(doc);
    auto n = (*db)->import_json(*doc, "x.json");
    ASSERT_TRUE(n) << n.error().render();
  }
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM experiences"), 2);
  // A table a later migration adds, created by the owner, is the team's too (default privileges).
  ASSERT_TRUE(admin().exec("CREATE TABLE " + schema() + ".later (id BIGSERIAL PRIMARY KEY, x TEXT)"));
  auto c = sql_open_postgres(mate);
  ASSERT_TRUE(c) << c.error().render();
  auto r = (*c)->query("INSERT INTO later(x) VALUES('y') RETURNING id");
  EXPECT_TRUE(r) << r.error().render();
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
