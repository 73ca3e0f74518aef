#include "memory/export_check.h"

#include <climits>
#include <cmath>
#include <vector>

namespace ucut::memory {

namespace {

enum class Kind {
  text,      // any string
  name,      // a non-empty string
  object,    // a JSON object (a configuration)
  number,    // a finite number
  count,     // a whole number >= 0 that fits an int
  id,        // a whole number (export ids; ignored on import)
  key,       // {"class", "bucket", "gpu", "policy"}
};

struct Field {
  const char* name;
  Kind kind;
  bool required;
};

// The fields 'memory export' writes (experience_to_json / prior_to_json). Required are the ones
// a record means nothing without: its key, its configurations and its identity.
const std::vector<Field> kExperienceFields = {
    {"id", Kind::id, false},         {"key", Kind::key, true},           {"problem", Kind::text, false},
    {"slow_hash", Kind::name, true}, {"fast_hash", Kind::name, true},    {"slow_config", Kind::object, true},
    {"fast_config", Kind::object, true}, {"slow_s", Kind::number, false}, {"fast_s", Kind::number, false},
    {"gain", Kind::number, false},   {"diff", Kind::text, false},        {"lesson", Kind::text, false},
    {"seen", Kind::count, false},    {"uses", Kind::count, false},       {"helps", Kind::count, false},
    {"created_at", Kind::text, false}};
const std::vector<Field> kPriorFields = {
    {"id", Kind::id, false},           {"key", Kind::key, true},          {"problem", Kind::text, false},
    {"config", Kind::object, true},    {"config_name", Kind::text, false}, {"program_hash", Kind::text, false},
    {"speedup", Kind::number, false},  {"frac_sol", Kind::number, false}, {"wins", Kind::count, false},
    {"uses", Kind::count, false},      {"helps", Kind::count, false},     {"created_at", Kind::text, false}};
const std::vector<Field> kKeyFields = {
    {"class", Kind::name, true}, {"bucket", Kind::text, true}, {"gpu", Kind::name, true}, {"policy", Kind::name, true}};

const char* expected(Kind k) {
  switch (k) {
    case Kind::text: return "a string";
    case Kind::name: return "a non-empty string";
    case Kind::object: case Kind::key: return "an object";
    case Kind::number: return "a number";
    case Kind::count: return "a whole number >= 0";
    case Kind::id: return "a whole number";
  }
  return "?";
}

bool fits(const nlohmann::json& v, Kind k) {
  switch (k) {
    case Kind::text: return v.is_string();
    case Kind::name: return v.is_string() && !v.get_ref<const std::string&>().empty();
    case Kind::object: case Kind::key: return v.is_object();
    case Kind::number: return v.is_number() && std::isfinite(v.get<double>());
    case Kind::count:
      if (v.is_number_unsigned()) return v.get<uint64_t>() <= INT_MAX;
      return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT_MAX;
    case Kind::id: return v.is_number_integer();
  }
  return false;
}

// The value as it stands in the file, shortened for a message.
std::string shown(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

Error bad(const std::string& source, const std::string& path, const std::string& what) {
  return make_error(ErrorCode::invalid_input, source + ": " + path + ": " + what,
                    "fix that element (or export the file again with 'ucutlass memory export FILE'); nothing "
                    "was imported");
}

Status check_fields(const nlohmann::json& v, const std::vector<Field>& fields, const std::string& path,
                    const std::string& source) {
  if (!v.is_object()) return bad(source, path, "expected an object, found " + shown(v));
  for (const Field& f : fields) {
    const std::string at = path + "." + f.name;
    auto it = v.find(f.name);
    if (it == v.end()) {
      if (f.required) return bad(source, at, std::string("missing (") + expected(f.kind) + ")");
      continue;
    }
    if (!fits(*it, f.kind)) return bad(source, at, std::string("expected ") + expected(f.kind) + ", found " + shown(*it));
    if (f.kind == Kind::key)
      if (auto s = check_fields(*it, kKeyFields, at, source); !s) return s;
  }
  return ok_status();
}

Status check_array(const nlohmann::json& doc, const char* name, const std::vector<Field>& fields,
                   const std::string& source) {
  const std::string path = std::string("$.") + name;
  auto it = doc.find(name);
  if (it == doc.end()) return bad(source, path, "missing (an array; [] for none)");
  if (!it->is_array()) return bad(source, path, "expected an array, found " + shown(*it));
  for (size_t i = 0; i < it->size(); ++i)
    if (auto s = check_fields((*it)[i], fields, path + "[" + std::to_string(i) + "]", source); !s) return s;
  return ok_status();
}

}  // namespace

Status memory_check_export(const nlohmann::json& doc, const std::string& source) {
  if (!doc.is_object() || !doc.contains("schema"))
    return make_error(ErrorCode::invalid_input,
                      source + ": not a ucutlass memory export (expected \"schema\": \"ucutlass.memory/1\")",
                      "create one with 'ucutlass memory export FILE'");
  if (doc["schema"] != "ucutlass.memory/1")
    return bad(source, "$.schema", "expected \"ucutlass.memory/1\", found " + shown(doc["schema"]));
  if (auto s = check_array(doc, "experiences", kExperienceFields, source); !s) return s;
  return check_array(doc, "priors", kPriorFields, source);
}

}  // namespace ucut::memory
