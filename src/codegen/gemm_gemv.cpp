// `schedule gemv16` / `gemv32`: a GEMM stage with one output column run by the matrix-vector kernel
// of runtime/gemv.cuh (FP32 FFMA in cuBLAS's GEMV order, K in split_k chunks, each lane's elements
// in groups of 16 or 32) instead of CUTLASS,
// then the same epilogue pass as the sm80 kernels (gemm_epilogue_pass). No CUTLASS headers: the
// stage compiles in seconds.
#include <fmt/format.h>

#include "codegen/gemm_common.h"
#include "codegen/simt_common.h"

namespace ucut::codegen {

Result<StageCode> gemm_emit_gemv(const dsl::Program& p, const GemmPlan& g) {
  const auto& s = *g.stage;
  const int splits = g.knobs.split_k.value_or(dsl::kGemvDefaultSplitK);
  StageCode code;
  code.needs_cutlass = false;
  code.config_name = g.config_name;
  code.includes = {"gemv.cuh"};
  const std::string& ns = g.ns;
  const int ia = tensor_index(p, s.a.tensor), ib = tensor_index(p, s.b.tensor), id = tensor_index(p, g.out->name);
  const GemmEpiPass epi = gemm_epilogue_pass(p, g, simt_cuda_type);
  std::string d = "namespace " + ns + " {\n" + epi.constants;
  d += fmt::format("constexpr int kSplits = {};  // K chunks (split_k)\n", splits);
  d += "size_t workspace_bytes() { return kEpiBytes + ucut_gemv::workspace_bytes(M, kSplits); }\n\n";
  d += epi.code;
  d += "int run(const ucut_rt::StageArgs& a) {\n";
  const std::string y = epi.direct ? fmt::format("a.tensors[{}]", id) : std::string("a.workspace");
  d += fmt::format("  float* y = static_cast<float*>({});\n", y);
  d += "  if (a.workspace_bytes < workspace_bytes()) {\n";
  d += "    ucut_rt::set_error(\"" + g.config_name +
       ": needs %zu workspace bytes, got %zu\", workspace_bytes(), a.workspace_bytes);\n";
  d += "    return 5;\n  }\n";
  d += fmt::format(
      "  cudaError_t e = ucut_gemv::run<{}, {}>(static_cast<const float*>(a.tensors[{}]),\n"
      "      static_cast<const float*>(a.tensors[{}]), y,\n"
      "      reinterpret_cast<float*>(static_cast<char*>(a.workspace) + kEpiBytes), M, K, kSplits, a.stream);\n",
      dsl::gemv_group(g.knobs.schedule), dsl::gemm_gemv_rows_per_block(g.knobs.schedule), ia, ib);
  if (!epi.direct) d += "  if (e == cudaSuccess) { run_epilogue(a); e = cudaGetLastError(); }\n";
  d += "  if (e != cudaSuccess) {\n";
  d += "    ucut_rt::set_error(\"" + g.config_name + ": launch failed: %s\", cudaGetErrorString(e));\n";
  d += "    return 4;\n  }\n  return 0;\n}\n}  // namespace " + ns + "\n";
  code.definitions = std::move(d);
  code.launcher = ns + "::run";
  code.workspace_expr = ns + "::workspace_bytes()";
  return code;
}

}  // namespace ucut::codegen
