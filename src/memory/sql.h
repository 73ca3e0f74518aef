// The SQL connection seam under the result store (store.h) and the optimization memory
// (experience_store.h): one small interface, SqlConn, with a SQLite implementation (a file, the
// default) and a PostgreSQL one over libpq (a server a team shares, docs/memory.md "PostgreSQL: a
// team's memory"; its connection strings, and how they are shown without passwords, in
// sql_conninfo.cpp). The store and the memory are written once, against this seam, so both backends
// run the same schema (store_schema.cpp) and the same queries. The SQL they use is the part both
// engines accept (INSERT ... RETURNING id, ON CONFLICT upserts, `?` placeholders); the few
// differences go through the dialect:
//   - placeholders: `?` in the text, rewritten to `$1, $2, ...` for PostgreSQL (sql_placeholders);
//   - column types in migrations: `INTEGER PRIMARY KEY` -> BIGSERIAL, INTEGER -> BIGINT, REAL ->
//     DOUBLE PRECISION (sql_ddl), so ids and counts are 64-bit and reals are doubles on both;
//   - the two-argument maximum: MAX(a, b) on SQLite, GREATEST(a, b) on PostgreSQL (sql_greatest);
//   - the schema version: PRAGMA user_version on SQLite, the one-row table ucutlass_schema_version
//     on PostgreSQL (store_sql.cpp);
//   - writers: SQLite serializes them by file lock (BEGIN IMMEDIATE, sqlite_tx.h); PostgreSQL lets
//     them run at once, so a write that reads before it writes takes a transaction-scoped advisory
//     lock first (SqlConn::lock_writers, pg_advisory_xact_lock) and runs alone among those that take
//     the same key.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "memory/store.h"
#include "support/result.h"

struct sqlite3;

namespace ucut::memory {

enum class SqlDialect { sqlite, postgres };

// A parameter or a result cell: NULL, a whole number, a real or text. PostgreSQL cells arrive as
// text and are converted on reading (SqlRow), SQLite cells keep their storage class.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

struct SqlRow {
  std::vector<SqlValue> cells;
  bool is_null(size_t i) const;
  std::string text(size_t i) const;  // "" for NULL
  int64_t integer(size_t i) const;   // 0 for NULL
  double real(size_t i) const;       // NaN for NULL
};

// One open database. Errors of exec and query carry the database's own message alone (ErrorCode::io):
// the caller names the place (where()) and what it was doing, as only it knows that, and keeps the
// error's hint where it has one: PostgreSQL's refusals name the fix there (a missing grant: which
// one, on what, and the GRANT that gives it; a statement past the statement timeout: how to raise
// it). Not thread safe: one connection per thread (each MemoryDb or Store owns one).
class SqlConn {
 public:
  virtual ~SqlConn() = default;
  virtual SqlDialect dialect() const = 0;
  // The database in messages: the SQLite file's path, or the PostgreSQL connection string with its
  // password shown as "***" (sql_redact_conninfo).
  virtual const std::string& where() const = 0;
  // Runs one or more statements without parameters (migrations, DDL in tests).
  virtual Status exec(const std::string& sql) = 0;
  // Runs one statement, `?` placeholders bound to `params` in order; returns its rows (an
  // INSERT ... RETURNING id returns the new id).
  virtual Result<std::vector<SqlRow>> query(const std::string& sql, const std::vector<SqlValue>& params = {}) = 0;
  // Runs `body` as one transaction: commits when it returns ok, rolls back when it returns an error
  // (returned as is) or throws (rethrown). Transactions nest: an inner one is a savepoint.
  virtual Status transaction(const std::function<Status()>& body) = 0;
  // Inside a transaction: waits until no other transaction holding `key` is open, and holds it
  // until this transaction ends (PostgreSQL: pg_advisory_xact_lock(key)). SQLite: nothing to do,
  // its outermost transaction already holds the whole file's write lock (BEGIN IMMEDIATE).
  virtual Status lock_writers(int64_t key) = 0;
};

// The same as transaction() for a body that returns a value.
template <typename T>
Result<T> sql_transaction_value(SqlConn& c, const std::function<Result<T>()>& body) {
  std::optional<T> value;
  auto st = c.transaction([&]() -> Status {
    auto r = body();
    if (!r) return r.error();
    value = std::move(*r);
    return ok_status();
  });
  if (!st) return st.error();
  return std::move(*value);
}

// Wraps an open SQLite handle (the connection owns it from now on and closes it); `path` names it in
// messages.
std::unique_ptr<SqlConn> sql_sqlite_adopt(sqlite3* db, const std::string& path);

// A PostgreSQL connection string (sql_conninfo.cpp): a "postgresql://..." or "postgres://..." URL,
// or libpq's key=value form ("host=db dbname=ucutlass user=ann") whose every keyword libpq knows.
// The store and the memory open such a path on a PostgreSQL server; anything else is a SQLite file.
bool sql_is_postgres(const std::string& path);
// The connection string with every password it holds shown as "***", in each form libpq accepts:
// a URL's user info ("postgresql://ann:***@db/ucut"), its `password=` and `sslpassword=` parameters
// (by their percent-decoded names), and the key=value form's `password` and `sslpassword`, quoted
// or not ("host=db password=*** dbname=ucut"). The one way a connection string is shown: messages,
// `memory stats`, reports. A string that is not one comes back as it is.
std::string sql_redact_conninfo(const std::string& conninfo);
// `message` with every password of `conninfo` (as written, percent-decoded or unescaped) shown as
// "***": for libpq's and the server's messages, which may quote part of what they were given.
std::string sql_redact_message(const std::string& message, const std::string& conninfo);

// The limits the tool puts on a PostgreSQL server (docs/memory.md, "Timeouts"), so that a host that
// accepts a connection and never answers cannot hang a command.
struct PgTimeouts {
  // Seconds to establish a connection: the connection string's own connect_timeout wins, then
  // libpq's PGCONNECT_TIMEOUT, then this default (libpq's own default is to wait for ever).
  int connect_s = 10;
  // The server's statement_timeout for the tool's queries, lock waits included: UCUTLASS_PG_STATEMENT_TIMEOUT
  // seconds; 0 sets none (the server's or the role's own setting applies). Also none when the
  // connection string's `options` set statement_timeout themselves.
  int statement_s = 60;
};
// The timeouts from the environment (UCUTLASS_PG_STATEMENT_TIMEOUT); an error names a bad value.
Result<PgTimeouts> sql_pg_timeouts();

// The grants a teammate's role needs on the schema holding a store, as the SQL its owner runs
// (docs/memory.md, "Grants for a team"): for the hints of permission errors.
std::string sql_pg_grants(const std::string& role, const std::string& schema);

// Connects to the PostgreSQL server `conninfo` names (no schema work: see store_open_postgres_conn).
// Errors (the message shows the connection string through sql_redact_conninfo): a server that does
// not answer within the connect timeout, or cannot be reached (ErrorCode::io, exit 3, naming the
// host and port); a database that does not exist (ErrorCode::not_found, exit 2); refused
// credentials or a missing CONNECT grant (ErrorCode::io, with the fix).
Result<std::unique_ptr<SqlConn>> sql_open_postgres(const std::string& conninfo);
// The same with the timeouts given (tests: a connect timeout shorter than the default's).
Result<std::unique_ptr<SqlConn>> sql_open_postgres(const std::string& conninfo, const PgTimeouts& timeouts);

// Dialect helpers (see the top of this file).
std::string sql_placeholders(const std::string& sql);  // `?` -> `$n`, outside quoted text
std::string sql_ddl(SqlDialect d, const std::string& ddl);
const char* sql_greatest(SqlDialect d);

// Connects to the PostgreSQL store at `url` and migrates it (store_sql.cpp): the connection the
// store and the memory run on. StoreAccess::existing refuses a database without a store; a role
// without the grants a teammate needs (docs/memory.md, "Grants for a team") is told which.
Result<std::unique_ptr<SqlConn>> store_open_postgres_conn(const std::string& url, StoreAccess access);

// The advisory-lock keys (PostgreSQL): one for migrations, one for memory writes. Fixed, so every
// ucutlass on every host that shares a database agrees on them.
inline constexpr int64_t kSqlLockMigrate = 0x7563757401;  // "ucut" 01
inline constexpr int64_t kSqlLockMemory = 0x7563757402;   // "ucut" 02

}  // namespace ucut::memory
