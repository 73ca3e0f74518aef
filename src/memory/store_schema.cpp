// The store's migrations (see store.h). Append only: never edit a migration that has shipped;
// add a new one that alters what it made. Each runs in one transaction with the version bump.
#include "memory/store.h"

namespace ucut::memory {

const std::vector<std::string>& store_migrations() {
  static const std::vector<std::string> migrations = {
      // 0 -> 1: runs, candidates, measurements.
      R"sql(
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  started_at  TEXT NOT NULL,
  ended_at    TEXT,
  command     TEXT NOT NULL,
  tool_commit TEXT NOT NULL DEFAULT '',
  gpu         TEXT NOT NULL DEFAULT '',
  profile     TEXT NOT NULL DEFAULT '',
  notes       TEXT NOT NULL DEFAULT ''
);
CREATE TABLE candidates (
  id             INTEGER PRIMARY KEY,
  problem        TEXT NOT NULL,
  problem_sha256 TEXT NOT NULL,
  name           TEXT NOT NULL,
  program_hash   TEXT NOT NULL DEFAULT '',
  config         TEXT NOT NULL DEFAULT '',
  so_path        TEXT NOT NULL DEFAULT '',
  created_at     TEXT NOT NULL,
  UNIQUE (problem_sha256, program_hash, so_path, name)
);
CREATE TABLE measurements (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  candidate_id   INTEGER NOT NULL REFERENCES candidates(id),
  schema_version INTEGER NOT NULL,
  status         TEXT NOT NULL,
  median_ms      REAL,
  speedup_eager  REAL,
  frac_sol       REAL,
  degenerate     INTEGER NOT NULL,
  timing_suspect INTEGER NOT NULL,
  counted        INTEGER NOT NULL,
  created_at     TEXT NOT NULL,
  record_json    TEXT NOT NULL
);
CREATE INDEX measurements_by_run ON measurements(run_id);
CREATE INDEX measurements_by_candidate ON measurements(candidate_id);
CREATE INDEX candidates_by_problem ON candidates(problem_sha256);
)sql",
      // 1 -> 2: the optimization memory (src/memory/experience_store.h, docs/memory.md):
      // experiences (slow -> fast pairs with diff, gain and lesson) and priors (winning
      // configurations per problem class, shape bucket, GPU and policy); memory_meta counts
      // curation (evictions), so nothing leaves the memory unaccounted.
      R"sql(
CREATE TABLE experiences (
  id          INTEGER PRIMARY KEY,
  dedupe      TEXT NOT NULL UNIQUE,
  class       TEXT NOT NULL,
  bucket      TEXT NOT NULL,
  gpu         TEXT NOT NULL,
  policy      TEXT NOT NULL,
  problem     TEXT NOT NULL DEFAULT '',
  slow_hash   TEXT NOT NULL,
  fast_hash   TEXT NOT NULL,
  slow_config TEXT NOT NULL,
  fast_config TEXT NOT NULL,
  slow_s      REAL NOT NULL,
  fast_s      REAL NOT NULL,
  gain        REAL NOT NULL,
  diff        TEXT NOT NULL,
  lesson      TEXT NOT NULL,
  seen        INTEGER NOT NULL DEFAULT 1,
  uses        INTEGER NOT NULL DEFAULT 0,
  helps       INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL
);
CREATE INDEX experiences_by_key ON experiences(class, gpu, policy, bucket);
CREATE TABLE priors (
  id           INTEGER PRIMARY KEY,
  dedupe       TEXT NOT NULL UNIQUE,
  class        TEXT NOT NULL,
  bucket       TEXT NOT NULL,
  gpu          TEXT NOT NULL,
  policy       TEXT NOT NULL,
  problem      TEXT NOT NULL DEFAULT '',
  config       TEXT NOT NULL,
  config_name  TEXT NOT NULL,
  program_hash TEXT NOT NULL DEFAULT '',
  speedup      REAL NOT NULL,
  frac_sol     REAL NOT NULL,
  wins         INTEGER NOT NULL DEFAULT 1,
  uses         INTEGER NOT NULL DEFAULT 0,
  helps        INTEGER NOT NULL DEFAULT 0,
  created_at   TEXT NOT NULL
);
CREATE INDEX priors_by_key ON priors(class, gpu, policy, bucket);
CREATE TABLE memory_meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
)sql",
  };
  return migrations;
}

}  // namespace ucut::memory
