// The result store: every run, candidate and measurement μCUTLASS makes, in a SQLite file or, for
// a team sharing one, a PostgreSQL database (a postgresql:// URL; the SQL seam in sql.h carries the
// differences, docs/memory.md "PostgreSQL: a team's memory"). The schema is versioned (SQLite:
// PRAGMA user_version; PostgreSQL: the one-row table ucutlass_schema_version) and grows only
// through the ordered migration list in store_schema.cpp, so an old database is upgraded in place
// and never loses data; a database from a newer ucutlass is refused rather than guessed at. The
// store is append-only: there is no delete, and a measurement keeps its whole record as JSON beside
// the indexed columns.
//
// The optimizer extends this store (experiences, priors) by appending migrations.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/result.h"

struct sqlite3;

namespace ucut::memory {

struct RunInfo {
  std::string command;       // e.g. "eval problem.py prog.ucut"
  std::string tool_commit;
  std::string gpu;
  std::string profile;
  std::string notes;
};

struct CandidateInfo {
  std::string problem;
  std::string problem_sha256;
  std::string name;
  std::string program_hash;
  std::string config;
  std::string so_path;
};

// The indexed columns of one measurement; record_json is the full RunRecord.
struct MeasurementRow {
  int64_t id = 0;
  int64_t run_id = 0;
  int64_t candidate_id = 0;
  int64_t schema_version = 1;
  std::string status;
  double median_ms = 0;      // NaN stored as NULL
  double speedup_eager = 0;
  double frac_sol = 0;
  bool degenerate = false;
  bool timing_suspect = false;
  bool counted = false;
  std::string created_at;
  std::string record_json;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual Result<int64_t> begin_run(const RunInfo& run) = 0;
  virtual Status end_run(int64_t run_id) = 0;
  // Returns the existing id when the same (problem_sha256, program_hash, so_path) was seen.
  virtual Result<int64_t> upsert_candidate(const CandidateInfo& c) = 0;
  virtual Result<int64_t> add_measurement(const MeasurementRow& m) = 0;
  virtual Result<std::vector<MeasurementRow>> measurements(int64_t run_id) = 0;
  virtual Result<std::vector<MeasurementRow>> measurements_for_problem(const std::string& problem_sha256) = 0;
  virtual int schema_version() const = 0;
  // Runs `body` as one transaction: every write it makes is stored, or none (memory/sqlite_tx.h;
  // on PostgreSQL the same through SqlConn::transaction).
  virtual Status transaction(const std::function<Status()>& body) = 0;
};

// How a command opens the store: commands that write create it (and its folder) when missing;
// commands that only read never create one, and a missing store is an error naming the path.
enum class StoreAccess { create, existing };

// Opens (creating as `access` allows, and migrating as needed) the SQLite store at `path`;
// ":memory:" for tests. A PostgreSQL connection string goes to store_open, so older callers accept
// one too.
Result<std::unique_ptr<Store>> store_open_sqlite(const std::string& path,
                                                 StoreAccess access = StoreAccess::create);
// Opens the store `path` names: a PostgreSQL connection string (a "postgresql://..." or
// "postgres://..." URL, or libpq's key=value form: sql_is_postgres) is a PostgreSQL database (which
// must exist, else ErrorCode::not_found; StoreAccess::create creates the tables in it, ::existing
// refuses a database without them), anything else a SQLite file (store_open_sqlite).
Result<std::unique_ptr<Store>> store_open(const std::string& path, StoreAccess access = StoreAccess::create);
// $UCUTLASS_STORE, else <fs_data_dir()>/ucutlass.db.
std::string store_default_path();

// The migrations, in order: migration i brings the schema from version i to i+1.
const std::vector<std::string>& store_migrations();
inline int store_latest_version() { return static_cast<int>(store_migrations().size()); }

}  // namespace ucut::memory
