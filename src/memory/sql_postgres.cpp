// The PostgreSQL implementation of the SQL seam (sql.h), over libpq. Parameters go as text with
// their types named (int8, float8; text and NULL left for the server to infer from the column they
// meet), results come back as text and SqlRow converts them. Transactions run at READ COMMITTED
// (named in BEGIN): every statement sees what committed before it started, so a write that first
// takes the memory's advisory lock (lock_writers) sees every earlier writer's rows.
#include <libpq-fe.h>

#include <cmath>
#include <cstdio>

#include "memory/sql.h"

namespace ucut::memory {
namespace {

// Type OIDs from PostgreSQL's catalog (pg_type.dat); stable across versions, and not in libpq's headers.
constexpr Oid kInt8Oid = 20;
constexpr Oid kFloat8Oid = 701;

std::string trimmed(const char* s) {
  std::string m = s ? s : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

std::string double_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class PgConn final : public SqlConn {
 public:
  PgConn(PGconn* c, std::string where) : c_(c), where_(std::move(where)) {}
  ~PgConn() override { PQfinish(c_); }

  SqlDialect dialect() const override { return SqlDialect::postgres; }
  const std::string& where() const override { return where_; }

  Status exec(const std::string& sql) override {
    PGresult* r = PQexec(c_, sql.c_str());
    Status st = check(r);
    PQclear(r);
    return st;
  }

  Result<std::vector<SqlRow>> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    const std::string text = sql_placeholders(sql);
    std::vector<std::string> values(params.size());
    std::vector<const char*> ptrs(params.size(), nullptr);
    std::vector<Oid> types(params.size(), 0);
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      if (auto t = std::get_if<std::string>(&p)) {
        values[i] = *t;
      } else if (auto n = std::get_if<int64_t>(&p)) {
        values[i] = std::to_string(*n);
        types[i] = kInt8Oid;
      } else if (auto d = std::get_if<double>(&p)) {
        values[i] = double_text(*d);
        types[i] = kFloat8Oid;
      } else {
        continue;  // NULL: a null pointer
      }
      ptrs[i] = values[i].c_str();
    }
    PGresult* r = PQexecParams(c_, text.c_str(), static_cast<int>(params.size()), types.data(), ptrs.data(), nullptr,
                               nullptr, 0);
    if (auto st = check(r); !st) {
      PQclear(r);
      return st.error();
    }
    std::vector<SqlRow> rows;
    const int nrows = PQntuples(r), ncols = PQnfields(r);
    rows.reserve(nrows);
    for (int i = 0; i < nrows; ++i) {
      SqlRow row;
      row.cells.reserve(ncols);
      for (int j = 0; j < ncols; ++j) {
        if (PQgetisnull(r, i, j)) row.cells.emplace_back(std::monostate{});
        else row.cells.emplace_back(std::string(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j))));
      }
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }

  Status transaction(const std::function<Status()>& body) override {
    const bool outer = PQtransactionStatus(c_) == PQTRANS_IDLE;
    // READ COMMITTED named, not left to the server's default_transaction_isolation: under
    // REPEATABLE READ the snapshot would be taken as the advisory lock is requested, before the
    // wait, and a merge would miss the row the writer it waited for just committed.
    if (auto s = step(outer ? "BEGIN ISOLATION LEVEL READ COMMITTED" : "SAVEPOINT ucut_tx"); !s) return s;
    const char* rollback = outer ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT ucut_tx; RELEASE SAVEPOINT ucut_tx";
    Status result = ok_status();
    try {
      result = body();
    } catch (...) {
      (void)step(rollback);
      throw;
    }
    // A statement that failed aborts the whole transaction on PostgreSQL, and COMMIT would then
    // quietly roll back: a body that went on after an error it ignored must not report success.
    if (result && PQtransactionStatus(c_) == PQTRANS_INERROR)
      result = make_error(ErrorCode::io, where_ + ": a statement of this transaction failed",
                          "nothing of this change was written; see the error before this one");
    if (!result) {
      (void)step(rollback);
      return result;
    }
    if (auto s = step(outer ? "COMMIT" : "RELEASE SAVEPOINT ucut_tx"); !s) {
      (void)step(rollback);
      return s;
    }
    return ok_status();
  }

  Status lock_writers(int64_t key) override {
    auto r = query("SELECT pg_advisory_xact_lock(?)", {key});
    if (!r) return r.error();
    return ok_status();
  }

 private:
  Status check(PGresult* r) {
    const auto st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) return ok_status();
    std::string msg = trimmed(r ? PQresultErrorMessage(r) : PQerrorMessage(c_));
    if (msg.empty()) msg = trimmed(PQerrorMessage(c_));
    return make_error(ErrorCode::io, msg);
  }

  // A transaction step, with the message the store's other transactions give (sqlite_tx.cpp).
  Status step(const char* sql) {
    if (auto s = exec(sql); !s)
      return make_error(ErrorCode::io, where_ + ": " + sql + " failed: " + s.error().message,
                        "nothing of this change was written; check the PostgreSQL server and the connection");
    return ok_status();
  }

  PGconn* c_;
  std::string where_;
};

// libpq prints server notices (e.g. "relation already exists, skipping") to stderr by default;
// they are not errors and ucutlass's output stays its own.
void quiet_notices(void*, const char*) {}

}  // namespace

Result<std::unique_ptr<SqlConn>> sql_open_postgres(const std::string& url) {
  const std::string where = sql_redact_url(url);
  PGconn* c = PQconnectdb(url.c_str());
  if (!c || PQstatus(c) != CONNECTION_OK) {
    std::string msg = c ? trimmed(PQerrorMessage(c)) : "out of memory";
    PQfinish(c);
    return make_error(ErrorCode::io, where + ": cannot connect to the PostgreSQL store: " + msg,
                      "check the URL (postgresql://user@host:port/database), that the server runs and the "
                      "database exists, and the password (PGPASSWORD or ~/.pgpass)");
  }
  PQsetNoticeProcessor(c, quiet_notices, nullptr);
  return std::unique_ptr<SqlConn>(new PgConn(c, where));
}

}  // namespace ucut::memory
