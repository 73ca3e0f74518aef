// The plain data the search passes around: a Candidate (one concrete program to try), the
// outcome of compiling and evaluating it, and the Attempt record that joins them. Every attempt
// becomes a record, whatever happened to it ("failures are results", STYLE.md), so the same
// types feed the strategy, the stop rules, the journal that makes a run resumable, the store,
// and every report.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsl/program.h"
#include "support/run_status.h"

namespace ucut::search {

// One concrete program: a lowered problem with every `auto` knob decided. The one candidate type
// from the space's ranking (app/adapters_space.h) through build, evaluation, the journal and the
// store's records; the space's per-stage configurations are space::StageConfig, the library the
// evaluator runs is eval::BuiltLibrary.
struct Candidate {
  std::string name;          // canonical configuration name: identity in reports, filters, memory
  std::string hash;          // canonical program hash (dsl_hash): identity for dedup and resume
  std::string program;       // canonical DSL text (what best.ucut holds)
  // The checked program itself when the space made it (its configurations applied to the checked
  // lowered program): the build generates code from it without parsing `program` again. Null for
  // a candidate that exists only as text (a journal's, a memory record's, an LLM's reply): the
  // build parses and checks the text. Not journaled: `program` and `hash` are its identity.
  std::shared_ptr<const dsl::Program> ast;
  nlohmann::json config = nlohmann::json::object();  // knob -> value, flat ("tile": "128x256x64")
  int rung = 0;              // precision ladder rung: 0 is the fastest math the policy allows
  double predicted_s = 0;    // the analytic ranking's time estimate (0: none)
  std::string origin;        // rank | prior | experience | neighbor | fallback | explore
};


struct CompileOutcome {
  bool ok = false;
  std::string so_path;
  std::string cu_path;
  std::string message;       // the compiler's error text when !ok
  double seconds = 0;        // compile wall time (0 when served from the cache)
  bool cached = false;
};

// Seconds of an evaluation by phase (the worker's: bind, inputs, reference, candidate, guards,
// checks, float64, timing, recheck; docs/results-schema.md eval_phases).
using GpuPhases = std::map<std::string, double>;

// One stage's time in an ok candidate's per-stage profile (docs/eval-contract.md, "Per-stage
// times"): the stage's name, kind and configuration as ucut_describe() names them.
struct StageTime {
  std::string stage, kind, config;
  double ms = 0;
  bool operator==(const StageTime&) const = default;
};
using StageTimes = std::vector<StageTime>;
nlohmann::json stage_times_to_json(const StageTimes& t);
StageTimes stage_times_from_json(const nlohmann::json& j);  // lenient: entries without a number dropped

struct EvalOutcome {
  RunStatus status = RunStatus::launch_error;
  double time_s = 0;         // median kernel time when status == ok
  std::string message;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double gpu_seconds = 0;    // GPU time this evaluation used (correctness + timing)
  GpuPhases gpu_phases;      // gpu_seconds by phase, where the evaluator reports them
  bool reference_limited = false;  // mismatch: the fp32 reference's rounding, not the kernel (RunRecord)
  // ok only by the reference-class pass: some trial failed elementwise but the kernel is no
  // further from float64 than the fp32 reference (RunRecord passed_by float64)
  bool passed_by_float64 = false;
  // A mismatch of the kernel's rounding: found in the correctness trials, and every trial's two
  // runs were bit-identical. Any kernel that sums every output in the same order (the space's
  // summation_class) computes the same values, so it fails the same way.
  bool rounding_mismatch = false;
  StageTimes stage_ms;       // ok candidates of several stages whose library times them
};

// Times the candidates are judged against (EVAL-CONTRACT §2).
struct Baselines {
  double eager_s = 0;        // PyTorch eager median; 0 when unknown
  double compile_s = 0;      // torch.compile median; 0 when unknown or not measured
};

struct Attempt {
  int index = 0;             // 0-based order of evaluation
  Candidate cand;
  RunStatus status = RunStatus::launch_error;
  std::string message;
  double time_s = 0;         // when ok
  double speedup = 0;        // eager / time when ok and the baseline is known
  double frac_sol = 0;       // t_SOL / time when ok and t_SOL is known
  double compile_s = 0;
  double gpu_s = 0;
  GpuPhases gpu_phases;      // gpu_s by phase (EvalOutcome); empty in journals older than it
  StageTimes stage_ms;       // the per-stage profile (EvalOutcome); empty where none was taken
  // Seconds from the start of the search (its first start, across --resume) to this result:
  // the best attempt's is the problem's time to best (issue 6). 0 in journals older than it.
  double at_s = 0;
  double max_abs_err = 0;
  double max_rel_err = 0;
  bool reference_limited = false;  // a mismatch the float64 diagnosis put on the fp32 reference
  bool passed_by_float64 = false;  // ok by the reference-class pass (EvalOutcome)
  bool rounding_mismatch = false;  // a repeatable mismatch of the kernel's rounding (EvalOutcome)
  bool improved = false;     // the new best when it was recorded
  bool replayed = false;     // taken from the journal on --resume, not measured again
  std::string so_path, cu_path;
};

nlohmann::json candidate_to_json(const Candidate& c);
Candidate candidate_from_json(const nlohmann::json& j);
nlohmann::json attempt_to_json(const Attempt& a);
// Lenient: missing fields take defaults (journals written by older versions still load).
Attempt attempt_from_json(const nlohmann::json& j);

// "tile=128x256x64 cluster=2x1 ..." in key order: short text for progress lines and lessons.
std::string config_brief(const nlohmann::json& config);

}  // namespace ucut::search
