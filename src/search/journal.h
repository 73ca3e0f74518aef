// The attempt journal: what makes a search resumable after Ctrl-C or a kill. Every attempt is
// appended as one JSON line and flushed to disk (fsync) before the search moves on, so nothing
// measured is ever lost; a line torn by a kill mid-write is ignored on load. On --resume the
// session replays the journal: a proposed candidate whose hash is already recorded takes its
// recorded result instead of being compiled and measured again. The SQLite store holds the same
// records for querying; the journal is the crash-safe path that needs nothing but a file.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/search_types.h"
#include "support/result.h"

namespace ucut::search {

struct JournalContents {
  std::optional<Baselines> baselines;
  std::vector<Attempt> attempts;  // in recorded order
  int torn_lines = 0;             // lines that did not parse (a kill mid-write), skipped
};

class Journal {
 public:
  virtual ~Journal() = default;
  virtual Status record_baselines(const Baselines& b) = 0;
  virtual Status record(const Attempt& a) = 0;
  virtual Result<JournalContents> load() = 0;
};

// Appends to a JSONL file (created with its folder on first write).
class FileJournal final : public Journal {
 public:
  explicit FileJournal(std::string path) : path_(std::move(path)) {}
  Status record_baselines(const Baselines& b) override;
  Status record(const Attempt& a) override;
  Result<JournalContents> load() override;
  const std::string& path() const { return path_; }

 private:
  Status append(const std::string& line);
  std::string path_;
};

// For tests: the same lines kept in memory, plus a way to tear the last one as a kill would.
class MemoryJournal final : public Journal {
 public:
  Status record_baselines(const Baselines& b) override;
  Status record(const Attempt& a) override;
  Result<JournalContents> load() override;
  std::string text;
};

// Parses journal text (shared by both journals).
JournalContents journal_parse(const std::string& text);

}  // namespace ucut::search
