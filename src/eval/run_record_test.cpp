// RunRecord printers and parser (all generated from run_record.def), and the SOL guard.
#include <gtest/gtest.h>

#include "eval/evaluate.h"
#include "eval/run_record.h"

namespace ucut::eval {
namespace {

RunRecord sample() {
  RunRecord r;
  r.problem = "gemm_bias";
  r.candidate = "prog, \"v2\"";
  r.status = "ok";
  r.median_ms = 1.25;
  r.eager_ms = 2.5;
  r.t_sol_ms = 1.0;
  r.sol_source = "calibrated";
  r.samples_ms = {1.2, 1.3};
  r.correctness = {{"passed", true}};
  return r;
}

TEST(RunRecord, JsonRoundTripKeepsEveryField) {
  RunRecord r = sample();
  record_finish(r, ProblemContext{});
  auto j = run_record_to_json(r);
  EXPECT_EQ(j.size(), run_record_fields().size());
  EXPECT_TRUE(j["compile_ms"].is_null());  // unknown reals are null, never NaN text
  auto back = run_record_from_json(j);
  ASSERT_TRUE(back) << back.error().render();
  EXPECT_EQ(run_record_to_json(*back), j);
  EXPECT_DOUBLE_EQ(back->speedup_eager, 2.0);
  EXPECT_DOUBLE_EQ(back->frac_sol, 0.8);
}

TEST(RunRecord, ParserRejectsUnknownFieldsBadStatusAndOtherSchemas) {
  auto j = run_record_to_json(sample());
  j["median_m"] = 1;
  auto r = run_record_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().render().find("did you mean 'median_ms'"), std::string::npos);
  j = run_record_to_json(sample());
  j["status"] = "okay";
  EXPECT_FALSE(run_record_from_json(j));
  j = run_record_to_json(sample());
  j["schema_version"] = 2;
  r = run_record_from_json(j);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("schema_version 2"), std::string::npos);
  j = run_record_to_json(sample());
  j["median_ms"] = "fast";
  EXPECT_FALSE(run_record_from_json(j));
}

TEST(RunRecord, CsvHasOneColumnPerFieldAndQuotes) {
  std::string csv = run_records_csv({sample()});
  auto nl = csv.find('\n');
  std::string head = csv.substr(0, nl);
  size_t commas = std::count(head.begin(), head.end(), ',');
  EXPECT_EQ(commas + 1, run_record_fields().size());
  EXPECT_EQ(head.rfind("schema_version,problem,", 0), 0u);
  EXPECT_NE(csv.find("\"prog, \"\"v2\"\"\""), std::string::npos);
  EXPECT_NE(csv.find("\"[1.2,1.3]\""), std::string::npos);
}

TEST(RunRecord, MarkdownTableHasLabelledColumnsFlagsAndErrors) {
  RunRecord a = sample();
  record_finish(a, ProblemContext{});
  RunRecord b = sample();
  b.candidate = "bad";
  b.status = "mismatch";
  b.error = "trial 0: 3 elements outside";
  b.degenerate = true;
  b.degenerate_reason = "max|ref| tiny";
  record_finish(b, ProblemContext{});
  std::string md = run_records_markdown({a, b});
  EXPECT_NE(md.find("| problem | candidate | status | max abs err | median ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("80.0%"), std::string::npos) << md;
  EXPECT_NE(md.find("degenerate, not counted"), std::string::npos) << md;
  EXPECT_NE(md.find("- bad (mismatch): trial 0: 3 elements outside"), std::string::npos) << md;
}

TEST(SolGuard, FasterThanLightIsRejectedAndNeverCounted) {
  RunRecord r = sample();
  r.median_ms = 0.89;  // < 0.9 × 1.0
  record_finish(r, ProblemContext{});
  EXPECT_EQ(r.status, "rejected");
  EXPECT_NE(r.error.find("faster than speed of light"), std::string::npos);
  EXPECT_NE(r.error.find("calibrated"), std::string::npos);
  EXPECT_FALSE(r.counted);
  EXPECT_TRUE(std::isnan(r.speedup_eager));
  EXPECT_DOUBLE_EQ(r.frac_sol, 1.0 / 0.89);
  RunRecord edge = sample();
  edge.median_ms = 0.9;  // exactly at the guard: allowed
  record_finish(edge, ProblemContext{});
  EXPECT_EQ(edge.status, "ok");
  EXPECT_TRUE(edge.counted);
}

TEST(SolGuard, NoBoundNoGuardAndFailuresKeepTheirStatus) {
  RunRecord r = sample();
  r.t_sol_ms = std::nan("");
  r.median_ms = 1e-6;
  record_finish(r, ProblemContext{});
  EXPECT_EQ(r.status, "ok");
  EXPECT_TRUE(std::isnan(r.frac_sol));
  RunRecord m = sample();
  m.status = "mismatch";
  m.median_ms = 0.01;
  record_finish(m, ProblemContext{});
  EXPECT_EQ(m.status, "mismatch");
  EXPECT_TRUE(std::isnan(m.speedup_eager));
}

TEST(Counted, DegenerateAndSuspectTimingAreNotCounted) {
  RunRecord r = sample();
  r.degenerate = true;
  record_finish(r, ProblemContext{});
  EXPECT_EQ(r.status, "ok");
  EXPECT_FALSE(r.counted);
  RunRecord s = sample();
  s.timing_suspect = true;
  record_finish(s, ProblemContext{});
  EXPECT_FALSE(s.counted);
}

TEST(RecordApply, MapsWorkerResult) {
  RunRecord r;
  record_apply_result(r, {{"verdict", "weird"}, {"error", "x"}});
  EXPECT_EQ(r.status, "launch_error");
  EXPECT_NE(r.error.find("unknown verdict 'weird'"), std::string::npos);
  RunRecord m;
  record_apply_result(m, {{"verdict", "mismatch"},
                          {"phase", "correctness"},
                          {"correctness", {{"max_abs", nullptr}, {"worst_index", {2, 3}}, {"degenerate", true}}}});
  EXPECT_EQ(m.status, "mismatch");
  EXPECT_TRUE(std::isnan(m.max_abs_err));
  EXPECT_EQ(m.worst_index, "[2,3]");
  EXPECT_TRUE(m.degenerate);
  EXPECT_FALSE(m.reference_limited);
  RunRecord l;
  record_apply_result(l, {{"verdict", "mismatch"}, {"correctness", {{"reference_limited", true}}}});
  EXPECT_TRUE(l.reference_limited);
  EXPECT_NE(run_record_to_json(l).dump().find("\"reference_limited\":true"), std::string::npos);
  // A write outside its outputs is the worker's own verdict, never counted.
  RunRecord g;
  record_apply_result(g, {{"verdict", "rejected"}, {"phase", "correctness"},
                          {"error", "rejected: wrote outside its outputs: 4 byte(s) ..."}});
  record_finish(g, ProblemContext{});
  EXPECT_EQ(g.status, "rejected");
  EXPECT_EQ(g.error.rfind("rejected: wrote outside its outputs", 0), 0u);
  EXPECT_FALSE(g.counted);
  // The evaluation's seconds: the total, and each phase apart (docs/results-schema.md eval_phases).
  RunRecord t;
  record_apply_result(t, {{"verdict", "ok"},
                          {"seconds", {{"total", 2.5}, {"checks", 1.25}, {"candidate", 0.5}, {"note", "x"}}}});
  EXPECT_EQ(t.eval_seconds, 2.5);
  EXPECT_EQ(t.eval_phases, (nlohmann::json{{"checks", 1.25}, {"candidate", 0.5}}));
  EXPECT_EQ(run_record_from_json(run_record_to_json(t))->eval_phases, t.eval_phases);
  EXPECT_TRUE(t.stage_ms.is_null());
  // The per-stage profile, as the worker names it (docs/results-schema.md stage_ms).
  const nlohmann::json prof = nlohmann::json::array({{{"stage", "t0"}, {"kind", "gemm"}, {"config", "g"}, {"ms", 0.75}}});
  record_apply_result(t, {{"verdict", "ok"}, {"stage_ms", prof}});
  EXPECT_EQ(t.stage_ms, prof);
  EXPECT_EQ(run_record_from_json(run_record_to_json(t))->stage_ms, prof);
}

}  // namespace
}  // namespace ucut::eval
