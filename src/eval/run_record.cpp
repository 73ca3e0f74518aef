#include "eval/run_record.h"

#include <fmt/format.h>

#include <set>

#include "support/diagnostics.h"

namespace ucut::eval {
namespace {


nlohmann::json real_json(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string real_text(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(); }

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string md_cell(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s.empty() ? "–" : s;
}

template <typename T>
Status read_field(const nlohmann::json& j, const char* name, T& into) {
  try {
    into = j.get<T>();
  } catch (const nlohmann::json::exception&) {
    return make_error(ErrorCode::invalid_input, fmt::format("RunRecord field '{}' has the wrong type: {}", name, j.dump()));
  }
  return ok_status();
}

Status read_field(const nlohmann::json& j, const char* name, double& into) {
  if (j.is_null()) {
    into = std::nan("");
    return ok_status();
  }
  if (!j.is_number())
    return make_error(ErrorCode::invalid_input, fmt::format("RunRecord field '{}' must be a number or null", name));
  into = j.get<double>();
  return ok_status();
}

Status read_field(const nlohmann::json& j, const char*, nlohmann::json& into) {
  into = j;
  return ok_status();
}

std::string md_text(const std::string& v) { return v; }
std::string md_text(int64_t v) { return std::to_string(v); }
std::string md_text(bool v) { return v ? "yes" : "no"; }
std::string md_text(double v) { return real_text(v); }
std::string md_text(const nlohmann::json& v) { return v.is_null() ? std::string() : v.dump(); }
std::string percent(double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", 100 * v) : std::string(); }

}  // namespace

const std::vector<RunFieldInfo>& run_record_fields() {
  static const std::vector<RunFieldInfo> fields = {
#define RUN_FIELD(kind, name, md, desc) {#kind, #name, md, desc},
#include "eval/run_record.def"
#undef RUN_FIELD
  };
  return fields;
}

nlohmann::json run_record_to_json(const RunRecord& r) {
  nlohmann::json j = nlohmann::json::object();
#define JSON_STR(v) nlohmann::json(v)
#define JSON_INT(v) nlohmann::json(v)
#define JSON_BOOL(v) nlohmann::json(v)
#define JSON_JSON(v) (v)
#define JSON_REAL(v) real_json(v)
#define RUN_FIELD(kind, name, md, desc) j[#name] = JSON_##kind(r.name);
#include "eval/run_record.def"
#undef RUN_FIELD
#undef JSON_STR
#undef JSON_INT
#undef JSON_BOOL
#undef JSON_JSON
#undef JSON_REAL
  return j;
}

Result<RunRecord> run_record_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return make_error(ErrorCode::invalid_input, "a RunRecord must be a JSON object");
  std::set<std::string> known;
  for (const auto& f : run_record_fields()) known.insert(f.name);
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (!known.count(k)) {
      std::vector<std::string> names(known.begin(), known.end());
      std::string guess = diag_closest(k, names);
      return make_error(ErrorCode::invalid_input, "unknown RunRecord field '" + k + "'",
                        guess.empty() ? "the record may come from a newer ucutlass" : "did you mean '" + guess + "'?");
    }
  }
  RunRecord r;
#define RUN_FIELD(kind, name, md, desc)                          \
  if (j.contains(#name)) {                                       \
    if (auto st = read_field(j.at(#name), #name, r.name); !st) \
      return st.error();                                         \
  }
#include "eval/run_record.def"
#undef RUN_FIELD
  if (r.schema_version != kRunRecordSchema)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("RunRecord schema_version {} (this ucutlass reads {})", r.schema_version, kRunRecordSchema),
                      "re-run the evaluation with this version, or use the ucutlass that wrote it");
  if (auto st = run_status_from_name(r.status); !st) return st.error();
  return r;
}

std::string run_records_csv(const std::vector<RunRecord>& records) {
  std::string out;
  bool first = true;
  for (const auto& f : run_record_fields()) {
    out += (first ? "" : ",") + std::string(f.name);
    first = false;
  }
  out += "\n";
  for (const auto& r : records) {
    std::vector<std::string> cells;
#define CSV_STR(v) (v)
#define CSV_INT(v) std::to_string(v)
#define CSV_BOOL(v) std::string((v) ? "true" : "false")
#define CSV_REAL(v) real_text(v)
#define CSV_JSON(v) ((v).is_null() ? std::string() : (v).dump())
#define RUN_FIELD(kind, name, md, desc) cells.push_back(csv_quote(CSV_##kind(r.name)));
#include "eval/run_record.def"
#undef RUN_FIELD
#undef CSV_STR
#undef CSV_INT
#undef CSV_BOOL
#undef CSV_REAL
#undef CSV_JSON
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += "\n";
  }
  return out;
}

std::string run_records_json(const std::vector<RunRecord>& records) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : records) arr.push_back(run_record_to_json(r));
  return arr.dump(2) + "\n";
}

std::string run_records_markdown(const std::vector<RunRecord>& records) {
  std::string head = "|", rule = "|";
#define RUN_FIELD(kind, name, md, desc)       \
  if (std::string(md).size()) {               \
    head += std::string(" ") + md + " |";     \
    rule += "---|";                           \
  }
#include "eval/run_record.def"
#undef RUN_FIELD
  std::string out = head + " flags |\n" + rule + "---|\n";
  std::string notes;
  for (const auto& r : records) {
    std::string row = "|";
#define RUN_FIELD(kind, name, md, desc)                                                          \
  if (std::string(md).size())                                                                    \
    row += " " + md_cell(std::string(#name) == "frac_sol" ? percent(r.frac_sol) : md_text(r.name)) + " |";
#include "eval/run_record.def"
#undef RUN_FIELD
    std::vector<std::string> flags;
    if (r.degenerate) flags.push_back("degenerate");
    if (r.timing_suspect) flags.push_back("timing_suspect");
    if (!r.counted) flags.push_back("not counted");
    std::string f;
    for (const auto& s : flags) f += (f.empty() ? "" : ", ") + s;
    out += row + " " + md_cell(f) + " |\n";
    if (!r.error.empty()) notes += "- " + r.candidate + " (" + r.status + "): " + r.error + "\n";
    if (r.degenerate && !r.degenerate_reason.empty())
      notes += "- " + r.candidate + ": degenerate problem: " + r.degenerate_reason + "\n";
    if (r.timing_suspect && !r.timing_note.empty()) notes += "- " + r.candidate + ": timing_suspect: " + r.timing_note + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

}  // namespace ucut::eval
