// Shared pieces of the GEMM emitters (gemm_sm90.cpp: CUTLASS 3.x wgmma kernels; gemm_sm80.cpp:
// CUTLASS 2.x fp32-faithful kernels; gemm_grouped.cpp): the resolved plan of one GEMM problem
// (tensors, sizes, knobs after gemm_resolve_auto, the batch folding) and CUTLASS type names.
#pragma once

#include <string>

#include "codegen/stage_emitter.h"
#include "dsl/gemm_rules.h"
#include "dsl/program.h"
#include "support/result.h"

namespace ucut::codegen {

// The version of the sm90 stored-unit emitter, written into every unit's text (so into its store
// key): bump it whenever the unit's generated code changes for the same configuration.
inline constexpr const char* kSm90UnitEmitter = "sm90-unit-1";
// The same for the sm80-API GEMMs (f32x3, tf32m, f32): the CUTLASS 2.x kernel is the stored unit;
// the epilogue pass stays in the stage's binding, its shapes constants (docs/kernel-abi.md).
inline constexpr const char* kSm80UnitEmitter = "sm80-unit-1";

struct GemmPlan {
  const dsl::GemmStage* stage = nullptr;
  const dsl::Tensor* a = nullptr;
  const dsl::Tensor* b = nullptr;
  const dsl::Tensor* out = nullptr;
  dsl::GemmKnobs knobs;       // resolved: no auto left
  bool stages_auto = false;   // the program said `stages auto`: sm90 uses StageCountAutoCarveout
  int64_t m = 0, n = 0, k = 0, l = 1;  // as launched (a 2-D B in a batched GEMM folds L into M)
  bool folded = false;
  std::string ns;             // namespace of the stage's code: "ucut_s<index>"
  std::string config_name;
};

// Resolves and re-checks the stage; a rule violation here means the checker let it through, so
// it is reported as an internal error naming the rule.
Result<GemmPlan> gemm_plan(const dsl::Program& program, int stage_index, const dsl::GemmStage& stage,
                           const std::string& out_name, const std::string& ns);

// "cutlass::half_t", "cutlass::bfloat16_t", "float".
const char* cutlass_element(dsl::DType t);

// Index of tensor `name` in program.tensors (UCUT_CHECKed to exist).
int tensor_index(const dsl::Program& program, const std::string& name);

Result<StageCode> gemm_emit_sm90(const dsl::Program& program, const GemmPlan& plan);

// The sm90 epilogue tree (gemm_sm90.cpp), shared by the sm90 GEMM and the conv (conv_sm90.cpp):
// from the canonical form of `epilogue`, the functors and the EVT types up to `using Fusion`
// (`text`, which expects ElementD, ElementC, TileShape and RoundStyle declared before it), the
// statements setting the leaves of `typename Fusion::Arguments f` from the unit's arguments `a`
// (`root_set`: a.vec, a.vec_batch_stride, a.scalar, a.red, a.red_batch_stride), and the binding's
// statements filling those arguments `g` from the stage's `a` (`bind`).
struct Sm90EpilogueShape {
  int64_t vec_rows = 0, vec_cols = 0;  // the lengths of v[row] and v[col]
  bool folded = false;                 // a batch folded into M: per-batch vectors are not strided
  int64_t l = 1, m = 0, n = 0;         // as launched: the reductions' batch strides
  bool swap_ab = false;                // the unit computes D.T: the output's rows are its columns
};
struct Sm90EpilogueTree {
  std::string text, root_set, bind;
  const dsl::Tensor* source = nullptr;  // the full-size read (CUTLASS's C), or null
  size_t reductions = 0;
};
Result<Sm90EpilogueTree> sm90_epilogue_tree(const dsl::Program& program, const dsl::Epilogue& epilogue,
                                            const Sm90EpilogueShape& shape, bool fast);
Result<StageCode> gemm_emit_sm80(const dsl::Program& program, const GemmPlan& plan);

// The cached host set-up and launch of a stored unit (`int run(const <args>& a, cudaStream_t)`),
// shared by the sm90 and sm80 GEMM units and the conv unit: an Entry per distinct argument bytes
// and device (four kept), can_implement, the workspace check, initialize, then run. The text
// starts with `comment` (whole lines) and is part of each unit's text, so of its store key.
struct UnitLauncher {
  std::string comment;     // "// Host set-up ...\n"
  std::string args_type;   // "ucut_rt::GemmArgs"
  std::string op_type;     // "Gemm", "Conv": the device adapter type
  std::string member;      // "gemm", "conv": its Entry field
  std::string rejected;    // the can_implement message's format tail and arguments after a.name
  std::string on_reuse;    // statements of an `else` after the set-up (a reused entry), or ""
  std::string ns;          // the unit's namespace (its name placeholder): closed here, followed by
                           // the extern "C" <ns>_run and <ns>_workspace over `args_type`
};
std::string unit_cached_launcher(const UnitLauncher& launcher);
// Names a stored unit by its text (with the placeholder `ns` still in it: equal units get equal
// names), puts the name in place of the placeholder, and sets code.unit and code.unit_name.
void unit_publish(StageCode& code, std::string text, const std::string& ns);
// The binding's declarations of a published unit's entry points (what unit_cached_launcher defines).
std::string unit_declarations(const std::string& unit_name, const std::string& args_type);
// schedules gemv16 / gemv32 (gemm_gemv.cpp, runtime/gemv.cuh): no CUTLASS.
Result<StageCode> gemm_emit_gemv(const dsl::Program& program, const GemmPlan& plan);

// The epilogue pass of the kernels that write fp32 accumulators (sm80 and gemv): unless the
// epilogue is `out = acc` into an f32 output (`direct`: the kernel writes the output), a generated
// SIMT kernel applies the whole epilogue (loads, functions, reductions, conversion) to the
// accumulators kept at the start of the stage's workspace.
struct GemmEpiPass {
  bool direct = false;
  std::string constants;  // M, N, K, L and the workspace bytes kAccBytes, kRedBytes, kEpiBytes
  std::string code;       // EpiParams, its kernels and `int run_epilogue(const ucut_rt::StageArgs&)`
};
bool gemm_epilogue_direct(const GemmPlan& plan);
// `element`: the C++ name of a tensor dtype in the generated code (cutlass_element, or
// simt_cuda_type where CUTLASS is not included).
GemmEpiPass gemm_epilogue_pass(const dsl::Program& program, const GemmPlan& plan, const char* (*element)(dsl::DType));

}  // namespace ucut::codegen
