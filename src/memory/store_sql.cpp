// The Store (store.h) over the SQL seam (sql.h): one implementation for SQLite and PostgreSQL, and
// the opening and migration of each. SQLite keeps its schema version in PRAGMA user_version,
// PostgreSQL in the one-row table ucutlass_schema_version; both apply store_migrations() in order,
// each migration in one transaction with its version bump, and refuse a newer schema.
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <ctime>

#include "memory/sql.h"
#include "memory/store.h"
#include "support/clock.h"
#include "support/fs.h"

namespace ucut::memory {
namespace {

// A real as stored: NaN and infinities as NULL.
SqlValue real_or_null(double v) {
  if (std::isfinite(v)) return v;
  return std::monostate{};
}

class SqlStore final : public Store {
 public:
  SqlStore(std::unique_ptr<SqlConn> c, int version) : c_(std::move(c)), version_(version) {}

  // The database's own hint wins (a missing grant, the statement timeout: sql.h).
  Error db_error(const std::string& what, const Error& e) const {
    return make_error(ErrorCode::io, c_->where() + ": " + what + ": " + e.message,
                      !e.hint.empty() ? e.hint
                      : c_->dialect() == SqlDialect::sqlite
                          ? "check the store file (its folder writable, the disk not full) and retry"
                          : "check the PostgreSQL server and retry");
  }

  // The id an INSERT ... RETURNING id gave back.
  Result<int64_t> inserted(const char* what, Result<std::vector<SqlRow>> r) const {
    if (!r) return db_error(what, r.error());
    if (r->empty()) return db_error(what, make_error(ErrorCode::io, "no id came back"));
    return r->front().integer(0);
  }

  Result<int64_t> begin_run(const RunInfo& run) override {
    return inserted("inserting a run",
                    c_->query("INSERT INTO runs(started_at, command, tool_commit, gpu, profile, notes) "
                              "VALUES(?,?,?,?,?,?) RETURNING id",
                              {utc_timestamp(), run.command, run.tool_commit, run.gpu, run.profile, run.notes}));
  }

  Status end_run(int64_t run_id) override {
    if (auto r = c_->query("UPDATE runs SET ended_at = ? WHERE id = ?", {utc_timestamp(), run_id}); !r)
      return db_error("ending a run", r.error());
    return ok_status();
  }

  Result<int64_t> upsert_candidate(const CandidateInfo& c) override {
    const std::vector<SqlValue> key = {c.problem_sha256, c.program_hash, c.so_path, c.name};
    auto find = [&]() -> Result<std::vector<SqlRow>> {
      return c_->query("SELECT id FROM candidates WHERE problem_sha256=? AND program_hash=? AND so_path=? AND name=?",
                       key);
    };
    auto found = find();
    if (!found) return db_error("looking up a candidate", found.error());
    if (!found->empty()) return found->front().integer(0);
    // Another writer (a second process, or a host sharing a PostgreSQL store) may add the same
    // candidate between the lookup and the insert: the insert then does nothing and the lookup
    // again finds that writer's row.
    auto ins = c_->query("INSERT INTO candidates(problem, problem_sha256, name, program_hash, config, so_path, "
                         "created_at) VALUES(?,?,?,?,?,?,?) "
                         "ON CONFLICT(problem_sha256, program_hash, so_path, name) DO NOTHING RETURNING id",
                         {c.problem, c.problem_sha256, c.name, c.program_hash, c.config, c.so_path, utc_timestamp()});
    if (!ins) return db_error("inserting a candidate", ins.error());
    if (!ins->empty()) return ins->front().integer(0);
    found = find();
    if (!found) return db_error("looking up a candidate", found.error());
    if (found->empty()) return db_error("inserting a candidate", make_error(ErrorCode::io, "the row vanished"));
    return found->front().integer(0);
  }

  Result<int64_t> add_measurement(const MeasurementRow& m) override {
    return inserted(
        "inserting a measurement",
        c_->query("INSERT INTO measurements(run_id, candidate_id, schema_version, status, median_ms, speedup_eager, "
                  "frac_sol, degenerate, timing_suspect, counted, created_at, record_json) "
                  "VALUES(?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
                  {m.run_id, m.candidate_id, m.schema_version, m.status, real_or_null(m.median_ms),
                   real_or_null(m.speedup_eager), real_or_null(m.frac_sol), int64_t{m.degenerate},
                   int64_t{m.timing_suspect}, int64_t{m.counted}, m.created_at.empty() ? utc_timestamp() : m.created_at,
                   m.record_json}));
  }

  Result<std::vector<MeasurementRow>> select(const char* where, SqlValue arg) {
    std::string sql = std::string("SELECT id, run_id, candidate_id, schema_version, status, median_ms, speedup_eager, "
                                  "frac_sol, degenerate, timing_suspect, counted, created_at, record_json "
                                  "FROM measurements WHERE ") + where + " ORDER BY id";
    auto r = c_->query(sql, {std::move(arg)});
    if (!r) return db_error("reading measurements", r.error());
    std::vector<MeasurementRow> rows;
    rows.reserve(r->size());
    for (const auto& row : *r) {
      MeasurementRow m;
      m.id = row.integer(0);
      m.run_id = row.integer(1);
      m.candidate_id = row.integer(2);
      m.schema_version = row.integer(3);
      m.status = row.text(4);
      m.median_ms = row.real(5);
      m.speedup_eager = row.real(6);
      m.frac_sol = row.real(7);
      m.degenerate = row.integer(8) != 0;
      m.timing_suspect = row.integer(9) != 0;
      m.counted = row.integer(10) != 0;
      m.created_at = row.text(11);
      m.record_json = row.text(12);
      rows.push_back(std::move(m));
    }
    return rows;
  }

  Result<std::vector<MeasurementRow>> measurements(int64_t run_id) override { return select("run_id = ?", run_id); }

  Result<std::vector<MeasurementRow>> measurements_for_problem(const std::string& sha) override {
    return select("candidate_id IN (SELECT id FROM candidates WHERE problem_sha256 = ?)", sha);
  }

  int schema_version() const override { return version_; }

  Status transaction(const std::function<Status()>& body) override { return c_->transaction(body); }

 private:
  std::unique_ptr<SqlConn> c_;
  int version_;
};

int user_version(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  int v = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return v;
}

Error newer_schema(const std::string& where, int64_t version) {
  return make_error(ErrorCode::unsupported,
                    where + ": the store has schema version " + std::to_string(version) +
                        ", this ucutlass knows up to " + std::to_string(store_migrations().size()),
                    "use a newer ucutlass, or another store via UCUTLASS_STORE");
}

// The schema holding a store that the search path names but the role cannot use (no USAGE, so the
// search path skips it), and the role: {schema, role}, or empty when there is none. The catalog is
// readable by every role, so this finds what an unqualified name could not.
Result<std::vector<std::string>> pg_store_without_usage(SqlConn& c) {
  auto r = c.query(
      "SELECT n.nspname, current_user FROM pg_catalog.pg_class t "
      "JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace "
      "WHERE t.relname = 'ucutlass_schema_version' AND NOT has_schema_privilege(n.oid, 'USAGE') "
      "AND n.nspname = ANY(string_to_array(replace(replace(replace(current_setting('search_path'), '\"', ''), "
      "'$user', current_user), ' ', ''), ',')) ORDER BY n.nspname LIMIT 1");
  if (!r)
    return make_error(ErrorCode::io, c.where() + ": reading the catalog: " + r.error().message,
                      !r.error().hint.empty() ? r.error().hint : "check the PostgreSQL server and retry");
  if (r->empty()) return std::vector<std::string>{};
  return std::vector<std::string>{r->front().text(0), r->front().text(1)};
}

// One step of migrating a PostgreSQL store, as one transaction under the migration lock (so two
// hosts opening a new database at once migrate it once): creates the version table when missing,
// reads the version, and applies the next migration when one is due. Returns the version it leaves.
Result<int> pg_migrate_step(SqlConn& c, StoreAccess access) {
  const int latest = store_latest_version();
  return sql_transaction_value<int>(c, [&]() -> Result<int> {
    if (auto s = c.lock_writers(kSqlLockMigrate); !s)
      return make_error(ErrorCode::io, c.where() + ": waiting for the migration lock: " + s.error().message,
                        "check the PostgreSQL server and retry");
    auto has = c.query("SELECT CASE WHEN to_regclass('ucutlass_schema_version') IS NULL THEN 0 ELSE 1 END");
    if (!has || has->empty())
      return make_error(ErrorCode::io,
                        c.where() + ": reading the schema version: " + (has ? "no row" : has.error().message),
                        has || has.error().hint.empty() ? "check that the user may read the database (or point --db elsewhere)"
                                                        : has.error().hint);
    if (has->front().integer(0) == 0) {
      // Not found may mean not visible: the search path skips a schema the role lacks USAGE on,
      // so a teammate without that grant would be told there is no store (or try to create one).
      if (auto hidden = pg_store_without_usage(c); !hidden) return hidden.error();
      else if (!hidden->empty())
        return make_error(ErrorCode::io,
                          c.where() + ": the store is in schema " + (*hidden)[0] + ", on which the role " +
                              (*hidden)[1] + " lacks USAGE",
                          "ask the store's owner to grant a teammate's role what the tool uses: " +
                              sql_pg_grants((*hidden)[1], (*hidden)[0]) + " (docs/memory.md, \"Grants for a team\")");
      if (access == StoreAccess::existing)
        return make_error(ErrorCode::not_found, c.where() + ": no result store there",
                          "a store is created by the first optimize, bench, eval or 'memory import'; pass --db "
                          "(or set UCUTLASS_STORE) to read another");
      // One row, enforced: the key can only be TRUE.
      if (auto s = c.exec("CREATE TABLE ucutlass_schema_version (\n"
                          "  one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),\n"
                          "  version BIGINT NOT NULL\n);\n"
                          "INSERT INTO ucutlass_schema_version(one, version) VALUES(TRUE, 0);");
          !s)
        return make_error(ErrorCode::io, c.where() + ": creating the schema version table: " + s.error().message,
                          !s.error().hint.empty() ? s.error().hint
                                                  : "the user needs CREATE on the database's schema (GRANT CREATE ON SCHEMA ...)");
    }
    auto v = c.query("SELECT version FROM ucutlass_schema_version");
    if (!v)
      return make_error(ErrorCode::io, c.where() + ": reading the store's schema version: " + v.error().message,
                        !v.error().hint.empty() ? v.error().hint : "check the PostgreSQL server and retry");
    if (v->size() != 1)
      return make_error(ErrorCode::io,
                        c.where() + ": not a ucutlass result store (" + std::to_string(v->size()) +
                            " rows in ucutlass_schema_version)",
                        "point --db (or UCUTLASS_STORE) at another database");
    const int64_t version = v->front().integer(0);
    if (version > latest) return newer_schema(c.where(), version);
    if (version == latest) return static_cast<int>(version);
    const std::string left = "the database was left at version " + std::to_string(version) + "; nothing was lost";
    if (auto s = c.exec(sql_ddl(SqlDialect::postgres, store_migrations()[version])); !s)
      return make_error(ErrorCode::io,
                        c.where() + ": migrating the store to version " + std::to_string(version + 1) +
                            " failed: " + s.error().message,
                        s.error().hint.empty() ? left : left + "; " + s.error().hint);
    if (auto r = c.query("UPDATE ucutlass_schema_version SET version = ?", {version + 1}); !r)
      return make_error(ErrorCode::io, c.where() + ": recording schema version " + std::to_string(version + 1) +
                                           ": " + r.error().message,
                        r.error().hint.empty() ? left : left + "; " + r.error().hint);
    return static_cast<int>(version + 1);
  });
}

}  // namespace

std::string store_default_path() {
  if (const char* v = std::getenv("UCUTLASS_STORE"); v && *v) return v;
  return fs_data_dir() + "/ucutlass.db";
}

Result<std::unique_ptr<SqlConn>> store_open_postgres_conn(const std::string& url, StoreAccess access) {
  auto c = sql_open_postgres(url);
  if (!c) return c.error();
  const int latest = store_latest_version();
  for (;;) {
    auto v = pg_migrate_step(**c, access);
    if (!v) return v.error();
    if (*v == latest) break;
  }
  return std::move(*c);
}

Result<std::unique_ptr<Store>> store_open(const std::string& path, StoreAccess access) {
  if (!sql_is_postgres(path)) return store_open_sqlite(path, access);
  auto c = store_open_postgres_conn(path, access);
  if (!c) return c.error();
  return std::unique_ptr<Store>(new SqlStore(std::move(*c), store_latest_version()));
}

Result<std::unique_ptr<Store>> store_open_sqlite(const std::string& path, StoreAccess access) {
  // Callers from before store_open (eval's --db) get the PostgreSQL store for a connection string
  // rather than a folder named "postgresql:" (or a file named "host=db password=...").
  if (sql_is_postgres(path)) return store_open(path, access);
  const bool create = access == StoreAccess::create;
  if (!create && path != ":memory:" && !fs_exists(path))
    return make_error(ErrorCode::not_found, path + ": no result store there",
                      "a store is created by the first optimize, bench, eval or 'memory import'; pass --db "
                      "(or set UCUTLASS_STORE) to read another");
  if (create && path != ":memory:") {
    auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0)
      if (auto st = fs_mkdirs(path.substr(0, slash)); !st) return st.error();
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), nullptr) !=
      SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(ErrorCode::io, path + ": cannot open the result store: " + msg,
                      "check the folder is writable, or set UCUTLASS_STORE to another path");
  }
  sqlite3_busy_timeout(db, 10000);  // several ucutlass processes may share one store
  sqlite3_exec(db, "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;", nullptr, nullptr, nullptr);
  int version = user_version(db);
  if (version < 0) {
    std::string msg = sqlite3_errmsg(db);
    sqlite3_close(db);
    return make_error(ErrorCode::io, path + ": not a ucutlass result store (" + msg + ")",
                      "point UCUTLASS_STORE at a new file");
  }
  const auto& migrations = store_migrations();
  if (version > static_cast<int>(migrations.size())) {
    sqlite3_close(db);
    return newer_schema(path, version);
  }
  for (int v = version; v < static_cast<int>(migrations.size()); ++v) {
    std::string sql = "BEGIN IMMEDIATE;\n" + migrations[v] + "\nPRAGMA user_version = " + std::to_string(v + 1) +
                      ";\nCOMMIT;";
    char* err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
      sqlite3_close(db);
      return make_error(ErrorCode::io, path + ": migrating the store to version " + std::to_string(v + 1) +
                                           " failed: " + msg, "the database was left at version " +
                                           std::to_string(v) + "; nothing was lost");
    }
  }
  return std::unique_ptr<Store>(
      new SqlStore(sql_sqlite_adopt(db, path), static_cast<int>(migrations.size())));
}

}  // namespace ucut::memory
