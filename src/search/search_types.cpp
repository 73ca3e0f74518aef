#include "search/search_types.h"

#include <fmt/format.h>

namespace ucut::search {

nlohmann::json candidate_to_json(const Candidate& c) {
  return {{"name", c.name},     {"hash", c.hash},   {"program", c.program},
          {"config", c.config}, {"rung", c.rung},   {"predicted_s", c.predicted_s},
          {"origin", c.origin}};
}

Candidate candidate_from_json(const nlohmann::json& j) {
  Candidate c;
  c.name = j.value("name", "");
  c.hash = j.value("hash", "");
  c.program = j.value("program", "");
  c.config = j.value("config", nlohmann::json::object());
  c.rung = j.value("rung", 0);
  c.predicted_s = j.value("predicted_s", 0.0);
  c.origin = j.value("origin", "");
  return c;
}

nlohmann::json stage_times_to_json(const StageTimes& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : t) out.push_back({{"stage", s.stage}, {"kind", s.kind}, {"config", s.config}, {"ms", s.ms}});
  return out;
}

StageTimes stage_times_from_json(const nlohmann::json& j) {
  StageTimes out;
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("ms") || !e["ms"].is_number()) continue;
    auto text = [&](const char* k) { return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : ""; };
    out.push_back({text("stage"), text("kind"), text("config"), e["ms"].get<double>()});
  }
  return out;
}

nlohmann::json attempt_to_json(const Attempt& a) {
  nlohmann::json j = {{"index", a.index},
          {"candidate", candidate_to_json(a.cand)},
          {"status", run_status_name(a.status)},
          {"message", a.message},
          {"time_s", a.time_s},
          {"speedup", a.speedup},
          {"frac_sol", a.frac_sol},
          {"compile_s", a.compile_s},
          {"gpu_s", a.gpu_s},
          {"gpu_phases", a.gpu_phases},
          {"at_s", a.at_s},
          {"max_abs_err", a.max_abs_err},
          {"max_rel_err", a.max_rel_err},
          {"reference_limited", a.reference_limited},
          {"passed_by_float64", a.passed_by_float64},
          {"rounding_mismatch", a.rounding_mismatch},
          {"improved", a.improved},
          {"so", a.so_path},
          {"cu", a.cu_path}};
  if (!a.stage_ms.empty()) j["stage_ms"] = stage_times_to_json(a.stage_ms);
  return j;
}

Attempt attempt_from_json(const nlohmann::json& j) {
  Attempt a;
  a.index = j.value("index", 0);
  if (j.contains("candidate") && j["candidate"].is_object()) a.cand = candidate_from_json(j["candidate"]);
  a.status = run_status_parse(j.value("status", "")).value_or(RunStatus::launch_error);
  a.message = j.value("message", "");
  a.time_s = j.value("time_s", 0.0);
  a.speedup = j.value("speedup", 0.0);
  a.frac_sol = j.value("frac_sol", 0.0);
  a.compile_s = j.value("compile_s", 0.0);
  a.gpu_s = j.value("gpu_s", 0.0);
  if (auto p = j.find("gpu_phases"); p != j.end() && p->is_object())
    for (const auto& [phase, secs] : p->items())
      if (secs.is_number()) a.gpu_phases[phase] = secs.get<double>();
  a.at_s = j.value("at_s", 0.0);
  a.max_abs_err = j.value("max_abs_err", 0.0);
  a.max_rel_err = j.value("max_rel_err", 0.0);
  a.reference_limited = j.value("reference_limited", false);
  a.passed_by_float64 = j.value("passed_by_float64", false);
  a.rounding_mismatch = j.value("rounding_mismatch", false);
  a.improved = j.value("improved", false);
  a.so_path = j.value("so", "");
  a.cu_path = j.value("cu", "");
  if (auto st = j.find("stage_ms"); st != j.end()) a.stage_ms = stage_times_from_json(*st);
  return a;
}

std::string config_brief(const nlohmann::json& config) {
  std::string out;
  if (!config.is_object()) return out;
  for (auto it = config.begin(); it != config.end(); ++it) {
    if (!out.empty()) out += ' ';
    out += it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return out;
}

}  // namespace ucut::search
