// CUTLASS 3.x sm90 convolution emission: the implicit-GEMM fprop kernel (conv::collective::
// CollectiveBuilder with Operator::kFprop: TMA im2col for the activation, tiled TMA for the filter,
// the one sm90 conv schedule, non-persistent with one MMA warpgroup) and the sm90 GEMM's epilogue
// tree (sm90_epilogue_tree, gemm_sm90.cpp) over the implicit GEMM's M = N*P*Q, N = K: v[col] is
// one value per output channel (Sm90RowBroadcast), a full load the residual through C.
// Like the sm90 GEMM it is a stored kernel unit (docs/kernel-abi.md): the unit's text holds the
// rank, dtypes, tile, cluster, stage count, math and the epilogue's canonical form; the problem
// shape (N, C, K, sizes, filter, padding, stride, dilation) and the pointers are runtime arguments,
// ucut_rt::ConvArgs (defined in the unit and in the binding, once per translation unit).
#include <fmt/format.h>

#include "codegen/epilogue_expr.h"
#include "codegen/gemm_common.h"
#include "dsl/conv_rules.h"
#include "support/diagnostics.h"

namespace ucut::codegen {

namespace {

// The version of the conv unit emitter, written into every unit's text (so into its store key).
constexpr const char* kConvUnitEmitter = "sm90-conv-unit-1";

// The runtime arguments of a stored conv unit: what does not change its device code. Its host
// set-up is cached per distinct value of these bytes (no padding: 55 8-byte words, 22 ints).
const char* const kConvArgs = R"(#ifndef UCUT_CONV_ARGS_DEFINED
#define UCUT_CONV_ARGS_DEFINED
namespace ucut_rt {
struct ConvArgs {
  const void* x;                    // [N, spatial..., C]
  const void* w;                    // [K, filter spatial..., C]
  const void* c;                    // the residual (the epilogue's full-size read), or null
  void* d;                          // [N, output spatial..., K]
  const void* vec[16];              // by epilogue leaf: v[col] vectors
  long long vec_batch_stride[16];   // always 0 (a conv has no batch of vectors)
  double scalar[16];                // by epilogue leaf: runtime scalars
  void* workspace;
  unsigned long long workspace_bytes;
  const char* name;                 // the stage's configuration, for messages
  int n, c_in, k;                   // batch, input channels, output channels
  int size[3], filter[3], pad_lo[3], pad_hi[3], stride[3], dilation[3];  // spatial, outermost first
  int reserved;
};
}  // namespace ucut_rt
#endif
)";

const char* layout_of_rank(int rank) {
  return rank == 1 ? "TensorNWC" : rank == 2 ? "TensorNHWC" : "TensorNDHWC";
}

}  // namespace

Result<StageCode> codegen_emit_conv(const dsl::Program& p, int si) {
  const auto& stage = p.stages.at(static_cast<size_t>(si));
  const auto* sp = std::get_if<dsl::ConvStage>(&stage.body);
  if (!sp) return make_error(ErrorCode::internal, "codegen_emit_conv called on a non-conv stage");
  const auto& s = *sp;
  const dsl::Tensor* x = p.find_tensor(s.x);
  const dsl::Tensor* out = p.find_tensor(stage.outputs.at(0));
  if (!x || !out) return make_error(ErrorCode::internal, "a conv tensor is not declared (the checker resolves names)");
  if (auto v = dsl::conv_rules_check(p, s, *out); !v.empty())
    return make_error(ErrorCode::invalid_input,
                      "conv stage " + std::to_string(si) + " breaks rule " + v[0].rule + " (" + v[0].knob + "): " +
                          v[0].message,
                      v[0].hint);
  const dsl::GemmKnobs k = dsl::conv_resolve_auto(p, s, *out);
  const bool stages_auto = !s.knobs.stages.has_value();
  const std::string ns = "ucut_s" + std::to_string(si);
  StageCode code;
  code.needs_cutlass = true;
  code.config_name = dsl::conv_config_name(k, stages_auto, s.rank);
  // CUTLASS's conv headers are not self-contained: the device adapter goes first.
  code.includes = {"cute/tensor.hpp",
                   "cutlass/cutlass.h",
                   "cutlass/numeric_types.h",
                   "cutlass/kernel_hardware_info.hpp",
                   "cutlass/conv/device/conv_universal_adapter.hpp",
                   "cutlass/conv/kernel/conv_universal.hpp",
                   "cutlass/conv/collective/collective_builder.hpp",
                   "cutlass/conv/convnd_problem_shape.hpp",
                   "cutlass/epilogue/collective/collective_builder.hpp",
                   "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"};
  const bool fast = k.math == dsl::MathMode::fast;
  // no batch of GEMMs: vectors are one per output channel, never per batch
  auto tree = sm90_epilogue_tree(p, s.epilogue, {s.m, s.n, false, 1, s.m, s.n}, fast);
  if (!tree) return tree.error();
  if (tree->reductions > 0)
    return make_error(ErrorCode::internal, "a conv epilogue has reductions (the checker refuses them)");
  const dsl::Tensor* src_t = tree->source;
  const dsl::DType op_dt = dsl::conv_operand_dtype(k.precision, x->dtype);

  const std::string NS = "UCUT_UNIT";  // replaced by the key-derived name below
  std::string d;
  d += "namespace " + NS + " {\nusing namespace cute;\n";
  d += fmt::format("constexpr int kRank = {};\nusing Layout = cutlass::layout::{};  // x, w (KRSC) and the output: channels-last\n",
                   s.rank, layout_of_rank(s.rank));
  d += fmt::format("using ElementA = {};  // x and w{}\nconstexpr int AlignA = {};\n", cutlass_element(op_dt),
                   op_dt == dsl::DType::f32 ? ", TF32 MMA" : "", dsl::conv_align(op_dt));
  d += fmt::format("using ElementD = {};\nconstexpr int AlignD = {};\n", cutlass_element(out->dtype),
                   dsl::conv_align(out->dtype));
  if (src_t)
    d += fmt::format("using ElementC = {};  // the residual\nconstexpr int AlignC = {};\n",
                     cutlass_element(src_t->dtype), dsl::conv_align(src_t->dtype));
  else
    d += "using ElementC = void;  // no residual: C is not read\nconstexpr int AlignC = AlignD;\n";
  d += fmt::format("using TileShape = Shape<_{}, _{}, Shape<_{}>>;\nusing ClusterShape = Shape<_{}, _{}, _1>;\n",
                   k.tile->m, k.tile->n, k.tile->k, k.cluster->m, k.cluster->n);
  d += "constexpr auto RoundStyle = cutlass::FloatRoundStyle::round_to_nearest;\n\n";
  d += tree->text;
  d += R"(
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    ElementC, Layout, AlignC, ElementD, Layout, AlignD,
    cutlass::epilogue::TmaWarpSpecialized, Fusion>::CollectiveOp;
)";
  const std::string stage_count =
      stages_auto ? "cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>"
                  : "cutlass::conv::collective::StageCount<" + std::to_string(*k.stages) + ">";
  d += "using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<\n"
       "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop,\n"
       "    ElementA, Layout, AlignA, ElementA, Layout, AlignA, float, TileShape, ClusterShape,\n    " +
       stage_count + ",\n    cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;\n";
  d += "using Problem = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, kRank>;\n";
  d += "using ConvKernel = cutlass::conv::kernel::ConvUniversal<Problem, CollectiveMainloop, CollectiveEpilogue>;\n";
  d += "using Conv = cutlass::conv::device::ConvUniversalAdapter<ConvKernel>;\n\n";
  d += R"(// Cross-correlation, groups 1, packed channels-last tensors; PyTorch's spatial order (outermost first).
Problem make_problem(const ucut_rt::ConvArgs& a) {
  typename Problem::TensorExtent act{}, flt{};
  typename Problem::SpatialExtent lo{}, hi{}, stride{}, dil{};
  act[0] = a.n;
  flt[0] = a.k;
  for (int i = 0; i < kRank; ++i) {
    act[i + 1] = a.size[i];
    flt[i + 1] = a.filter[i];
    lo[i] = a.pad_lo[i];
    hi[i] = a.pad_hi[i];
    stride[i] = a.stride[i];
    dil[i] = a.dilation[i];
  }
  act[kRank + 1] = a.c_in;
  flt[kRank + 1] = a.c_in;
  return Problem(cutlass::conv::Mode::kCrossCorrelation, act, flt, lo, hi, stride, dil, 1);
}

typename Conv::Arguments make_arguments(const ucut_rt::ConvArgs& a) {
  const Problem problem = make_problem(a);
  // The output's (and the residual's) strides ((q, p, n...), 1, 0) from the problem's packed NZPQK strides.
  typename ConvKernel::StrideD stride_d{};
  cute::for_each(cute::make_seq<cute::rank<0>(typename ConvKernel::StrideD{})>{},
                 [&](auto i) { cute::get<0, i>(stride_d) = problem.stride_C[Problem::RankT - 2 - i]; });
  typename ConvKernel::StrideC stride_c{};
  cute::for_each(cute::make_seq<cute::rank<0>(typename ConvKernel::StrideC{})>{},
                 [&](auto i) { cute::get<0, i>(stride_c) = problem.stride_C[Problem::RankT - 2 - i]; });
  typename Conv::Arguments args{};
  args.problem_shape = problem;
  args.mainloop.ptr_A = static_cast<ElementA const*>(a.x);
  args.mainloop.ptr_B = static_cast<ElementA const*>(a.w);
  typename Fusion::Arguments f{};
)";
  d += tree->root_set;
  d += "  args.epilogue.thread = f;\n";
  d += std::string("  args.epilogue.ptr_C = ") + (src_t ? "static_cast<ElementC const*>(a.c)" : "nullptr") + ";\n";
  d += R"(  args.epilogue.dC = stride_c;
  args.epilogue.ptr_D = static_cast<ElementD*>(a.d);
  args.epilogue.dD = stride_d;
  cudaGetDevice(&args.hw_info.device_id);
  args.hw_info.sm_count = ucut_rt::sm_count();
  return args;
}

)";
  d += unit_cached_launcher(
      {"// Host set-up (can_implement, TMA descriptors, cudaFuncSetAttribute) runs once per distinct\n"
       "// ConvArgs and device; a few are kept.\n",
       "ucut_rt::ConvArgs", "Conv", "conv",
       "\"%s: can_implement rejected the problem (N %d, C %d, K %d): %s\", a.name, a.n, a.c_in, a.k,\n"
       "                         cutlassGetStatusString(st)",
       "",
       NS});

  std::string unit = "// ucutlass stored kernel unit: CUTLASS 3.x sm90 conv fprop, emitter " +
                     std::string(kConvUnitEmitter) + "\n" + kConvArgs + d;
  unit_publish(code, std::move(unit), NS);

  // ---- the binding: this stage's shape, knobs and tensors
  const std::string& u = code.unit_name;
  std::string b = kConvArgs;
  b += unit_declarations(u, "ucut_rt::ConvArgs");
  b += "namespace " + ns + " {\n";
  // the binding fills GemmArgs-named fields: the tree's statements assign g.vec, g.scalar
  b += "ucut_rt::ConvArgs conv_args(const ucut_rt::StageArgs& a) {\n  ucut_rt::ConvArgs g{};\n";
  b += fmt::format("  g.n = {}; g.c_in = {}; g.k = {};\n", s.batch, s.channels, s.out_channels);
  auto arr = [&](const char* name, const std::vector<int64_t>& v) {
    std::string line = "  ";
    for (size_t i = 0; i < v.size(); ++i) line += fmt::format("g.{}[{}] = {}; ", name, i, v[i]);
    line.pop_back();
    return line + "\n";
  };
  b += arr("size", s.in_size) + arr("filter", s.filter) + arr("pad_lo", s.pad_lo) + arr("pad_hi", s.pad_hi) +
       arr("stride", s.stride) + arr("dilation", s.dilation);
  b += fmt::format("  g.x = a.tensors[{}];  // {}\n  g.w = a.tensors[{}];  // {}\n", tensor_index(p, s.x), s.x,
                   tensor_index(p, s.w), s.w);
  if (src_t) b += fmt::format("  g.c = a.tensors[{}];  // {}\n", tensor_index(p, src_t->name), src_t->name);
  b += fmt::format("  g.d = a.tensors[{}];  // {}\n", tensor_index(p, out->name), out->name);
  b += tree->bind;
  b += "  g.workspace = a.workspace;\n  g.workspace_bytes = a.workspace_bytes;\n";
  b += "  g.name = \"" + code.config_name + "\";\n  return g;\n}\n";
  b += "int run(const ucut_rt::StageArgs& a) {\n  const ucut_rt::ConvArgs g = conv_args(a);\n  return " + u +
       "_run(&g, a.stream);\n}\n";
  b += "size_t workspace_bytes() {\n  static void* null_tensors[" + std::to_string(p.tensors.size() + 1) +
       "] = {};\n  static const double zero_scalars[" + std::to_string(p.scalars.size() + 1) +
       "] = {};\n  const ucut_rt::ConvArgs g = conv_args({null_tensors, zero_scalars, nullptr, 0, nullptr});\n  return " +
       u + "_workspace(&g);\n}\n";
  b += "}  // namespace " + ns + "\n";
  code.definitions = std::move(b);
  code.launcher = ns + "::run";
  code.workspace_expr = ns + "::workspace_bytes()";
  return code;
}

}  // namespace ucut::codegen
