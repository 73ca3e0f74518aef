// The optimization memory on disk: experiences and priors in the result store (tables added by
// migration 1 -> 2 in store_schema.cpp; `ucutlass memory` reads them), in its SQLite file or its
// PostgreSQL database (a postgresql:// URL, through the SQL seam in sql.h). Curation rules
// (docs/memory.md): a record is deduplicated by canonical program hash (a repeated pair or winning
// configuration merges into the existing row: seen / wins grow, the best gain is kept); the memory
// is capped, and when over the cap the least useful records are evicted, by usefulness
// (experience_usefulness / prior_usefulness), counted in memory_meta and reported; nothing is ever
// deleted any other way. Import merges through the same dedup path. Every write is one transaction
// (SqlConn::transaction): a record with its curation, a whole import.
//
// Concurrent writers (several processes, or several hosts sharing a PostgreSQL database): merging
// and eviction read before they write, so two writers must not interleave them. On SQLite the
// transaction's file lock (BEGIN IMMEDIATE) already runs writers one at a time. On PostgreSQL every
// memory write transaction first takes the transaction-scoped advisory lock kSqlLockMemory
// (pg_advisory_xact_lock, released at commit or rollback), so memory writes run one at a time
// across all hosts while reads never wait; a writer's later statements (READ COMMITTED) see every
// row the writers before it committed. Single-statement updates (mark_*_used) need no lock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "memory/experience.h"
#include "memory/sql.h"
#include "memory/store.h"
#include "support/result.h"

namespace ucut::memory {

struct MemoryQuery {
  std::string cls, gpu, policy;  // exact matches; empty matches anything
  std::string bucket;            // preferred bucket: nearer buckets come first
  int max_distance = 1000;       // drop records whose bucket is farther than this
  int limit = 20;
};

struct MemoryCaps {
  int experiences = 5000;
  int priors = 2000;
};

struct MemoryStats {
  std::string path;
  int experiences = 0, priors = 0;
  int classes = 0;
  int64_t evicted_experiences = 0, evicted_priors = 0;
  int64_t merged = 0;            // duplicates folded into existing records
  double best_gain = 0;
};

struct ImportCounts {
  int experiences = 0, priors = 0;  // records read
  int evicted = 0;
};

class MemoryDb {
 public:
  // Opens the store at `path` (creating it as `access` allows, and migrating it, through
  // store_open_sqlite), or the PostgreSQL database a postgresql:// URL names (store_open).
  static Result<std::unique_ptr<MemoryDb>> open(const std::string& path, MemoryCaps caps = {},
                                                StoreAccess access = StoreAccess::create);
  ~MemoryDb();
  MemoryDb(const MemoryDb&) = delete;
  MemoryDb& operator=(const MemoryDb&) = delete;

  // Adds or merges; returns the record's id. Then curates to the caps.
  Result<int64_t> add_experience(const Experience& e);
  Result<int64_t> add_prior(const Prior& p);

  // Best first: nearest bucket, then most useful, then newest.
  Result<std::vector<Experience>> experiences(const MemoryQuery& q);
  Result<std::vector<Prior>> priors(const MemoryQuery& q);
  Result<std::optional<Experience>> experience(int64_t id);
  Result<std::optional<Prior>> prior(int64_t id);

  // Usage feedback from a search: the record seeded it (uses + 1) and, when `helped`, produced
  // the search's best (helps + 1).
  Status mark_prior_used(int64_t id, bool helped);
  Status mark_experience_used(int64_t id, bool helped);

  // Evicts the least useful records beyond the caps; returns how many went.
  Result<int> curate();
  Result<MemoryStats> stats();

  // {"schema": "ucutlass.memory/1", "experiences": [...], "priors": [...]}
  Result<nlohmann::json> export_json();
  // Checks the whole document first (memory_check_export), then merges it in one transaction:
  // on any error nothing is imported.
  Result<ImportCounts> import_json(const nlohmann::json& doc, const std::string& source);

  // Runs `body` as one transaction (SqlConn::transaction, holding the memory's write lock): its
  // writes are kept together or not at all.
  Status transaction(const std::function<Status()>& body);

 private:
  MemoryDb(std::unique_ptr<SqlConn> c, std::string path, MemoryCaps caps);
  // A memory write transaction: `body` runs holding the memory's write lock (see the top).
  Status write_transaction(const std::function<Status()>& body);
  Status exec(const std::string& sql, const std::vector<SqlValue>& params);
  // The writes themselves, without a transaction or curation of their own (the public calls add
  // those around them).
  Result<int64_t> insert_experience(const Experience& e);
  Result<int64_t> insert_prior(const Prior& p);
  Result<int> evict_over_caps();
  // One record's insert and the curation it may need, as one transaction.
  Result<int64_t> add_and_curate(const std::function<Result<int64_t>()>& insert);
  Status bump_meta(const std::string& key, int64_t by);
  int64_t meta(const std::string& key);
  Result<std::vector<Experience>> load_experiences(const std::string& where, const std::vector<std::string>& args);
  Result<std::vector<Prior>> load_priors(const std::string& where, const std::vector<std::string>& args);

  std::unique_ptr<SqlConn> c_;
  std::string path_;
  MemoryCaps caps_;
};

}  // namespace ucut::memory
