// The fp32-faithful GEMMs: CUTLASS 2.x sm80-API kernels, which run on Hopper through mma.sync.
//   f32x3: 3xTF32 (OpMultiplyAddFastF32) tensor-core GEMM, measured at ~73 TFLOP/s on an H200 for
//          128x128x32 / warp 32x64 / 3 stages vs ~51 for PyTorch's fp32 default, with fp32-level
//          error (fp32-faithful-gemm.md);
//   f32:   the classic SIMT fp32 GEMM.
// Epilogue support: everything the language has (residual, row/column vectors, scalars, all
// functions, row/column reductions, output conversion). The GEMM writes fp32 accumulators; unless
// the epilogue is exactly `out = acc` into an f32 output (then the GEMM writes the output), a
// generated SIMT kernel then applies the epilogue in one pass over the accumulators (kept in this
// stage's workspace); max/min reductions are float atomics into outputs pre-filled with the
// identity, sum reductions fp64 atomics (warp-aggregated along rows) into partials converted last.
// Split-K is CUTLASS 2.x serial split-K (a semaphore in the workspace). The CUTLASS kernel is a
// stored kernel unit over ucut_rt::GemmArgs (docs/kernel-abi.md); the epilogue pass is in the binding.
#include <fmt/format.h>

#include "codegen/epilogue_expr.h"
#include "codegen/gemm_common.h"
#include "codegen/simt_common.h"

namespace ucut::codegen {

bool gemm_epilogue_direct(const GemmPlan& g) {
  return epi_is_identity(g.stage->epilogue) && g.out->dtype == dsl::DType::f32;
}

GemmEpiPass gemm_epilogue_pass(const dsl::Program& p, const GemmPlan& g, const char* (*element)(dsl::DType)) {
  const auto& s = *g.stage;
  const bool fast = g.knobs.math == dsl::MathMode::fast;
  const bool direct = gemm_epilogue_direct(g);
  const int64_t total = g.m * g.n * g.l;
  const int id = tensor_index(p, g.out->name);
  GemmEpiPass pass;
  pass.direct = direct;
  std::string d;
  d += fmt::format("constexpr long long M = {}, N = {}, K = {}, L = {};\n", g.m, g.n, g.k, g.l);
  d += fmt::format("constexpr size_t kAccBytes = {};  // fp32 accumulators the epilogue pass reads\n",
                   direct ? std::string("0") : "ucut_rt::round_up(" + std::to_string(total) + "ull * 4, 256)");
  // The epilogue's reductions (none when `direct`: that epilogue is `out = acc`). Sums accumulate
  // in fp64 partials (after the accumulators), converted at the end: one fp32 atomic per element
  // both serialized on a row's address and drifted past 1e-4. Max/min stay float atomics.
  std::vector<const dsl::EpilogueStmt*> reductions;
  for (const auto& st : s.epilogue.stmts)
    if (st.kind == dsl::EpilogueStmt::Kind::reduce) reductions.push_back(&st);
  std::vector<int64_t> red_offset;  // byte offset of each sum reduction's partials after kAccBytes
  int64_t red_bytes = 0;
  bool float_atomics = false;       // a max/min reduction: its output is filled with the identity
  for (const auto* st : reductions) {
    red_offset.push_back(red_bytes);
    if (st->reduce_op == dsl::ReduceOp::sum)
      red_bytes += ((st->reduce_axis == dsl::ReduceAxis::row ? g.m : g.n) * g.l * 8 + 255) / 256 * 256;
    else
      float_atomics = true;
  }
  d += fmt::format("constexpr size_t kRedBytes = {};  // fp64 partial sums of the sum reductions\n", red_bytes);
  d += "constexpr size_t kEpiBytes = kAccBytes + kRedBytes;\n";
  pass.constants = std::move(d);
  d.clear();
  std::vector<EpiLeaf> leaves = epi_leaves(p, s.epilogue);
  const dsl::EpilogueStmt* store = epi_main_store(s.epilogue);
  if (!direct) {
    std::string fields = "  const float* acc;\n  " + std::string(element(g.out->dtype)) + "* out;\n";
    std::string setup = "  P.acc = static_cast<const float*>(a.workspace);\n";
    setup += fmt::format("  P.out = static_cast<{}*>(a.tensors[{}]);\n", element(g.out->dtype), id);
    std::string loads = "    const float acc = P.acc[idx];\n";
    for (const auto& l : leaves) {
      if (l.kind == EpiLeaf::Kind::acc) continue;
      if (l.kind == EpiLeaf::Kind::scalar) {
        fields += "  float " + l.var + ";\n";
        setup += fmt::format("  P.{} = static_cast<float>(a.scalars[{}]);\n", l.var, l.scalar_index);
        loads += fmt::format("    const float {0} = P.{0};\n", l.var);
        continue;
      }
      const dsl::Tensor* t = p.find_tensor(l.name);
      fields += fmt::format("  const {}* {};\n", element(t->dtype), l.var);
      setup += fmt::format("  P.{} = static_cast<const {}*>(a.tensors[{}]);\n", l.var, element(t->dtype),
                           tensor_index(p, l.name));
      std::string index;
      if (l.kind == EpiLeaf::Kind::full) index = t->numel() == total ? "idx" : "idx % (M * N)";
      else if (l.kind == EpiLeaf::Kind::row) index = t->numel() == g.m ? "m" : "l * M + m";
      else index = t->numel() == g.n ? "n" : "l * N + n";
      loads += fmt::format("    const float {0} = static_cast<float>(P.{0}[{1}]);\n", l.var, index);
    }
    std::string reds;
    std::string fills;
    std::string finals;
    for (size_t r = 0; r < reductions.size(); ++r) {
      const auto& st = *reductions[r];
      bool per_row = st.reduce_axis == dsl::ReduceAxis::row;
      const int64_t count = (per_row ? g.m : g.n) * g.l;
      const std::string at = per_row ? "l * M + m" : "l * N + n";
      fields += fmt::format("  float* red{};\n", r);
      setup += fmt::format("  P.red{} = static_cast<float*>(a.tensors[{}]);\n", r, tensor_index(p, st.name));
      if (st.reduce_op == dsl::ReduceOp::sum) {
        fields += fmt::format("  double* part{};\n", r);
        setup += fmt::format("  P.part{} = reinterpret_cast<double*>(static_cast<char*>(a.workspace) + kAccBytes + {});\n",
                             r, red_offset[r]);
        fills += fmt::format("  cudaMemsetAsync(P.part{}, 0, {}ull * 8, a.stream);\n", r, count);
        if (per_row && g.n % 32 == 0)
          // N % 32 == 0: the 32 lanes of a warp hold 32 consecutive elements of one row.
          reds += fmt::format("    {{\n      double v = static_cast<double>({});\n"
                              "      for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
                              "      if ((threadIdx.x & 31) == 0) atomicAdd(&P.part{}[{}], v);\n    }}\n",
                              epi_expr_cpp(*st.value, fast), r, at);
        else
          reds += fmt::format("    atomicAdd(&P.part{}[{}], static_cast<double>({}));\n", r, at, epi_expr_cpp(*st.value, fast));
        finals += fmt::format("  to_float<<<{}, 256, 0, a.stream>>>(P.red{}, P.part{}, {});\n", (count + 255) / 256, r,
                              r, count);
      } else {
        const char* op = st.reduce_op == dsl::ReduceOp::max ? "max" : "min";
        const char* ident = st.reduce_op == dsl::ReduceOp::max ? "-INFINITY" : "INFINITY";
        reds += fmt::format("    ucut_fn::atomic_reduce_{}(&P.red{}[{}], {});\n", op, r, at, epi_expr_cpp(*st.value, fast));
        fills += fmt::format("  fill<<<{}, 256, 0, a.stream>>>(P.red{}, {}, {});\n", (count + 255) / 256, r, count,
                             ident);
      }
    }
    d += "\nstruct EpiParams {\n" + fields + "};\n\n";
    if (float_atomics)
      d += "__global__ void fill(float* p, long long n, float v) {\n"
           "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n  if (i < n) p[i] = v;\n}\n\n";
    if (red_bytes > 0)
      d += "__global__ void to_float(float* out, const double* part, long long n) {\n"
           "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
           "  if (i < n) out[i] = static_cast<float>(part[i]);\n}\n\n";
    d += "// One thread per output element (grid-stride): the epilogue of the program, in fp32.\n";
    d += "__global__ void __launch_bounds__(256) epilogue(EpiParams P) {\n";
    d += "  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < M * N * L;\n"
         "       idx += (long long)gridDim.x * blockDim.x) {\n";
    d += "    const long long n = idx % N, m = (idx / N) % M, l = idx / (M * N);\n    (void)n; (void)m; (void)l;\n";
    d += loads + epi_lets_cpp(s.epilogue, "    ", fast);
    if (store)
      d += fmt::format("    P.out[idx] = static_cast<{}>({});\n", element(g.out->dtype),
                       epi_expr_cpp(*store->value, fast));
    d += reds + "  }\n}\n\n";
    d += "int run_epilogue(const ucut_rt::StageArgs& a) {\n  EpiParams P{};\n" + setup + fills;
    d += fmt::format("  long long blocks = ({} + 255) / 256;\n  if (blocks > 16 * 132) blocks = 16 * 132;\n", total);
    d += "  epilogue<<<int(blocks), 256, 0, a.stream>>>(P);\n" + finals + "  return 0;\n}\n\n";
  }

  pass.code = std::move(d);
  return pass;
}

Result<StageCode> gemm_emit_sm80(const dsl::Program& p, const GemmPlan& g) {
  const auto& s = *g.stage;
  const auto& k = g.knobs;
  StageCode code;
  code.needs_cutlass = true;
  code.config_name = g.config_name;
  code.includes = {"cutlass/cutlass.h", "cutlass/numeric_types.h", "cutlass/gemm/device/gemm_universal.h",
                   "cutlass/epilogue/thread/linear_combination.h"};
  // f32x3 (3xTF32) and tf32m (plain TF32) run TF32 mma.sync; f32 the SIMT FFMA kernel
  bool x3 = k.precision == dsl::Precision::f32x3 || k.precision == dsl::Precision::tf32m;
  // Threadblock and warp tiles: gemm_rules' table (the checker accepted the tile from it).
  const dsl::Sm80Tile* sh = dsl::gemm_sm80_find(k.precision, *k.tile);
  if (!sh)
    return make_error(ErrorCode::internal, "sm80 tile " + std::to_string(k.tile->m) + "x" + std::to_string(k.tile->n) +
                                               "x" + std::to_string(k.tile->k) + " is not in gemm_rules' table");
  int align = x3 ? k.align.value_or(1) : 1;
  int align_c = x3 ? (g.n % 4 == 0 ? 4 : g.n % 2 == 0 ? 2 : 1) : 1;
  const bool direct = gemm_epilogue_direct(g);

  // ---- the stored unit: the CUTLASS 2.x kernel and its cached host set-up, over ucut_rt::GemmArgs.
  // Shapes, the batch count and the split-K count are runtime arguments (CUTLASS 2.x takes them at
  // run time anyway, so the device code is the same as with them constant); the swizzle, the
  // stages, the alignments and the layouts stay in the text.
  const std::string NS = "UCUT_UNIT";  // replaced by the key-derived name below
  std::string d = "namespace " + NS + " {\n";
  d += fmt::format(
      "using Gemm = cutlass::gemm::device::GemmUniversal<\n"
      "    float, cutlass::layout::{}, float, cutlass::layout::{}, float, cutlass::layout::RowMajor, float,\n"
      "    cutlass::arch::{}, cutlass::arch::Sm80,\n"
      "    cutlass::gemm::GemmShape<{}, {}, {}>, cutlass::gemm::GemmShape<{}, {}, {}>, cutlass::gemm::GemmShape<{}>,\n"
      "    cutlass::epilogue::thread::LinearCombination<float, {}, float, float>,\n"
      "    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<{}>, {}, {}, {},\n"
      "    cutlass::arch::{}>;\n",
      s.a.transposed ? "ColumnMajor" : "RowMajor", s.b.transposed ? "ColumnMajor" : "RowMajor",
      x3 ? "OpClassTensorOp" : "OpClassSimt", sh->m, sh->n, sh->k, sh->wm, sh->wn, sh->wk, x3 ? "16, 8, 8" : "1, 1, 1",
      align_c, k.swizzle.value_or(1), *k.stages, align, align,
      // OpMultiplyAdd on float data with tensor ops: TF32, rounded to nearest on sm_90 (CUTLASS's
      // PreferredRoundingMode); OpMultiplyAddFastF32: the big + small TF32 split (3xTF32)
      k.precision == dsl::Precision::f32x3 ? "OpMultiplyAddFastF32" : "OpMultiplyAdd");
  d += "\ntypename Gemm::Arguments make_arguments(const ucut_rt::GemmArgs& a) {\n";
  d += "  const long long M = a.m, N = a.n, K = a.k, L = a.l;\n";
  d += "  float* D = static_cast<float*>(a.d);\n";
  d += "  // a batch (L > 1) or serial split-K into a.splits slices (a semaphore in the workspace)\n";
  d += fmt::format(
      "  return typename Gemm::Arguments(\n"
      "      L > 1 ? cutlass::gemm::GemmUniversalMode::kBatched : cutlass::gemm::GemmUniversalMode::kGemm,\n"
      "      {{int(M), int(N), int(K)}}, L > 1 ? int(L) : (a.splits > 1 ? a.splits : 1),\n"
      "      {{1.f, 0.f}}, a.a, a.b, D, D,\n"
      "      M * K, N * K, M * N, M * N,\n"
      "      {}, {}, N, N);\n}}\n\n",
      s.a.transposed ? "M" : "K", s.b.transposed ? "K" : "N");
  d += unit_cached_launcher(
      {"// Host set-up (can_implement, initialize) runs once per distinct GemmArgs and device; a few are\n"
       "// kept, so stages sharing this unit do not set up again on every call. Serial split-K runs\n"
       "// initialize() before every launch: it clears the slices' semaphores.\n",
       "ucut_rt::GemmArgs", "Gemm", "gemm",
       "\"%s: can_implement rejected the problem (%d x %d x %d, batch %d): %s\", a.name, a.m, a.n,\n"
       "                         a.k, a.l, cutlassGetStatusString(st)",
       R"(    if (a.splits > 1) {
      cutlass::Status st = c->gemm.initialize(c->args, a.workspace, stream);
      if (st != cutlass::Status::kSuccess) {
        ucut_rt::set_error("%s: initialize failed: %s", a.name, cutlassGetStatusString(st));
        return 3;
      }
    }
)",
       NS});
  std::string unit = "// ucutlass stored kernel unit: CUTLASS 2.x sm80-API GEMM, emitter " +
                     std::string(kSm80UnitEmitter) + "\n" + d;
  unit_publish(code, std::move(unit), NS);

  // ---- the binding: this stage's shapes and tensors, and the epilogue pass over the accumulators
  // (device code with the shapes constant: 32-bit division by constants), compiled with the SIMT
  // stages; a direct stage (`out = acc` into f32) is host code only.
  const std::string& u = code.unit_name;
  const int ia = tensor_index(p, s.a.tensor), ib = tensor_index(p, s.b.tensor), id = tensor_index(p, g.out->name);
  const GemmEpiPass epi = gemm_epilogue_pass(p, g, simt_cuda_type);
  code.binding_device = !direct;
  if (!direct) code.binding_includes = {"cuda_fp16.h", "cuda_bf16.h"};
  std::string b;
  b += unit_declarations(u, "ucut_rt::GemmArgs");
  b += "namespace " + g.ns + " {\n" + epi.constants;
  b += "ucut_rt::GemmArgs gemm_args(const ucut_rt::StageArgs& a) {\n  ucut_rt::GemmArgs g{};\n";
  b += "  g.m = int(M); g.n = int(N); g.k = int(K); g.l = int(L);\n";
  b += fmt::format("  g.a = a.tensors[{}];  // {}\n  g.b = a.tensors[{}];  // {}\n", ia, s.a.tensor, ib, s.b.tensor);
  b += direct ? fmt::format("  g.d = a.tensors[{}];  // {}\n", id, g.out->name)
              : "  g.d = a.workspace;  // the fp32 accumulators the epilogue pass reads\n";
  b += fmt::format("  g.splits = {};\n", k.split_k.value_or(1));
  b += "  g.workspace = a.workspace ? static_cast<char*>(a.workspace) + kEpiBytes : nullptr;\n";
  b += "  g.workspace_bytes = a.workspace_bytes > kEpiBytes ? a.workspace_bytes - kEpiBytes : 0;\n";
  b += "  g.name = \"" + g.config_name + "\";\n  return g;\n}\n";
  b += "size_t workspace_bytes() {\n  static void* null_tensors[" + std::to_string(p.tensors.size() + 1) +
       "] = {};\n  const ucut_rt::GemmArgs g = gemm_args({null_tensors, nullptr, nullptr, 0, nullptr});\n"
       "  return kEpiBytes + " + u + "_workspace(&g);\n}\n\n";
  b += epi.code;
  b += "int run(const ucut_rt::StageArgs& a) {\n  const ucut_rt::GemmArgs g = gemm_args(a);\n";
  b += "  if (int rc = " + u + "_run(&g, a.stream)) return rc;\n";
  if (!direct)
    b += "  run_epilogue(a);\n  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {\n"
         "    ucut_rt::set_error(\"" + g.config_name + ": epilogue launch failed: %s\", cudaGetErrorString(e));\n"
         "    return 4;\n  }\n";
  b += "  return 0;\n}\n}  // namespace " + g.ns + "\n";
  code.definitions = std::move(b);
  code.launcher = g.ns + "::run";
  code.workspace_expr = g.ns + "::workspace_bytes()";
  return code;
}

}  // namespace ucut::codegen
