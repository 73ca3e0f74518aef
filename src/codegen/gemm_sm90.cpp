// CUTLASS 3.x sm90 GEMM emission: a warp-specialized TMA kernel from the CollectiveBuilders, with
// the epilogue as an Epilogue Visitor Tree. The tree is flat: one Sm90Compute node runs a
// generated functor over all the epilogue's leaves at once (Sm90AccFetch, Sm90SrcFetch for the
// residual, Sm90ColBroadcast for v[row], Sm90RowBroadcast for v[col] -- CUTLASS names them by
// the shape that is broadcast -- and Sm90ScalarBroadcast per runtime scalar). Reductions add one
// subtree each (Sm90ColReduction for rowsum-style, Sm90RowReduction for colsum-style) under a
// root that passes the stored value through; the reductions accumulate across N- (or M-) tiles
// with float atomics into an output that CUTLASS's initialize_workspace fills with the identity
// before every launch.
#include <fmt/format.h>

#include "codegen/epilogue_expr.h"
#include "codegen/gemm_common.h"

namespace ucut::codegen {

namespace {

using dsl::DType;

std::string i64(int64_t v) { return std::to_string(v) + "LL"; }

// The Arguments of op `i` of an EVT node with `n` ops (children then the node itself): CUTLASS
// declares structs with fields op_0..op_3 for up to four ops and a cute::tuple beyond.
std::string sel(const std::string& args, size_t i, size_t n) {
  if (n <= 4) return args + ".op_" + std::to_string(i);
  return "cute::get<" + std::to_string(i) + ">(" + args + ")";
}

// A functor over Array<float, N> computing `value` from the leaves (in0 = acc, ...).
std::string functor(const std::string& name, const std::vector<EpiLeaf>& leaves,
                    const dsl::Epilogue& ep, const std::string& value, bool fast) {
  std::string params;
  for (size_t i = 0; i < leaves.size(); ++i)
    params += std::string(i ? ", " : "") + "cutlass::Array<float, N> const& in" + std::to_string(i);
  std::string s = "template <class T> struct " + name + " {};  // the float form exists for CUTLASS's Arguments probe\n";
  s += "template <int N> struct " + name + "<cutlass::Array<float, N>> {\n";
  s += "  CUTLASS_DEVICE cutlass::Array<float, N> operator()(" + params + ") const {\n";
  s += "    cutlass::Array<float, N> out;\n    CUTLASS_PRAGMA_UNROLL\n    for (int i = 0; i < N; ++i) {\n";
  for (size_t i = 0; i < leaves.size(); ++i)
    s += "      const float " + leaves[i].var + " = in" + std::to_string(i) + "[i];\n";
  s += epi_lets_cpp(ep, "      ", fast);
  s += "      out[i] = " + value + ";\n    }\n    return out;\n  }\n};\n";
  return s;
}

}  // namespace

Result<StageCode> gemm_emit_sm90(const dsl::Program& p, const GemmPlan& g) {
  const auto& s = *g.stage;
  const auto& k = g.knobs;
  StageCode code;
  code.needs_cutlass = true;
  code.config_name = g.config_name;
  code.includes = {"cute/tensor.hpp",
                   "cutlass/cutlass.h",
                   "cutlass/numeric_types.h",
                   "cutlass/gemm/device/gemm_universal_adapter.h",
                   "cutlass/gemm/kernel/gemm_universal.hpp",
                   "cutlass/gemm/collective/collective_builder.hpp",
                   "cutlass/epilogue/collective/collective_builder.hpp",
                   "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp",
                   "cutlass/util/packed_stride.hpp"};
  const std::string& ns = g.ns;
  DType op_dt = dsl::gemm_operand_dtype(k.precision);
  int align_ab = 16 / dsl::dtype_bytes(op_dt);
  std::vector<EpiLeaf> leaves = epi_leaves(p, s.epilogue);
  const dsl::EpilogueStmt* store = epi_main_store(s.epilogue);
  const bool fast = k.math == dsl::MathMode::fast;
  std::string store_value = store ? epi_expr_cpp(*store->value, fast) : "acc";
  const EpiLeaf* source = nullptr;
  for (const auto& l : leaves)
    if (l.kind == EpiLeaf::Kind::full) source = &l;
  const dsl::Tensor* src_t = source ? p.find_tensor(source->name) : nullptr;
  std::vector<const dsl::EpilogueStmt*> reductions;
  for (const auto& st : s.epilogue.stmts)
    if (st.kind == dsl::EpilogueStmt::Kind::reduce) reductions.push_back(&st);
  bool coop = k.schedule == dsl::Schedule::cooperative;

  std::string d;
  d += "namespace " + ns + " {\nusing namespace cute;\n";
  d += fmt::format("using ElementA = {};\nusing LayoutA = cutlass::layout::{};  // A {}\n", cutlass_element(op_dt),
                   s.a.transposed ? "ColumnMajor" : "RowMajor",
                   s.a.transposed ? "given as [K, M] (A.T)" : "[M, K]");
  d += fmt::format("using ElementB = {};\nusing LayoutB = cutlass::layout::{};  // B {}\n", cutlass_element(op_dt),
                   s.b.transposed ? "ColumnMajor" : "RowMajor",
                   s.b.transposed ? "given as [N, K] (B.T, K-major)" : "[K, N] (N-major)");
  d += fmt::format("constexpr int AlignA = {0}, AlignB = {0};\n", align_ab);
  d += fmt::format("using ElementD = {};\nconstexpr int AlignD = {};\n", cutlass_element(g.out->dtype),
                   16 / dsl::dtype_bytes(g.out->dtype));
  if (src_t)
    d += fmt::format("using ElementC = {};  // residual '{}'\nconstexpr int AlignC = {};\n",
                     cutlass_element(src_t->dtype), src_t->name, 16 / dsl::dtype_bytes(src_t->dtype));
  else
    d += "using ElementC = void;  // no residual: C is not read\nconstexpr int AlignC = AlignD;\n";
  d += fmt::format("using TileShape = Shape<_{}, _{}, _{}>;\nusing ClusterShape = Shape<_{}, _{}, _1>;\n",
                   k.tile->m, k.tile->n, k.tile->k, k.cluster->m, k.cluster->n);
  d += fmt::format("using MainloopSchedule = cutlass::gemm::{};\nusing EpilogueSchedule = cutlass::epilogue::{};\n",
                   coop ? "KernelTmaWarpSpecializedCooperative" : "KernelTmaWarpSpecializedPingpong",
                   coop ? "TmaWarpSpecializedCooperative" : "TmaWarpSpecialized");
  d += "constexpr auto RoundStyle = cutlass::FloatRoundStyle::round_to_nearest;\n\n";

  // ---- functors and the tree
  d += "// Epilogue: " + (store ? std::string("out = ") + store_value : std::string("acc")) + "\n";
  d += functor("EpiStore", leaves, s.epilogue, store_value, fast);
  for (size_t r = 0; r < reductions.size(); ++r)
    d += functor("EpiReduce" + std::to_string(r), leaves, s.epilogue, epi_expr_cpp(*reductions[r]->value, fast), fast);
  if (!reductions.empty())
    d += "template <class T> struct EpiFirst {};\n"
         "template <int N> struct EpiFirst<cutlass::Array<float, N>> {\n"
         "  template <class... R> CUTLASS_DEVICE cutlass::Array<float, N> operator()(\n"
         "      cutlass::Array<float, N> const& first, R const&...) const { return first; }\n};\n";
  d += "\nnamespace fusion = cutlass::epilogue::fusion;\n";
  std::string leaf_types;
  // Statements setting the leaves' arguments under the node arguments `base` (n = leaves + 1 ops).
  std::vector<std::string> leaf_set(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const EpiLeaf& l = leaves[i];
    std::string t;
    switch (l.kind) {
      case EpiLeaf::Kind::acc: t = "fusion::Sm90AccFetch"; break;
      case EpiLeaf::Kind::full: t = "fusion::Sm90SrcFetch<ElementC>"; break;
      case EpiLeaf::Kind::scalar:
        t = "fusion::Sm90ScalarBroadcast<float>";
        leaf_set[i] = "@.scalars[0] = static_cast<float>(a.scalars[" + std::to_string(l.scalar_index) + "]);\n";
        break;
      case EpiLeaf::Kind::row:
      case EpiLeaf::Kind::col: {
        const dsl::Tensor* vt = p.find_tensor(l.name);
        int64_t len = l.kind == EpiLeaf::Kind::row ? s.m : s.n;
        bool per_batch = vt->numel() != len;
        std::string stride_l = per_batch && !g.folded ? i64(len) : "0LL";
        bool row = l.kind == EpiLeaf::Kind::row;  // v[row]: a column vector broadcast along N
        t = fmt::format("fusion::{}<0, TileShape, {}, float, Stride<{}, int64_t>>",
                        row ? "Sm90ColBroadcast" : "Sm90RowBroadcast", cutlass_element(vt->dtype),
                        row ? "_1, _0" : "_0, _1");
        const char* f = row ? "col" : "row";
        leaf_set[i] = fmt::format("@.ptr_{0} = static_cast<{1} const*>(a.tensors[{2}]);\n"
                                  "cute::get<2>(@.d{3}) = {4};\n",
                                  f, cutlass_element(vt->dtype), tensor_index(p, l.name), row ? "Col" : "Row", stride_l);
        break;
      }
    }
    d += "using Leaf" + std::to_string(i) + " = " + t + ";  // " + l.var + "\n";
    leaf_types += ", Leaf" + std::to_string(i);
  }
  auto set_leaves = [&](const std::string& base) {
    std::string out;
    for (size_t i = 0; i < leaves.size(); ++i) {
      std::string path = sel(base, i, leaves.size() + 1);
      std::string st = leaf_set[i];
      for (size_t pos; (pos = st.find('@')) != std::string::npos;) st.replace(pos, 1, path);
      size_t start = 0;
      for (size_t nl; (nl = st.find('\n', start)) != std::string::npos; start = nl + 1)
        out += "  " + st.substr(start, nl - start + 1);
    }
    return out;
  };
  std::string root_set;
  if (reductions.empty()) {
    d += "using Fusion = fusion::Sm90EVT<fusion::Sm90Compute<EpiStore, ElementD, float, RoundStyle>" + leaf_types + ">;\n";
    root_set = set_leaves("f");
  } else {
    d += "using StoreTree = fusion::Sm90EVT<fusion::Sm90Compute<EpiStore, float, float, RoundStyle>" + leaf_types + ">;\n";
    std::string red_types;
    size_t nroot = reductions.size() + 2;
    root_set = set_leaves(sel("f", 0, nroot));
    for (size_t r = 0; r < reductions.size(); ++r) {
      const auto& st = *reductions[r];
      bool per_row = st.reduce_axis == dsl::ReduceAxis::row;  // one value per output row: CUTLASS ColReduction
      const char* reg = st.reduce_op == dsl::ReduceOp::sum   ? "cutlass::plus"
                        : st.reduce_op == dsl::ReduceOp::max ? "cutlass::maximum_with_nan_propagation"
                                                             : "cutlass::minimum_with_nan_propagation";
      const char* gmem = st.reduce_op == dsl::ReduceOp::sum   ? "cutlass::atomic_add"
                         : st.reduce_op == dsl::ReduceOp::max ? "cutlass::atomic_maximum"
                                                              : "ucut_sm90_atomic_minimum";
      std::string ident = st.reduce_op == dsl::ReduceOp::sum ? "0.f"
                          : st.reduce_op == dsl::ReduceOp::max ? "-INFINITY" : "INFINITY";
      std::string stride_l = g.l > 1 ? i64(per_row ? g.m : g.n) : "0LL";
      d += fmt::format("using Reduce{} = fusion::Sm90EVT<fusion::{}<{}, {}, {}, 0, TileShape, float, float, RoundStyle, "
                       "Stride<{}, int64_t>>,\n    fusion::Sm90EVT<fusion::Sm90Compute<EpiReduce{}, float, float, RoundStyle>{}>>;"
                       "  // {} -> '{}'\n",
                       r, per_row ? "Sm90ColReduction" : "Sm90RowReduction", reg, reg, gmem,
                       per_row ? "_1, _0" : "_0, _1", r, leaf_types, per_row ? "per-row" : "per-column", st.name);
      red_types += ", Reduce" + std::to_string(r);
      std::string red = sel("f", 1 + r, nroot);
      root_set += set_leaves(sel(red, 0, 2));
      std::string node = sel(red, 1, 2);
      root_set += fmt::format("  {0}.ptr_{1} = a.tensors[{2}];\n  {0}.reduction_identity = {3};\n"
                              "  cute::get<2>({0}.d{4}) = {5};\n",
                              node, per_row ? "col" : "row", tensor_index(p, st.name), ident,
                              per_row ? "Col" : "Row", stride_l);
    }
    d += "using Fusion = fusion::Sm90EVT<fusion::Sm90Compute<EpiFirst, ElementD, float, RoundStyle>, StoreTree" +
         red_types + ">;\n";
  }

  d += R"(
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    ElementC, cutlass::layout::RowMajor, AlignC, ElementD, cutlass::layout::RowMajor, AlignD,
    EpilogueSchedule, Fusion>::CollectiveOp;
)";
  std::string stage_count = g.stages_auto
      ? "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>"
      : "cutlass::gemm::collective::StageCount<" + std::to_string(*k.stages) + ">";
  d += "using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<\n"
       "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, AlignA, ElementB, LayoutB, AlignB,\n"
       "    float, TileShape, ClusterShape,\n    " + stage_count + ",\n    MainloopSchedule>::CollectiveOp;\n";
  d += fmt::format("using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,\n"
                   "    CollectiveEpilogue, cutlass::gemm::{}>;\n",
                   k.scheduler == dsl::TileScheduler::stream_k ? "StreamKScheduler" : "PersistentScheduler");
  d += "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;\n\n";

  // ---- arguments
  int ia = tensor_index(p, s.a.tensor), ib = tensor_index(p, s.b.tensor), id = tensor_index(p, g.out->name);
  d += "typename Gemm::Arguments make_arguments(const ucut_rt::StageArgs& a) {\n";
  d += fmt::format("  const int M = {}, N = {}, K = {}, L = {};\n", g.m, g.n, g.k, g.l);
  d += "  typename Gemm::Arguments args{};\n  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;\n";
  d += "  args.problem_shape = {M, N, K, L};\n";
  d += fmt::format("  args.mainloop.ptr_A = static_cast<ElementA const*>(a.tensors[{}]);\n", ia);
  d += "  args.mainloop.dA = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, cute::make_shape(M, K, L));\n";
  d += fmt::format("  args.mainloop.ptr_B = static_cast<ElementB const*>(a.tensors[{}]);\n", ib);
  d += "  args.mainloop.dB = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, cute::make_shape(N, K, L));\n";
  if (g.l > 1 && g.b->shape.size() == 2)  // unreachable: folded; kept for clarity
    d += "  cute::get<2>(args.mainloop.dB) = 0;\n";
  d += "  typename Fusion::Arguments f{};\n" + root_set + "  args.epilogue.thread = f;\n";
  if (src_t) {
    d += fmt::format("  args.epilogue.ptr_C = static_cast<ElementC const*>(a.tensors[{}]);\n", tensor_index(p, src_t->name));
    d += "  args.epilogue.dC = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, cute::make_shape(M, N, L));\n";
  } else {
    d += "  args.epilogue.ptr_C = nullptr;\n";
    d += "  args.epilogue.dC = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, cute::make_shape(M, N, L));\n";
  }
  d += fmt::format("  args.epilogue.ptr_D = static_cast<ElementD*>(a.tensors[{}]);\n", id);
  d += "  args.epilogue.dD = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, cute::make_shape(M, N, L));\n";
  d += "  cudaGetDevice(&args.hw_info.device_id);\n  args.hw_info.sm_count = ucut_rt::sm_count();\n";
  d += fmt::format("  args.scheduler.max_swizzle_size = {};\n", k.swizzle.value_or(1));
  d += fmt::format("  args.scheduler.raster_order = decltype(args.scheduler.raster_order)::{};\n",
                   k.raster == dsl::Raster::along_n ? "AlongN" : "AlongM");
  if (k.scheduler == dsl::TileScheduler::stream_k) {
    int sk = k.split_k.value_or(1);
    if (sk > 1)
      d += fmt::format("  args.scheduler.splits = {};\n"
                       "  args.scheduler.decomposition_mode = decltype(args.scheduler.decomposition_mode)::SplitK;\n", sk);
    else
      d += "  args.scheduler.decomposition_mode = decltype(args.scheduler.decomposition_mode)::StreamK;\n";
  }
  d += "  return args;\n}\n\n";

  // ---- workspace and the cached launcher
  d += R"(size_t workspace_bytes() {
  ucut_rt::StageArgs none{nullptr, nullptr, nullptr, 0, nullptr};
  static void* null_tensors[)" + std::to_string(p.tensors.size() + 1) + R"(] = {};
  static const double zero_scalars[)" + std::to_string(p.scalars.size() + 1) + R"(] = {};
  none.tensors = null_tensors;
  none.scalars = zero_scalars;
  return Gemm::get_workspace_size(make_arguments(none));
}

// Host set-up (can_implement, TMA descriptors, cudaFuncSetAttribute) runs once per pointer set,
// scalar values and workspace; later calls with the same key only launch.
struct Cache {
  std::mutex mu;
  Gemm gemm;
  bool ready = false;
  int device = -1;
  void* key[)" + std::to_string(p.tensors.size() + 1) + R"(] = {};
  double scalars[)" + std::to_string(p.scalars.size() + 1) + R"(] = {};
  void* workspace = nullptr;
  typename Gemm::Arguments args;
};

int run(const ucut_rt::StageArgs& a) {
  static Cache c;
  std::lock_guard<std::mutex> lock(c.mu);
  int device = 0;
  cudaGetDevice(&device);
  bool same = c.ready && c.device == device && c.workspace == a.workspace;
  for (int i = 0; same && i < )" + std::to_string(p.tensors.size()) + R"(; ++i) same = c.key[i] == a.tensors[i];
  for (int i = 0; same && i < )" + std::to_string(p.scalars.size()) + R"(; ++i) same = c.scalars[i] == a.scalars[i];
  if (!same) {
    c.ready = false;
    c.args = make_arguments(a);
    cutlass::Status st = c.gemm.can_implement(c.args);
    if (st != cutlass::Status::kSuccess) {
      ucut_rt::set_error(")" + g.config_name + R"(: can_implement rejected the problem: %s", cutlassGetStatusString(st));
      return 2;
    }
    size_t need = Gemm::get_workspace_size(c.args);
    if (need > a.workspace_bytes) {
      ucut_rt::set_error(")" + g.config_name + R"(: needs %zu workspace bytes, got %zu", need, a.workspace_bytes);
      return 5;
    }
    st = c.gemm.initialize(c.args, a.workspace, a.stream);
    if (st != cutlass::Status::kSuccess) {
      ucut_rt::set_error(")" + g.config_name + R"(: initialize failed: %s", cutlassGetStatusString(st));
      return 3;
    }
    c.device = device;
    c.workspace = a.workspace;
    for (int i = 0; i < )" + std::to_string(p.tensors.size()) + R"(; ++i) c.key[i] = a.tensors[i];
    for (int i = 0; i < )" + std::to_string(p.scalars.size()) + R"(; ++i) c.scalars[i] = a.scalars[i];
    c.ready = true;
  })";
  // Reductions accumulate with atomics (their outputs are refilled with the identity), and the
  // stream-K scheduler's barrier flags must be zero at every launch (a second launch over the flags
  // the first one left behind waits forever): both re-run initialize_workspace on every call.
  const bool stream_k = k.scheduler == dsl::TileScheduler::stream_k;
  if (!reductions.empty() || stream_k)
    d += R"( else {
    // )" + std::string(!reductions.empty() && stream_k ? "Reduction outputs back to the identity; stream-K barriers to zero."
                      : stream_k ? "Stream-K barrier flags back to zero before every launch."
                                 : "Reductions accumulate with atomics: refill their outputs with the identity.") + R"(
    cutlass::Status st = GemmKernel::initialize_workspace(c.args, a.workspace, a.stream);
    if (st != cutlass::Status::kSuccess) {
      ucut_rt::set_error(")" + g.config_name + R"(: workspace initialization failed: %s", cutlassGetStatusString(st));
      return 3;
    }
  })";
  d += R"(
  cutlass::Status st = c.gemm.run(a.stream);
  cudaError_t e = cudaGetLastError();
  if (st != cutlass::Status::kSuccess || e != cudaSuccess) {
    ucut_rt::set_error(")" + g.config_name + R"(: launch failed: %s / %s", cutlassGetStatusString(st), cudaGetErrorString(e));
    return 4;
  }
  return 0;
}
}  // namespace )" + ns + "\n";

  std::string prelude;
  if (!reductions.empty())
    prelude =
        "#ifndef UCUT_SM90_ATOMIC_MIN_DEFINED\n#define UCUT_SM90_ATOMIC_MIN_DEFINED\n"
        "// GmemReduceFn for min reductions; CUTLASS's is_atomic trait marks it atomic.\n"
        "template <class T> struct ucut_sm90_atomic_minimum {\n"
        "  CUTLASS_DEVICE T operator()(T* ptr, T value) const { ucut_fn::atomic_reduce_min(ptr, value); return value; }\n"
        "};\n"
        "namespace cutlass { template <class T> struct is_atomic<ucut_sm90_atomic_minimum<T>> : platform::true_type {}; }\n"
        "#endif\n";
  code.definitions = prelude + d;
  code.launcher = ns + "::run";
  code.workspace_expr = ns + "::workspace_bytes()";
  return code;
}

}  // namespace ucut::codegen
