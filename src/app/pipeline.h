// The optimize pipeline before and after the search: a problem file becomes a prepared problem
// (extract -> Problem IR -> SOL report -> lowered program), and a prepared problem becomes
// either a plan (no GPU: rank the space, emit or compile the top candidates, measure nothing) or
// the input of a search (driver.h); the results go to out/<problem>/ (best.ucut, best.cu,
// best.so, model_new.py, problem.json, report.md, report.json).
// Extraction runs `python -m ucutlass_torch.extract` (support/python.h), the only step that
// needs PyTorch; a problem.json given directly skips it (planning only: measuring needs the .py).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build/compiler.h"
#include "lower/lower.h"
#include "memory/experience.h"
#include "problem/problem.h"
#include "app/adapters_space.h"
#include "app/run_report.h"
#include "sol/estimate.h"
#include "sol/hardware.h"
#include "space/precision.h"
#include "support/result.h"

namespace ucut::app {

struct PrepareOptions {
  sol::Policy policy = sol::Policy::tf32;
  std::string gpu = "h200";        // hardware table row for SOL and ranking until a GPU says otherwise
  std::string out_dir = "out";     // problem.json goes to <out_dir>/<name>/
  int extract_timeout_s = 0;       // per problem file; 0: $UCUTLASS_EXTRACT_TIMEOUT or 120 (eval::extract_timeout_s)
  // A resumed run: keep <out_dir>/<name>/problem.json when it was extracted from the same file by
  // the same extractor (pipeline_extraction_key, in problem.json.key beside it) instead of
  // running Python again (~1 s a problem, a minute and more for a large suite).
  bool reuse_extraction = false;
};

// What a problem.json was extracted from: the .py's bytes, the Python package's sources and the
// interpreter (its path); equal keys extract equal IR on one machine.
std::string pipeline_extraction_key(const std::string& problem_py_text);

struct PreparedProblem {
  std::string name;                // the problem file's stem
  std::string source;              // the path as given
  std::string problem_py;          // absolute path of the .py ("" when a problem.json was given)
  std::string problem_json;        // the Problem IR file
  problem::Problem ir;
  sol::Policy policy = sol::Policy::tf32;
  sol::HwSpec hw;
  sol::SolReport sol;
  lower::LoweredProgram lowered;
  memory::MemoryKey key;
  std::vector<std::string> notes;
  // The share of the problem's work (per-op rooflines, sol_op_shares) its kernel stages do: 1
  // without torch stages; below where operations run in PyTorch (lowered.torch_ops).
  double kernel_share = 1;
  double t_sol() const { return sol.reference().t_sol; }
};

// "problems/gemm_square_4096.py" -> "gemm_square_4096".
std::string pipeline_problem_name(const std::string& path);

// Extracts (for a .py), loads, estimates SOL and lowers. Error codes: invalid_input (the file
// or its IR is wrong; the extractor's diagnostics are in the message), unsupported (the problem
// does not lower: the message names the op; or its tensors do not fit in the GPU's memory),
// environment / subprocess (Python or PyTorch missing), not_found.
Result<PreparedProblem> pipeline_prepare(const std::string& path, const PrepareOptions& options);

// The TF32 rounding bound (space/precision.h) of the lowered program under the problem's policy and
// the tolerance profile: where it fails, planning and searching both start one rung above tf32.
space::Tf32Bound pipeline_tf32_bound(const PreparedProblem& p, const std::string& profile);
// The rung the search and the plan start on: the summation-order rung (FP32 SIMT) where 3xTF32
// fails too (when the space has it), one above TF32 where TF32 fails, else 0.
int pipeline_start_rung(const space::Tf32Bound& bound, search::SearchSpace& space);
// The reference-class probe: the 3xTF32 bound judges the elementwise tolerance alone, but under a
// profile with the float64 pass (docs/eval-contract.md §1) a 3xTF32 kernel no further from float64
// than the fp32 reference passes too, so where the bound started the ladder on FP32 SIMT the rung
// below it (mma.sync's 3xTF32, the more accurate of the two 3xTF32 kernels) is probed once
// (BuiltinOptions::probe_rung). -1 where there is nothing to probe.
int pipeline_reference_class_probe(const space::Tf32Bound& bound, search::SearchSpace& space, const std::string& profile);
// The lowest rung a passed reference-class probe chains down to (BuiltinOptions::probe_floor): the
// rung the elementwise bound alone allows (one above TF32 where TF32 fails it), so 3xTF32 on wgmma
// is probed after mma.sync's 3xTF32 passes.
int pipeline_reference_class_probe_floor(const space::Tf32Bound& bound);
// The speed of light at the cheapest precision the tolerance leaves (RunReport::t_sol_contract):
// the FP32 SIMT bound where 3xTF32 fails too, the fp32-faithful (exact policy) bound where `tf32`
// fails, else the policy's; reference peaks.
double pipeline_sol_contract(const sol::SolReport& sol, const space::Tf32Bound& tf32);

// The memory key of a lowered program: class "<stage kinds> <dtype>" (e.g. "gemm f32",
// "gemm+rowwise f32") and the shape bucket of its primary GEMM (or of its first stage's rows).
memory::MemoryKey pipeline_memory_key(const dsl::Program& program, const std::string& gpu, sol::Policy policy);

// ---- planning (no GPU) ----------------------------------------------------------------------

struct PlanOptions {
  int top = 8;                     // candidates emitted / compiled
  std::string profile = "default";  // the contract profile (its tolerance decides the TF32 bound)
  bool codegen = true;             // false (--no-compile): rank only, write no .cu
  bool compile = true;             // false (--emit-only or no nvcc): .cu only
  std::string build_root;          // candidates' build folders
  bool use_cache = true;
  std::shared_ptr<build::Compiler> compiler;  // what compiles (--executor); null: nvcc on this machine
};

struct PlannedCandidate {
  int rank = 0;                    // 1-based
  search::Candidate cand;
  std::optional<search::CompileOutcome> built;  // when codegen ran
};

struct Plan {
  std::vector<PlannedCandidate> top;
  size_t valid = 0;                // valid configurations over all stages
  std::vector<std::string> notes;  // for the report (the precision note among them)
  std::string precision_note;      // why the ladder starts above tf32 (space/precision.h); empty: it does not
};

Plan pipeline_plan(const PreparedProblem& p, RealSpace& space, const PlanOptions& options);

// What compiles a plan's candidates: options.compiler, else nvcc on this machine; null when the
// plan does not compile (emit only).
std::shared_ptr<build::Compiler> pipeline_plan_compiler(const PlanOptions& options);

// ---- outputs --------------------------------------------------------------------------------

// What goes into out/<problem>/ besides the search's report.
struct Outputs {
  std::string dir;
  std::optional<search::Candidate> best;   // the measured best, or the best-ranked when planning
  std::string cu_path, so_path;    // the best's built files, when any
  bool export_model = false;       // write model_new.py (needs best.so and the problem .py)
  // Non-empty: the result is the PyTorch fallback (headline.h): model_new.py runs the reference
  // Model (needs only the problem .py); best.* are still written, for inspection.
  std::string fallback_reason;
};

// Writes best.ucut, best.cu, best.so, lowered.ucut and (export_model) model_new.py; returns the
// files written and notes on what was not (e.g. export failed).
Result<std::vector<std::string>> pipeline_write_outputs(const PreparedProblem& p, const Outputs& out,
                                                        std::vector<std::string>& notes);

// The report sections the pipeline adds to run_report_json / run_report_markdown: SOL, the
// lowering, the space and (when planning) the ranked plan.
nlohmann::json pipeline_report_json(const PreparedProblem& p, const RealSpace* space, const Plan* plan,
                                    const std::vector<std::string>& files, const std::vector<std::string>& notes);
std::string pipeline_report_markdown(const PreparedProblem& p, const RealSpace* space, const Plan* plan,
                                     const std::vector<std::string>& files, const std::vector<std::string>& notes);

// Writes report.json / report.md: the run report (measured or not) with the pipeline's sections.
Status pipeline_write_report(const std::string& dir, const RunReport& r, const nlohmann::json& extra_json,
                             const std::string& extra_md);

}  // namespace ucut::app
