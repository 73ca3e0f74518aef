#include "memory/sqlite_tx.h"

#include <sqlite3.h>

namespace ucut::memory {

namespace {
Status exec(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) == SQLITE_OK) return ok_status();
  std::string msg = err ? err : sqlite3_errmsg(db);
  sqlite3_free(err);
  return make_error(ErrorCode::io, path + ": " + sql + " failed: " + msg,
                    "nothing of this change was written; check the store file and the disk");
}
}  // namespace

Status sqlite_transaction(sqlite3* db, const std::string& path, const std::function<Status()>& body) {
  // The outermost level takes the write lock up front (IMMEDIATE): a second ucutlass process
  // writing the same store waits for it (busy timeout) instead of failing half-way through.
  const bool outer = sqlite3_get_autocommit(db) != 0;
  if (auto s = exec(db, path, outer ? "BEGIN IMMEDIATE" : "SAVEPOINT ucut_tx"); !s) return s;
  const char* rollback = outer ? "ROLLBACK" : "ROLLBACK TO ucut_tx; RELEASE ucut_tx";
  Status result = ok_status();
  try {
    result = body();
  } catch (...) {
    (void)exec(db, path, rollback);
    throw;
  }
  if (!result) {
    (void)exec(db, path, rollback);
    return result;
  }
  if (auto s = exec(db, path, outer ? "COMMIT" : "RELEASE ucut_tx"); !s) {
    (void)exec(db, path, rollback);
    return s;
  }
  return ok_status();
}

}  // namespace ucut::memory
