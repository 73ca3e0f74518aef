#include "eval/record_store.h"

namespace ucut::eval {

Result<int64_t> record_save(memory::Store& store, int64_t run_id, const RunRecord& r) {
  memory::CandidateInfo c{r.problem, r.problem_sha256, r.candidate, r.program_hash, r.config, r.so_path};
  memory::MeasurementRow m;
  m.run_id = run_id;
  m.schema_version = r.schema_version;
  m.status = r.status;
  m.median_ms = r.median_ms;
  m.speedup_eager = r.speedup_eager;
  m.frac_sol = r.frac_sol;
  m.degenerate = r.degenerate;
  m.timing_suspect = r.timing_suspect;
  m.counted = r.counted;
  m.created_at = r.timestamp;
  m.record_json = run_record_to_json(r).dump();
  // The candidate row and its measurement are stored together or not at all.
  int64_t id = 0;
  auto st = store.transaction([&]() -> Status {
    auto cid = store.upsert_candidate(c);
    if (!cid) return cid.error();
    m.candidate_id = *cid;
    auto mid = store.add_measurement(m);
    if (!mid) return mid.error();
    id = *mid;
    return ok_status();
  });
  if (!st) return st.error();
  return id;
}

Result<std::vector<RunRecord>> record_load_run(memory::Store& store, int64_t run_id) {
  auto rows = store.measurements(run_id);
  if (!rows) return rows.error();
  std::vector<RunRecord> out;
  for (const auto& m : *rows) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(m.record_json);
    } catch (const nlohmann::json::exception& e) {
      return make_error(ErrorCode::io, "measurement " + std::to_string(m.id) + ": stored record is not JSON: " + e.what());
    }
    auto r = run_record_from_json(j);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace ucut::eval
