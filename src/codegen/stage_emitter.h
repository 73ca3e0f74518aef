// The interface between the kernel-library emitter (library.cpp: the .cu file, the C ABI, the
// workspace plan, running stages in order) and the per-stage emitters (GEMM via CUTLASS, and the
// non-GEMM rowwise/reduce/scan/elementwise stages). Each stage emitter turns one checked stage
// into self-contained CUDA C++ text plus the facts the library emitter needs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dsl/program.h"
#include "support/result.h"

namespace ucut::codegen {

// What a stage emitter produces. The generated code may use the runtime header
// "ucut_runtime.cuh" (emitted with every library), which defines
//   struct ucut_rt::StageArgs {
//     void* const* tensors;     // indexed like Program::tensors (tmp tensors point into workspace)
//     const double* scalars;    // indexed like Program::scalars
//     void* workspace;          // this stage's private workspace (workspace_bytes below)
//     size_t workspace_bytes;
//     cudaStream_t stream;
//   };
//   void ucut_rt::set_error(const char* fmt, ...);   // message for ucut_last_error()
// and the launcher returns a kernel-ABI error code (0 ok, 2 can_implement, 3 set-up, 4 launch,
// 5 workspace too small), never synchronizing the stream.
struct StageCode {
  std::vector<std::string> includes;  // header names, e.g. "cutlass/gemm/device/gemm_universal_adapter.h"
  std::string definitions;            // namespace-scope C++: types, kernels, the launcher
  std::string launcher;               // name of `int launcher(const ucut_rt::StageArgs&)` in definitions
  std::string workspace_expr;         // C++ expression (size_t) for this stage's private workspace
                                      // bytes, evaluated at run time in the library; "0" if none
  std::string config_name;            // canonical configuration name (identity for caches and memory)
  bool needs_cutlass = false;         // whether the library must be compiled with CUTLASS include paths
  bool needs_runtime = false;         // a CUTLASS stage that also includes a header of runtime/
                                      // (f32x3w's main loop): its folder on the include path and in the key
  // A stored kernel unit (docs/kernel-abi.md): `unit` is canonical text (no shape, knob value,
  // name or index of this program) defining extern "C" `<unit_name>_run` and
  // `<unit_name>_workspace` over ucut_rt::GemmArgs; it is compiled once into the kernel store and
  // shared by every stage and program of its form. `definitions` then hold only the binding: the
  // stage's shapes, knobs and tensors as GemmArgs, calling the unit. Empty: no stored unit.
  std::string unit;
  std::string unit_name;              // "ucut_k<16 hex digits of the unit text's SHA-256>"
  // Further stored units the binding calls (a grouped GEMM: one per distinct group form), as
  // (name, text) pairs like unit_name and unit.
  std::vector<std::pair<std::string, std::string>> more_units;
  // The binding holds device code (the sm80 GEMM's epilogue pass): it is compiled by nvcc with the
  // SIMT stages (with `binding_includes`, not `includes`, which are the unit's), not as the ABI
  // unit's host C++.
  bool binding_device = false;
  std::vector<std::string> binding_includes;
};

// `stage_index` is the stage's position in program.stages; emitted names must be unique per
// stage (use the index in every namespace-scope name, e.g. `ucut_s3_kernel`).
using StageEmitter = Result<StageCode> (*)(const dsl::Program& program, int stage_index);

Result<StageCode> codegen_emit_gemm(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_grouped_gemm(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_rowwise(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_reduce(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_scan(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_elementwise(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_attention(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_torch(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_conv(const dsl::Program& program, int stage_index);
Result<StageCode> codegen_emit_window(const dsl::Program& program, int stage_index);

}  // namespace ucut::codegen
