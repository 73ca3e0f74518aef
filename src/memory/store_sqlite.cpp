// SQLite implementation of Store (store.h).
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <ctime>

#include "memory/sqlite_tx.h"
#include "memory/store.h"
#include "support/fs.h"

namespace ucut::memory {
namespace {

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A prepared statement with RAII finalize and typed binds.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind_real(int i, double v) {
    if (std::isfinite(v)) sqlite3_bind_double(s_, i, v);
    else sqlite3_bind_null(s_, i);
    return *this;
  }
  int step() { return sqlite3_step(s_); }
  sqlite3_stmt* get() { return s_; }
  std::string text(int col) {
    const unsigned char* t = sqlite3_column_text(s_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int col) {
    return sqlite3_column_type(s_, col) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(s_, col);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  int rc_;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path, int version) : db_(db), path_(std::move(path)), version_(version) {}
  ~SqliteStore() override { sqlite3_close(db_); }

  Error db_error(const std::string& what) const {
    return make_error(ErrorCode::io, path_ + ": " + what + ": " + sqlite3_errmsg(db_));
  }

  Result<int64_t> begin_run(const RunInfo& run) override {
    Stmt s(db_, "INSERT INTO runs(started_at, command, tool_commit, gpu, profile, notes) VALUES(?,?,?,?,?,?)");
    if (!s.ok()) return db_error("preparing insert into runs");
    s.bind(1, now_utc()).bind(2, run.command).bind(3, run.tool_commit).bind(4, run.gpu).bind(5, run.profile)
        .bind(6, run.notes);
    if (s.step() != SQLITE_DONE) return db_error("inserting a run");
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
  }

  Status end_run(int64_t run_id) override {
    Stmt s(db_, "UPDATE runs SET ended_at = ? WHERE id = ?");
    if (!s.ok()) return db_error("preparing update of runs");
    s.bind(1, now_utc()).bind(2, run_id);
    if (s.step() != SQLITE_DONE) return db_error("ending a run");
    return ok_status();
  }

  Result<int64_t> upsert_candidate(const CandidateInfo& c) override {
    {
      Stmt s(db_, "SELECT id FROM candidates WHERE problem_sha256=? AND program_hash=? AND so_path=? AND name=?");
      if (!s.ok()) return db_error("preparing candidate lookup");
      s.bind(1, c.problem_sha256).bind(2, c.program_hash).bind(3, c.so_path).bind(4, c.name);
      if (s.step() == SQLITE_ROW) return static_cast<int64_t>(sqlite3_column_int64(s.get(), 0));
    }
    Stmt s(db_, "INSERT INTO candidates(problem, problem_sha256, name, program_hash, config, so_path, created_at) "
                "VALUES(?,?,?,?,?,?,?)");
    if (!s.ok()) return db_error("preparing insert into candidates");
    s.bind(1, c.problem).bind(2, c.problem_sha256).bind(3, c.name).bind(4, c.program_hash).bind(5, c.config)
        .bind(6, c.so_path).bind(7, now_utc());
    if (s.step() != SQLITE_DONE) return db_error("inserting a candidate");
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
  }

  Result<int64_t> add_measurement(const MeasurementRow& m) override {
    Stmt s(db_, "INSERT INTO measurements(run_id, candidate_id, schema_version, status, median_ms, speedup_eager, "
                "frac_sol, degenerate, timing_suspect, counted, created_at, record_json) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!s.ok()) return db_error("preparing insert into measurements");
    s.bind(1, m.run_id).bind(2, m.candidate_id).bind(3, m.schema_version).bind(4, m.status).bind_real(5, m.median_ms)
        .bind_real(6, m.speedup_eager).bind_real(7, m.frac_sol).bind(8, int64_t{m.degenerate})
        .bind(9, int64_t{m.timing_suspect}).bind(10, int64_t{m.counted})
        .bind(11, m.created_at.empty() ? now_utc() : m.created_at).bind(12, m.record_json);
    if (s.step() != SQLITE_DONE) return db_error("inserting a measurement");
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
  }

  Result<std::vector<MeasurementRow>> select(const char* where, const std::string& key, int64_t id) {
    std::string sql = std::string("SELECT id, run_id, candidate_id, schema_version, status, median_ms, speedup_eager, "
                                  "frac_sol, degenerate, timing_suspect, counted, created_at, record_json "
                                  "FROM measurements WHERE ") + where + " ORDER BY id";
    Stmt s(db_, sql.c_str());
    if (!s.ok()) return db_error("preparing a measurement query");
    if (key.empty()) s.bind(1, id);
    else s.bind(1, key);
    std::vector<MeasurementRow> rows;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
      MeasurementRow m;
      m.id = sqlite3_column_int64(s.get(), 0);
      m.run_id = sqlite3_column_int64(s.get(), 1);
      m.candidate_id = sqlite3_column_int64(s.get(), 2);
      m.schema_version = sqlite3_column_int64(s.get(), 3);
      m.status = s.text(4);
      m.median_ms = s.real(5);
      m.speedup_eager = s.real(6);
      m.frac_sol = s.real(7);
      m.degenerate = sqlite3_column_int(s.get(), 8) != 0;
      m.timing_suspect = sqlite3_column_int(s.get(), 9) != 0;
      m.counted = sqlite3_column_int(s.get(), 10) != 0;
      m.created_at = s.text(11);
      m.record_json = s.text(12);
      rows.push_back(std::move(m));
    }
    if (rc != SQLITE_DONE) return db_error("reading measurements");
    return rows;
  }

  Result<std::vector<MeasurementRow>> measurements(int64_t run_id) override { return select("run_id = ?", "", run_id); }

  Result<std::vector<MeasurementRow>> measurements_for_problem(const std::string& sha) override {
    return select("candidate_id IN (SELECT id FROM candidates WHERE problem_sha256 = ?)", sha, 0);
  }

  int schema_version() const override { return version_; }

  Status transaction(const std::function<Status()>& body) override { return sqlite_transaction(db_, path_, body); }

 private:
  sqlite3* db_;
  std::string path_;
  int version_;
};

int user_version(sqlite3* db) {
  Stmt s(db, "PRAGMA user_version");
  return s.ok() && s.step() == SQLITE_ROW ? sqlite3_column_int(s.get(), 0) : -1;
}

}  // namespace

std::string store_default_path() {
  if (const char* v = std::getenv("UCUTLASS_STORE"); v && *v) return v;
  return fs_data_dir() + "/ucutlass.db";
}

Result<std::unique_ptr<Store>> store_open_sqlite(const std::string& path, StoreAccess access) {
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
    return make_error(ErrorCode::unsupported,
                      path + ": the store has schema version " + std::to_string(version) + ", this ucutlass knows up to " +
                          std::to_string(migrations.size()),
                      "use a newer ucutlass, or another store via UCUTLASS_STORE");
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
  return std::unique_ptr<Store>(new SqliteStore(db, path, static_cast<int>(migrations.size())));
}

}  // namespace ucut::memory
