// RunRecord: the one result schema of an evaluation (docs/results-schema.md), generated from the
// field list in run_record.def so the struct, the JSON/CSV/markdown printers, the parser and the
// store can never disagree about a field.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/result.h"
#include "support/run_status.h"

namespace ucut::eval {

inline constexpr int kRunRecordSchema = 1;
// 2: outputs overwritten before every timed repetition, guard zones (a write outside the outputs is
// rejected), the re-check of the timed outputs, and the reference-class float64 pass.
inline constexpr const char* kContractVersion = "ucutlass-eval/2";

// A record's `status` is the name of a RunStatus (support/run_status.h).

struct RunRecord {
#define UCUT_STR std::string
#define UCUT_INT int64_t
#define UCUT_REAL double
#define UCUT_BOOL bool
#define UCUT_JSON nlohmann::json
#define RUN_FIELD(kind, name, md, desc) UCUT_##kind name = run_record_default_##kind();
  static std::string run_record_default_STR() { return {}; }
  static int64_t run_record_default_INT() { return 0; }
  static double run_record_default_REAL() { return std::nan(""); }
  static bool run_record_default_BOOL() { return false; }
  static nlohmann::json run_record_default_JSON() { return nullptr; }
#include "eval/run_record.def"
#undef RUN_FIELD
#undef UCUT_STR
#undef UCUT_INT
#undef UCUT_REAL
#undef UCUT_BOOL
#undef UCUT_JSON
  RunRecord() { schema_version = kRunRecordSchema; status = "ok"; }
};

// One field's metadata, in .def order.
struct RunFieldInfo {
  const char* kind;
  const char* name;
  const char* md_label;
  const char* description;
};
const std::vector<RunFieldInfo>& run_record_fields();

nlohmann::json run_record_to_json(const RunRecord& r);
// Reads a record; unknown fields are an error naming them (a newer schema), missing ones keep
// their defaults. Rejects a schema_version other than kRunRecordSchema.
Result<RunRecord> run_record_from_json(const nlohmann::json& j);

// CSV: a header line of every field name, then one row per record (RFC 4180 quoting; JSON fields
// as compact JSON text; unknown reals empty).
std::string run_records_csv(const std::vector<RunRecord>& records);
// JSON: an array of records.
std::string run_records_json(const std::vector<RunRecord>& records);
// Markdown: one table with a column per field that has an md_label, plus a "flags" column
// (degenerate, timing_suspect, not counted) and, below the table, each record's error text.
std::string run_records_markdown(const std::vector<RunRecord>& records);

}  // namespace ucut::eval
