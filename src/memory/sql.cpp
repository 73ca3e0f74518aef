// The SQL seam's common parts and its SQLite implementation (sql.h).
#include "memory/sql.h"

#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <regex>

#include "memory/sqlite_tx.h"

namespace ucut::memory {

bool SqlRow::is_null(size_t i) const { return i >= cells.size() || std::holds_alternative<std::monostate>(cells[i]); }

std::string SqlRow::text(size_t i) const {
  if (i >= cells.size()) return "";
  const auto& c = cells[i];
  if (auto s = std::get_if<std::string>(&c)) return *s;
  if (auto n = std::get_if<int64_t>(&c)) return std::to_string(*n);
  if (auto d = std::get_if<double>(&c)) return std::to_string(*d);
  return "";
}

int64_t SqlRow::integer(size_t i) const {
  if (i >= cells.size()) return 0;
  const auto& c = cells[i];
  if (auto n = std::get_if<int64_t>(&c)) return *n;
  if (auto d = std::get_if<double>(&c)) return static_cast<int64_t>(*d);
  if (auto s = std::get_if<std::string>(&c)) return std::strtoll(s->c_str(), nullptr, 10);
  return 0;
}

double SqlRow::real(size_t i) const {
  if (i >= cells.size()) return std::nan("");
  const auto& c = cells[i];
  if (auto d = std::get_if<double>(&c)) return *d;
  if (auto n = std::get_if<int64_t>(&c)) return static_cast<double>(*n);
  // PostgreSQL writes doubles exactly (shortest round-trip form) and "NaN" / "Infinity", which
  // strtod reads back.
  if (auto s = std::get_if<std::string>(&c)) return std::strtod(s->c_str(), nullptr);
  return std::nan("");
}

std::string sql_placeholders(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;  // inside '...' or "...": a '?' there is text, not a parameter
  for (char ch : sql) {
    if (quote) {
      if (ch == quote) quote = 0;
      out += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      out += ch;
    } else if (ch == '?') {
      out += '$' + std::to_string(++n);
    } else {
      out += ch;
    }
  }
  return out;
}

std::string sql_ddl(SqlDialect d, const std::string& ddl) {
  if (d == SqlDialect::sqlite) return ddl;
  // Order matters: the primary key first, then the remaining INTEGERs.
  static const std::regex pk(R"(\bINTEGER PRIMARY KEY\b)");
  static const std::regex integer(R"(\bINTEGER\b)");
  static const std::regex real(R"(\bREAL\b)");
  std::string s = std::regex_replace(ddl, pk, "BIGSERIAL PRIMARY KEY");
  s = std::regex_replace(s, integer, "BIGINT");
  return std::regex_replace(s, real, "DOUBLE PRECISION");
}

const char* sql_greatest(SqlDialect d) { return d == SqlDialect::sqlite ? "MAX" : "GREATEST"; }

namespace {

class SqliteConn final : public SqlConn {
 public:
  SqliteConn(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteConn() override { sqlite3_close(db_); }

  SqlDialect dialect() const override { return SqlDialect::sqlite; }
  const std::string& where() const override { return path_; }

  Status exec(const std::string& sql) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return ok_status();
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return make_error(ErrorCode::io, msg);
  }

  Result<std::vector<SqlRow>> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      sqlite3_finalize(s);
      return make_error(ErrorCode::io, sqlite3_errmsg(db_));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i + 1);
      const auto& p = params[i];
      if (auto t = std::get_if<std::string>(&p))
        sqlite3_bind_text(s, at, t->c_str(), static_cast<int>(t->size()), SQLITE_TRANSIENT);
      else if (auto n = std::get_if<int64_t>(&p))
        sqlite3_bind_int64(s, at, *n);
      else if (auto d = std::get_if<double>(&p))
        sqlite3_bind_double(s, at, *d);
      else
        sqlite3_bind_null(s, at);
    }
    std::vector<SqlRow> rows;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      SqlRow row;
      const int n = sqlite3_column_count(s);
      row.cells.reserve(n);
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(s, c)) {
          case SQLITE_INTEGER: row.cells.emplace_back(static_cast<int64_t>(sqlite3_column_int64(s, c))); break;
          case SQLITE_FLOAT: row.cells.emplace_back(sqlite3_column_double(s, c)); break;
          case SQLITE_NULL: row.cells.emplace_back(std::monostate{}); break;
          default: {
            const unsigned char* t = sqlite3_column_text(s, c);
            row.cells.emplace_back(std::string(t ? reinterpret_cast<const char*>(t) : "",
                                               static_cast<size_t>(sqlite3_column_bytes(s, c))));
          }
        }
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) {
      std::string msg = sqlite3_errmsg(db_);
      sqlite3_finalize(s);
      return make_error(ErrorCode::io, msg);
    }
    sqlite3_finalize(s);
    return rows;
  }

  Status transaction(const std::function<Status()>& body) override { return sqlite_transaction(db_, path_, body); }

  Status lock_writers(int64_t) override { return ok_status(); }

 private:
  sqlite3* db_;
  std::string path_;
};

}  // namespace

std::unique_ptr<SqlConn> sql_sqlite_adopt(sqlite3* db, const std::string& path) {
  return std::make_unique<SqliteConn>(db, path);
}

}  // namespace ucut::memory
