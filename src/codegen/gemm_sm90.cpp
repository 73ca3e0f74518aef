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
#include "codegen/simt_common.h"
#include "support/diagnostics.h"
#include "support/fs.h"
#include "support/hash.h"

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

Result<Sm90EpilogueTree> sm90_epilogue_tree(const dsl::Program& p, const dsl::Epilogue& epilogue,
                                            const Sm90EpilogueShape& shape, bool fast) {
  Sm90EpilogueTree tree;
  std::string& d = tree.text;
  std::string& bind = tree.bind;
  std::string& root_set = tree.root_set;
  // The unit is emitted from the canonical epilogue (no tensor, scalar or let names of this
  // program); the binding below reads the program's own leaves, which come in the same order.
  const CanonicalEpilogue canon = epi_canonical(epilogue);
  const dsl::Epilogue& cep = canon.epilogue;
  const std::vector<EpiLeaf> cleaves = epi_leaves(p, cep);
  // The same leaves under the program's names (for the binding).
  std::vector<EpiLeaf> leaves = cleaves;
  for (auto& l : leaves) {
    if (l.kind == EpiLeaf::Kind::acc) continue;
    const bool scalar = l.kind == EpiLeaf::Kind::scalar;
    const auto& names = scalar ? canon.scalar_of : canon.tensor_of;
    auto it = names.find(l.name);
    UCUT_CHECK(it != names.end(), "canonical leaf '" + l.name + "' has a program name");
    l.name = it->second;
    for (size_t i = 0; scalar && i < p.scalars.size(); ++i)
      if (p.scalars[i].name == l.name) l.scalar_index = static_cast<int>(i);
  }
  if (leaves.size() > 16)
    return make_error(ErrorCode::unsupported, fmt::format("the epilogue reads {} inputs; a GEMM epilogue reads at most 15", leaves.size() - 1),
                      "compute part of the epilogue in an elementwise stage after the GEMM");
  const dsl::EpilogueStmt* store = epi_main_store(cep);
  std::string store_value = store ? epi_expr_cpp(*store->value, fast) : "acc";
  const EpiLeaf* source = nullptr;
  for (const auto& l : leaves)
    if (l.kind == EpiLeaf::Kind::full) source = &l;
  const dsl::Tensor* src_t = source ? p.find_tensor(source->name) : nullptr;
  std::vector<const dsl::EpilogueStmt*> reductions, creductions;
  for (const auto& st : epilogue.stmts)
    if (st.kind == dsl::EpilogueStmt::Kind::reduce) reductions.push_back(&st);
  for (const auto& st : cep.stmts)
    if (st.kind == dsl::EpilogueStmt::Kind::reduce) creductions.push_back(&st);
  if (reductions.size() > 4)
    return make_error(ErrorCode::unsupported, "a GEMM epilogue computes at most 4 reductions",
                      "move the others to a reduce stage after the GEMM");
  // ---- functors and the tree
  d += "// Epilogue: " + (store ? std::string("out = ") + store_value : std::string("acc")) + "\n";
  d += functor("EpiStore", cleaves, cep, store_value, fast);
  for (size_t r = 0; r < creductions.size(); ++r)
    d += functor("EpiReduce" + std::to_string(r), cleaves, cep, epi_expr_cpp(*creductions[r]->value, fast), fast);
  if (!reductions.empty())
    d += "template <class T> struct EpiFirst {};\n"
         "template <int N> struct EpiFirst<cutlass::Array<float, N>> {\n"
         "  template <class... R> CUTLASS_DEVICE cutlass::Array<float, N> operator()(\n"
         "      cutlass::Array<float, N> const& first, R const&...) const { return first; }\n};\n";
  d += "\nnamespace fusion = cutlass::epilogue::fusion;\n";
  std::string leaf_types;
  // Statements setting the leaves' arguments under the node arguments `base` (n = leaves + 1 ops).
  std::vector<std::string> leaf_set(leaves.size());
  // The binding: the program's values of the unit's runtime arguments.
  for (size_t i = 0; i < leaves.size(); ++i) {
    const EpiLeaf& l = leaves[i];
    std::string t;
    switch (l.kind) {
      case EpiLeaf::Kind::acc: t = "fusion::Sm90AccFetch"; break;
      case EpiLeaf::Kind::full: t = "fusion::Sm90SrcFetch<ElementC>"; break;
      case EpiLeaf::Kind::scalar:
        t = "fusion::Sm90ScalarBroadcast<float>";
        leaf_set[i] = fmt::format("@.scalars[0] = static_cast<float>(a.scalar[{}]);\n", i);
        bind += fmt::format("  g.scalar[{}] = a.scalars[{}];  // {}\n", i, l.scalar_index, l.name);
        break;
      case EpiLeaf::Kind::row:
      case EpiLeaf::Kind::col: {
        const dsl::Tensor* vt = p.find_tensor(l.name);
        int64_t len = l.kind == EpiLeaf::Kind::row ? shape.vec_rows : shape.vec_cols;
        bool per_batch = vt->numel() != len;
        std::string stride_l = per_batch && !shape.folded ? i64(len) : "0LL";
        // v[row]: a column vector broadcast along the unit's N (along its M where it computes D.T)
        const bool unit_row = (l.kind == EpiLeaf::Kind::row) != shape.swap_ab;
        t = fmt::format("fusion::{}<0, TileShape, {}, float, Stride<{}, int64_t>>",
                        unit_row ? "Sm90ColBroadcast" : "Sm90RowBroadcast", cutlass_element(vt->dtype),
                        unit_row ? "_1, _0" : "_0, _1");
        const char* f = unit_row ? "col" : "row";
        leaf_set[i] = fmt::format("@.ptr_{0} = static_cast<{1} const*>(a.vec[{2}]);\n"
                                  "cute::get<2>(@.d{3}) = a.vec_batch_stride[{2}];\n",
                                  f, cutlass_element(vt->dtype), i, unit_row ? "Col" : "Row");
        bind += fmt::format("  g.vec[{0}] = a.tensors[{1}];  // {2}\n  g.vec_batch_stride[{0}] = {3};\n", i,
                            tensor_index(p, l.name), l.name, stride_l);
        break;
      }
    }
    d += "using Leaf" + std::to_string(i) + " = " + t + ";  // " + cleaves[i].var + "\n";
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
      const bool per_row = st.reduce_axis == dsl::ReduceAxis::row;  // one value per output row
      const bool unit_row = per_row != shape.swap_ab;  // per unit row: CUTLASS ColReduction
      const char* reg = st.reduce_op == dsl::ReduceOp::sum   ? "cutlass::plus"
                        : st.reduce_op == dsl::ReduceOp::max ? "cutlass::maximum_with_nan_propagation"
                                                             : "cutlass::minimum_with_nan_propagation";
      const char* gmem = st.reduce_op == dsl::ReduceOp::sum   ? "cutlass::atomic_add"
                         : st.reduce_op == dsl::ReduceOp::max ? "cutlass::atomic_maximum"
                                                              : "ucut_sm90_atomic_minimum";
      std::string ident = st.reduce_op == dsl::ReduceOp::sum ? "0.f"
                          : st.reduce_op == dsl::ReduceOp::max ? "-INFINITY" : "INFINITY";
      std::string stride_l = shape.l > 1 ? i64(per_row ? shape.m : shape.n) : "0LL";
      d += fmt::format("using Reduce{} = fusion::Sm90EVT<fusion::{}<{}, {}, {}, 0, TileShape, float, float, RoundStyle, "
                       "Stride<{}, int64_t>>,\n    fusion::Sm90EVT<fusion::Sm90Compute<EpiReduce{}, float, float, RoundStyle>{}>>;"
                       "  // {} -> r{}\n",
                       r, unit_row ? "Sm90ColReduction" : "Sm90RowReduction", reg, reg, gmem,
                       unit_row ? "_1, _0" : "_0, _1", r, leaf_types, per_row ? "per-row" : "per-column", r);
      red_types += ", Reduce" + std::to_string(r);
      std::string red = sel("f", 1 + r, nroot);
      root_set += set_leaves(sel(red, 0, 2));
      std::string node = sel(red, 1, 2);
      root_set += fmt::format("  {0}.ptr_{1} = static_cast<float*>(a.red[{2}]);\n  {0}.reduction_identity = {3};\n"
                              "  cute::get<2>({0}.d{4}) = a.red_batch_stride[{2}];\n",
                              node, unit_row ? "col" : "row", r, ident, unit_row ? "Col" : "Row");
      bind += fmt::format("  g.red[{0}] = a.tensors[{1}];  // {2}\n  g.red_batch_stride[{0}] = {3};\n", r,
                          tensor_index(p, st.name), st.name, stride_l);
    }
    d += "using Fusion = fusion::Sm90EVT<fusion::Sm90Compute<EpiFirst, ElementD, float, RoundStyle>, StoreTree" +
         red_types + ">;\n";
  }

  tree.source = src_t;
  tree.reductions = reductions.size();
  return tree;
}

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
  // f32x3w: 3xTF32 with the operand split inside the main loop, ours (runtime/gemm_f32x3w.cuh);
  // the kernel, its scheduler and the epilogue stay CUTLASS's
  // (runtime/gemm_f32x3w_rs.cuh: A in registers, any layout; it includes gemm_f32x3w.cuh)
  const bool x3w = k.precision == dsl::Precision::f32x3w;
  static constexpr const char* kX3wHeader = "gemm_f32x3w.cuh";
  static constexpr const char* kX3wRsHeader = "gemm_f32x3w_rs.cuh";
  if (x3w) {
    code.includes.push_back(kX3wRsHeader);
    code.needs_runtime = true;
  }
  // B [K, N] beside a K-major A: the unit computes D.T = B.T A.T (dsl::gemm_unit_transposed), its A
  // being B (M-major, read through registers) and its B being A (K-major); no tile is transposed
  const bool swap = dsl::gemm_unit_transposed(s, k);
  const bool fast = k.math == dsl::MathMode::fast;
  auto tree = sm90_epilogue_tree(p, s.epilogue, {s.m, s.n, g.folded, g.l, g.m, g.n, swap}, fast);
  if (!tree) return tree.error();
  const dsl::Tensor* src_t = tree->source;
  DType op_dt = dsl::gemm_operand_dtype(k.precision);
  int align_ab = 16 / dsl::dtype_bytes(op_dt);
  bool coop = k.schedule == dsl::Schedule::cooperative;
  const bool stream_k = k.scheduler == dsl::TileScheduler::stream_k;

  // ---- the stored unit: device code and its host set-up, over ucut_rt::GemmArgs
  const std::string NS = "UCUT_UNIT";  // replaced by the key-derived name below
  std::string d;
  d += "namespace " + NS + " {\nusing namespace cute;\n";
  // f32x3w's operands are fp32 words that TMA must copy as bits (as float it rounds them to TF32
  // on the way in, and the small parts are lost): CUTLASS copies tfloat32_t so
  const char* op_el = x3w ? "cutlass::tfloat32_t" : cutlass_element(op_dt);
  if (swap) {
    d += "// The unit computes D.T = B.T A.T: its M and N are the output's N and M, its A the output's B\n"
         "// (read [N, K], N contiguous) and its B the output's A ([M, K], K-major); D is column-major\n";
    d += fmt::format("using ElementA = {0};\nusing LayoutA = cutlass::layout::ColumnMajor;  // B [K, N] as [N, K]\n"
                     "using ElementB = {0};\nusing LayoutB = cutlass::layout::ColumnMajor;  // A [M, K] as [K, M]\n",
                     op_el);
  } else {
    d += fmt::format("using ElementA = {};\nusing LayoutA = cutlass::layout::{};  // A {}\n", op_el,
                     s.a.transposed ? "ColumnMajor" : "RowMajor",
                     s.a.transposed ? "given as [K, M] (A.T)" : "[M, K]");
    d += fmt::format("using ElementB = {};\nusing LayoutB = cutlass::layout::{};  // B {}\n", op_el,
                     s.b.transposed ? "ColumnMajor" : "RowMajor",
                     s.b.transposed ? "given as [N, K] (B.T, K-major)" : "[K, N] (N-major)");
  }
  d += fmt::format("constexpr int AlignA = {0}, AlignB = {0};\n", align_ab);
  d += fmt::format("using ElementD = {};\nconstexpr int AlignD = {};\n", cutlass_element(g.out->dtype),
                   16 / dsl::dtype_bytes(g.out->dtype));
  if (src_t)
    d += fmt::format("using ElementC = {};  // the residual\nconstexpr int AlignC = {};\n",
                     cutlass_element(src_t->dtype), 16 / dsl::dtype_bytes(src_t->dtype));
  else
    d += "using ElementC = void;  // no residual: C is not read\nconstexpr int AlignC = AlignD;\n";
  d += fmt::format("using TileShape = Shape<_{}, _{}, _{}>;\nusing ClusterShape = Shape<_{}, _{}, _1>;\n",
                   k.tile->m, k.tile->n, k.tile->k, k.cluster->m, k.cluster->n);
  d += fmt::format("using MainloopSchedule = cutlass::gemm::{};\nusing EpilogueSchedule = cutlass::epilogue::{};\n",
                   coop ? "KernelTmaWarpSpecializedCooperative" : "KernelTmaWarpSpecializedPingpong",
                   coop ? "TmaWarpSpecializedCooperative" : "TmaWarpSpecialized");
  d += "constexpr auto RoundStyle = cutlass::FloatRoundStyle::round_to_nearest;\n\n";

  d += tree->text;
  const std::string& root_set = tree->root_set;
  const std::string& bind = tree->bind;
  const bool has_reductions = tree->reductions > 0;
  d += fmt::format(R"(
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    ElementC, cutlass::layout::{0}, AlignC, ElementD, cutlass::layout::{0}, AlignD,
    EpilogueSchedule, Fusion>::CollectiveOp;
)", swap ? "ColumnMajor" : "RowMajor");
  if (x3w) {
    // A in registers whatever its layout, B's parts written K-major (its big ones too where B is
    // [K, N]); the stages that fit beside them, as the builder's StageCountAutoCarveout counts its
    // own (ucut_f32x3w::auto_stages_rs), or the explicit count
    const bool bt = dsl::gemm_f32x3w_transposes_b(s);
    const std::string stages = g.stages_auto
        ? fmt::format("ucut_f32x3w::auto_stages_rs<TileShape, {}>(static_cast<int>(sizeof(typename "
                      "CollectiveEpilogue::SharedStorage)))", bt ? "true" : "false")
        : std::to_string(*k.stages);
    d += fmt::format("using CollectiveMainloop = ucut_f32x3w::MainloopRs<cute::GMMA::Major::{}, cute::GMMA::Major::{},\n"
                     "    {}, ClusterShape, TileShape, {}>;\n",
                     swap || !dsl::gemm_a_k_major(s) ? "MN" : "K", bt ? "MN" : "K", stages, dsl::kF32x3wPromoteKTiles);
  } else {
    std::string stage_count = g.stages_auto
        ? "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>"
        : "cutlass::gemm::collective::StageCount<" + std::to_string(*k.stages) + ">";
    const char* built = s.promote_k > 0 ? "BuiltMainloop" : "CollectiveMainloop";
    d += std::string("using ") + built + " = typename cutlass::gemm::collective::CollectiveBuilder<\n"
         "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, AlignA, ElementB, LayoutB, AlignB,\n"
         "    float, TileShape, ClusterShape,\n    " + stage_count + ",\n    MainloopSchedule>::CollectiveOp;\n";
    if (s.promote_k > 0)
      // bf16x3's GEMM (codegen/split_gemm.cpp): the builder's main loop with the dispatch policy of
      // CUTLASS's FP8 one, which adds the tensor-core sums into an fp32 sum every
      // mma_promotion_interval k-blocks (make_arguments); its types are the builder's as they are
      d += "// The builder's main loop, its sums promoted into fp32 every few k-blocks (CUTLASS's FP8 policy)\n"
           "using CollectiveMainloop = cutlass::gemm::collective::CollectiveMma<\n"
           "    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<BuiltMainloop::DispatchPolicy::Stages, ClusterShape,\n"
           "                                                         MainloopSchedule>,\n"
           "    TileShape, ElementA, typename BuiltMainloop::StrideA, ElementB, typename BuiltMainloop::StrideB,\n"
           "    typename BuiltMainloop::TiledMma, typename BuiltMainloop::GmemTiledCopyA,\n"
           "    typename BuiltMainloop::SmemLayoutAtomA, typename BuiltMainloop::SmemCopyAtomA,\n"
           "    typename BuiltMainloop::TransformA, typename BuiltMainloop::GmemTiledCopyB,\n"
           "    typename BuiltMainloop::SmemLayoutAtomB, typename BuiltMainloop::SmemCopyAtomB,\n"
           "    typename BuiltMainloop::TransformB>;\n";
  }
  d += fmt::format("using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,\n"
                   "    CollectiveEpilogue, cutlass::gemm::{}>;\n",
                   stream_k ? "StreamKScheduler" : "PersistentScheduler");
  d += "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;\n\n";

  // ---- arguments, from the runtime GemmArgs
  d += "typename Gemm::Arguments make_arguments(const ucut_rt::GemmArgs& a) {\n";
  d += swap ? "  const int M = a.n, N = a.m, K = a.k, L = a.l;  // D.T = B.T A.T\n"
              : "  const int M = a.m, N = a.n, K = a.k, L = a.l;\n";
  d += "  typename Gemm::Arguments args{};\n  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;\n";
  d += "  args.problem_shape = {M, N, K, L};\n";
  d += fmt::format("  args.mainloop.ptr_A = static_cast<ElementA const*>(a.{});\n", swap ? "b" : "a");
  d += "  args.mainloop.dA = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, cute::make_shape(M, K, L));\n";
  d += fmt::format("  args.mainloop.ptr_B = static_cast<ElementB const*>(a.{});\n", swap ? "a" : "b");
  d += "  args.mainloop.dB = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, cute::make_shape(N, K, L));\n";
  if (s.promote_k > 0)  // k-blocks of the MMA atom's K (16 for bf16) between promotions
    d += fmt::format("  args.mainloop.mma_promotion_interval =\n"
                     "      {} / static_cast<int>(typename CollectiveMainloop::TiledMma{{}}.template tile_size_mnk<2>());\n",
                     s.promote_k);
  d += "  typename Fusion::Arguments f{};\n" + root_set + "  args.epilogue.thread = f;\n";
  d += std::string("  args.epilogue.ptr_C = ") + (src_t ? "static_cast<ElementC const*>(a.c)" : "nullptr") + ";\n";
  d += "  args.epilogue.dC = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, cute::make_shape(M, N, L));\n";
  d += "  args.epilogue.ptr_D = static_cast<ElementD*>(a.d);\n";
  d += "  args.epilogue.dD = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, cute::make_shape(M, N, L));\n";
  d += "  cudaGetDevice(&args.hw_info.device_id);\n  args.hw_info.sm_count = ucut_rt::sm_count();\n";
  d += "  args.scheduler.max_swizzle_size = a.swizzle;\n";
  d += "  using Raster = decltype(args.scheduler.raster_order);\n";
  d += "  args.scheduler.raster_order = a.raster_along_n ? Raster::AlongN : Raster::AlongM;\n";
  if (stream_k)
    d += "  using Decomposition = decltype(args.scheduler.decomposition_mode);\n"
         "  if (a.splits > 1) {\n    args.scheduler.splits = a.splits;\n"
         "    args.scheduler.decomposition_mode = Decomposition::SplitK;\n"
         "  } else {\n    args.scheduler.decomposition_mode = Decomposition::StreamK;\n  }\n";
  d += "  return args;\n}\n\n";

  // ---- the cached launcher
  // Reductions accumulate with atomics (their outputs are refilled with the identity), and the
  // stream-K scheduler's barrier flags must be zero at every launch (a second launch over the flags
  // the first one left behind waits forever): both re-run initialize_workspace on every call.
  std::string on_reuse;
  if (has_reductions || stream_k)
    on_reuse = "    // " +
               std::string(has_reductions && stream_k ? "Reduction outputs back to the identity; stream-K barriers to zero."
                           : stream_k ? "Stream-K barrier flags back to zero before every launch."
                                      : "Reductions accumulate with atomics: refill their outputs with the identity.") +
               R"(
    cutlass::Status st = GemmKernel::initialize_workspace(c->args, a.workspace, stream);
    if (st != cutlass::Status::kSuccess) {
      ucut_rt::set_error("%s: workspace initialization failed: %s", a.name, cutlassGetStatusString(st));
      return 3;
    }
)";
  d += unit_cached_launcher(
      {"// Host set-up (can_implement, TMA descriptors, cudaFuncSetAttribute) runs once per distinct\n"
       "// GemmArgs (shapes, pointers, scalars, knobs, workspace) and device; a few are kept, so stages of\n"
       "// one library sharing this unit do not set up again on every call.\n",
       "ucut_rt::GemmArgs", "Gemm", "gemm",
       "\"%s: can_implement rejected the problem (%d x %d x %d, batch %d): %s\", a.name, a.m, a.n,\n"
       "                         a.k, a.l, cutlassGetStatusString(st)",
       on_reuse,
       NS});

  std::string prelude;
  if (has_reductions)
    prelude =
        "#ifndef UCUT_SM90_ATOMIC_MIN_DEFINED\n#define UCUT_SM90_ATOMIC_MIN_DEFINED\n"
        "// GmemReduceFn for min reductions; CUTLASS's is_atomic trait marks it atomic.\n"
        "template <class T> struct ucut_sm90_atomic_minimum {\n"
        "  CUTLASS_DEVICE T operator()(T* ptr, T value) const { ucut_fn::atomic_reduce_min(ptr, value); return value; }\n"
        "};\n"
        "namespace cutlass { template <class T> struct is_atomic<ucut_sm90_atomic_minimum<T>> : platform::true_type {}; }\n"
        "#endif\n";
  std::string unit = "// ucutlass stored kernel unit: CUTLASS 3.x sm90 GEMM, emitter " + std::string(kSm90UnitEmitter) +
                     "\n" + prelude + d;
  // A stored unit's key is its text (docs/kernel-abi.md): f32x3w's main loop lives in a runtime
  // header, so the header's digest is part of the text, and an edited main loop is a new unit.
  if (x3w) {
    auto digest = [](const char* name) {
      const auto header = fs_read(simt_runtime_include_dir() + "/" + name);
      return "// main loop: " + std::string(name) + " sha256 " +
             sha256_hex(header ? *header : std::string("<unreadable>")).substr(0, 16) + "\n";
    };
    // the register-sourced main loop includes the other header (its split and stock types)
    unit = digest(kX3wHeader) + digest(kX3wRsHeader) + unit;
  }
  // The name derives from the text with the placeholder, so equal units get equal names.
  unit_publish(code, std::move(unit), NS);

  // ---- the binding: this stage's shapes, knobs and tensors
  const std::string& u = code.unit_name;
  int ia = tensor_index(p, s.a.tensor), ib = tensor_index(p, s.b.tensor), id = tensor_index(p, g.out->name);
  std::string b;
  b += unit_declarations(u, "ucut_rt::GemmArgs");
  b += "namespace " + g.ns + " {\n";
  b += "ucut_rt::GemmArgs gemm_args(const ucut_rt::StageArgs& a) {\n  ucut_rt::GemmArgs g{};\n";
  b += fmt::format("  g.m = {}; g.n = {}; g.k = {}; g.l = {};\n", g.m, g.n, g.k, g.l);
  b += fmt::format("  g.a = a.tensors[{}];  // {}\n  g.b = a.tensors[{}];  // {}\n", ia, s.a.tensor, ib, s.b.tensor);
  if (src_t) b += fmt::format("  g.c = a.tensors[{}];  // {}\n", tensor_index(p, src_t->name), src_t->name);
  b += fmt::format("  g.d = a.tensors[{}];  // {}\n", id, g.out->name);
  b += bind;
  b += fmt::format("  g.raster_along_n = {};\n  g.swizzle = {};\n", k.raster == dsl::Raster::along_n ? 1 : 0,
                   k.swizzle.value_or(1));
  if (stream_k) b += fmt::format("  g.splits = {};\n", k.split_k.value_or(1));
  b += "  g.workspace = a.workspace;\n  g.workspace_bytes = a.workspace_bytes;\n";
  b += "  g.name = \"" + g.config_name + "\";\n  return g;\n}\n";
  b += "int run(const ucut_rt::StageArgs& a) {\n  const ucut_rt::GemmArgs g = gemm_args(a);\n  return " + u +
       "_run(&g, a.stream);\n}\n";
  b += "size_t workspace_bytes() {\n  static void* null_tensors[" + std::to_string(p.tensors.size() + 1) +
       "] = {};\n  static const double zero_scalars[" + std::to_string(p.scalars.size() + 1) +
       "] = {};\n  const ucut_rt::GemmArgs g = gemm_args({null_tensors, zero_scalars, nullptr, 0, nullptr});\n  return " +
       u + "_workspace(&g);\n}\n";
  b += "}  // namespace " + g.ns + "\n";
  code.definitions = std::move(b);
  code.launcher = g.ns + "::run";
  code.workspace_expr = g.ns + "::workspace_bytes()";
  return code;
}

}  // namespace ucut::codegen
