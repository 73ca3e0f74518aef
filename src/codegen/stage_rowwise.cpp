// codegen_emit_rowwise: a rowwise stage (softmax, norms, row reductions over the last dim) as an
// instantiation of ucut_simt::rowwise_kernel (runtime/simt_rowwise.cuh) with the stage's
// prologue/epilogue functors and the plan of simt_plan_rowwise. Golden: tests/golden/codegen_simt.
#include <fmt/format.h>

#include "codegen/functors.h"
#include "codegen/simt_common.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "codegen/stage_emitter.h"

namespace ucut::codegen {
namespace {

struct RowOpInfo {
  const char* name;
  const char* kernel_op;
  bool scalar;     // one value per row
  int max_extra;   // weight, bias
  double eps;      // default eps
};

constexpr RowOpInfo kRowOps[] = {
    {"softmax", "kSoftmax", false, 0, 0},       {"log_softmax", "kLogSoftmax", false, 0, 0},
    {"logsumexp", "kLogSumExp", true, 0, 0},    {"layer_norm", "kLayerNorm", false, 2, 1e-5},
    {"rms_norm", "kRmsNorm", false, 1, 1e-6},   {"group_norm", "kGroupNorm", false, 2, 1e-5},
    {"l1_normalize", "kL1Normalize", false, 0, 1e-12},
    {"l2_normalize", "kL2Normalize", false, 0, 1e-12},
    {"sum", "kRowSum", true, 0, 0},             {"mean", "kRowMean", true, 0, 0},
    {"max", "kRowMax", true, 0, 0},             {"min", "kRowMin", true, 0, 0},
    {"argmax", "kRowArgmax", true, 0, 0},       {"argmin", "kRowArgmin", true, 0, 0},
    // over several inputs: rowwise_multi_kernel
    {"cosine_similarity", "kCosineSimilarity", true, 0, 1e-8},
    {"pairwise_distance", "kPairwiseDistance", true, 0, 1e-6},
    {"triplet_margin", "kTripletMargin", true, 0, 1e-6},
};

const RowOpInfo* find_op(const std::string& name) {
  for (const auto& o : kRowOps)
    if (name == o.name) return &o;
  return nullptr;
}

std::string op_list() {
  std::string s;
  for (const auto& o : kRowOps) s += (s.empty() ? "" : ", ") + std::string(o.name);
  return s;
}

}  // namespace

Result<StageCode> codegen_emit_rowwise(const dsl::Program& program, int stage_index) {
  const dsl::Stage& stage = simt_stage(program, stage_index);
  const auto* rs = std::get_if<dsl::RowwiseStage>(&stage.body);
  if (!rs) return make_error(ErrorCode::internal, "codegen_emit_rowwise called on a non-rowwise stage");
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  const RowOpInfo* op = find_op(rs->op);
  if (!op)
    return make_error(ErrorCode::unsupported, label + ": unknown rowwise op '" + rs->op + "'",
                      "rowwise ops: " + op_list());
  const dsl::Tensor* in = program.find_tensor(rs->input);
  if (!in) return make_error(ErrorCode::invalid_input, label + ": unknown input tensor '" + rs->input + "'");
  if (!simt_is_float(in->dtype))
    return make_error(ErrorCode::unsupported,
                      label + ": rowwise input '" + in->name + "' has dtype " +
                          simt_dtype_name(in->dtype) + "; rowwise ops read f32, f16 or bf16",
                      "convert it in an elementwise stage first");
  if (in->shape.empty() || in->numel() == 0)
    return make_error(ErrorCode::invalid_input, label + ": rowwise input '" + in->name + "' is empty or a scalar");
  if (stage.outputs.empty()) return make_error(ErrorCode::internal, label + ": stage has no output");
  const dsl::Tensor* out = program.find_tensor(stage.outputs[0]);
  if (!out) return make_error(ErrorCode::invalid_input, label + ": unknown output tensor '" + stage.outputs[0] + "'");
  const bool group = rs->op == "group_norm";
  auto gattr = rs->attrs.find("groups");
  const int64_t groups = gattr == rs->attrs.end() ? 1 : static_cast<int64_t>(gattr->second);
  const dsl::RowGeometry geo = dsl::dsl_rowwise_geometry(rs->op, in->shape, groups);
  if (geo.rows == 0)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: {} cannot split '{}' into rows (groups={})", label, rs->op, in->name, groups));
  const int64_t cols = geo.cols;
  const int64_t rows = geo.rows;
  if (group && cols >= (int64_t(1) << 31))
    return make_error(ErrorCode::unsupported,
                      fmt::format("{}: a group of {} elements is 2^31 or more", label, cols),
                      "use more groups");
  const int64_t per_extra = group ? in->shape[1] : cols;  // group_norm: per channel
  const int64_t want = op->scalar ? rows : in->numel();
  if (out->numel() != want)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: output '{}' has {} elements; {} of {} rows of {} gives {}",
                                  label, out->name, out->numel(), rs->op, rows, cols, want),
                      op->scalar ? "the output drops the last dimension" : "the output has the input's shape");
  const bool is_arg = rs->op == "argmax" || rs->op == "argmin";
  if (is_arg && !rs->epilogue.stmts.empty())
    return make_error(ErrorCode::unsupported, label + ": argmax/argmin take no epilogue",
                      "apply the expression in a following elementwise stage");
  if (!is_arg && !simt_is_float(out->dtype))
    return make_error(ErrorCode::invalid_input,
                      label + ": output '" + out->name + "' of " + rs->op + " must be f32, f16 or bf16");
  if (static_cast<int>(rs->extra.size()) > op->max_extra)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: {} takes at most {} extra tensors (weight, bias), got {}", label,
                                  rs->op, op->max_extra, rs->extra.size()));
  std::vector<const dsl::Tensor*> extra;
  for (const auto& name : rs->extra) {
    const dsl::Tensor* t = program.find_tensor(name);
    if (!t) return make_error(ErrorCode::invalid_input, label + ": unknown tensor '" + name + "'");
    if (t->numel() != per_extra || !simt_is_float(t->dtype))
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: '{}' must be a float vector of {} elements (one per {})",
                                    label, name, per_extra, group ? "channel" : "column"));
    if (!extra.empty() && t->dtype != extra[0]->dtype)
      return make_error(ErrorCode::unsupported, label + ": weight and bias must have the same dtype");
    extra.push_back(t);
  }
  double eps = op->eps;
  if (auto it = rs->attrs.find("eps"); it != rs->attrs.end()) eps = it->second;
  const int n_in = dsl::dsl_rowwise_inputs(rs->op);
  if (static_cast<int>(rs->operands.size()) != n_in - 1)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: {} reads {} inputs, the stage names {}", label, rs->op, n_in,
                                  rs->operands.size() + 1));
  std::vector<const dsl::Tensor*> operands;
  for (const auto& name : rs->operands) {
    const dsl::Tensor* t = program.find_tensor(name);
    if (!t) return make_error(ErrorCode::invalid_input, label + ": unknown tensor '" + name + "'");
    if (t->shape != in->shape || t->dtype != in->dtype)
      return make_error(ErrorCode::invalid_input,
                        label + ": '" + name + "' must have the shape and dtype of '" + in->name + "'");
    operands.push_back(t);
  }
  if (n_in > 1 && !rs->prologue.stmts.empty())
    return make_error(ErrorCode::invalid_input, label + ": " + rs->op + " takes no prologue");

  auto plan = dsl::simt_plan_rowwise(rows, cols, dsl::dtype_bytes(in->dtype), rs->knobs,
                                     /*cluster_ok=*/n_in == 1);
  if (!plan) return make_error(plan.error().code, label + ": " + plan.error().message, plan.error().hint);
  const dsl::RowPlan& pl = *plan;

  const std::string in_t = simt_cuda_type(in->dtype), out_t = simt_cuda_type(out->dtype);
  const std::string w_t = extra.empty() ? "float" : simt_cuda_type(extra[0]->dtype);
  // an epilogue reads per result (one a row for the reductions), a prologue per input element
  auto render_reads = [&](bool scalar) {
    return [&, scalar](const dsl::Expr& e, const std::string& field, const dsl::Tensor& t) -> Result<std::string> {
      std::string idx;
      int64_t need = 0;
      if (e.mode == dsl::LoadMode::row) { idx = "row"; need = rows; }
      else if (e.mode == dsl::LoadMode::col) { idx = "col"; need = scalar ? 1 : cols; }
      else { idx = fmt::format("row * {}LL + col", scalar ? 1 : cols); need = scalar ? rows : rows * cols; }
      if (t.numel() != need)
        return make_error(ErrorCode::invalid_input,
                          fmt::format("{}: '{}' has {} elements but this read needs {}", label, t.name,
                                      t.numel(), need));
      return fmt::format("ucut_simt::ld<{}>({}, {})", simt_cuda_type(t.dtype), field, idx);
    };
  };
  auto render_load = render_reads(op->scalar);
  auto render_pro_load = render_reads(false);
  // the checker allows `row`/`col` where the value has the input's shape (not in group_norm)
  const IndexExprs index = rs->op == "group_norm" ? IndexExprs{} : simt_matrix_index(in->shape, "row", "col");
  auto pro = simt_emit_functor(program, rs->prologue, pre + "pro", "prologue of " + label, render_pro_load, index);
  if (!pro) return pro.error();
  auto epi = simt_emit_functor(program, rs->epilogue, pre + "epi", "epilogue of " + label, render_load,
                               op->scalar ? IndexExprs{} : index);
  if (!epi) return epi.error();

  StageCode code;
  code.includes = {"simt_rowwise.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  code.config_name = fmt::format("rowwise_{}_t{}_g{}_v{}_i{}_p{}{}", rs->op, pl.threads, pl.group,
                                 pl.vec, pl.items, pl.cached ? 1 : 2,
                                 pl.cluster > 1 ? fmt::format("_c{}", pl.cluster) : "");
  const int rows_per_block = pl.threads / pl.group;
  std::string d = simt_banner(program, stage_index, "rowwise " + rs->op);
  d += pro->definition + epi->definition;
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  if (n_in > 1) {
    // one value per row from several inputs: the streaming multi-input kernel
    d += "  ucut_simt::RowMultiParams p{};\n";
    d += fmt::format("  p.x = args.tensors[{}];  // {}\n", simt_tensor_index(program, in->name), in->name);
    const char* fields[] = {"p.y", "p.z"};
    for (size_t k = 0; k < operands.size(); ++k)
      d += fmt::format("  {} = args.tensors[{}];  // {}\n", fields[k], simt_tensor_index(program, operands[k]->name),
                       operands[k]->name);
    d += fmt::format("  p.out = args.tensors[{}];  // {}\n", simt_tensor_index(program, out->name), out->name);
    auto mt = rs->attrs.find("margin");
    d += fmt::format("  p.rows = {}LL;\n  p.cols = {}LL;\n  p.eps = {};\n  p.margin = {};\n", rows, cols,
                     codegen_float_literal(eps), codegen_float_literal(mt == rs->attrs.end() ? 1.0 : mt->second));
    std::string checks = "!ucut_simt::aligned(p.x, " + std::to_string(pl.vec * dsl::dtype_bytes(in->dtype)) + ")";
    for (const char* f : {"p.y", "p.z"})
      if (f == std::string("p.y") || operands.size() > 1)
        checks += fmt::format(" || !ucut_simt::aligned({}, {})", f, pl.vec * dsl::dtype_bytes(in->dtype));
    std::string names = in->name;
    for (const auto* t : operands) names += "', '" + t->name;
    d += fmt::format(
        "  if ({}) {{\n"
        "    ucut_rt::set_error(\"{}: tensors '{}' must be {}-byte aligned\");\n    return 2;\n  }}\n",
        checks, label, names, pl.vec * dsl::dtype_bytes(in->dtype));
    d += fmt::format(
        "  ucut_simt::rowwise_multi_kernel<ucut_simt::{}, {}, {}, {}, {}, {}, {}, {}>\n"
        "      <<<{}, {}, 0, args.stream>>>(p, {});\n",
        op->kernel_op, in_t, out_t, pl.threads, pl.group, pl.vec, pl.items, epi->type,
        (rows + rows_per_block - 1) / rows_per_block, pl.threads, epi->init);
    d += simt_launch_check(label);
    d += "  return 0;\n}\n";
    code.definitions = std::move(d);
    return code;
  }
  d += "  ucut_simt::RowParams p{};\n";
  d += fmt::format("  p.x = args.tensors[{}];  // {}\n", simt_tensor_index(program, in->name), in->name);
  d += fmt::format("  p.out = args.tensors[{}];  // {}\n", simt_tensor_index(program, out->name), out->name);
  if (extra.size() > 0) d += fmt::format("  p.weight = args.tensors[{}];\n", simt_tensor_index(program, extra[0]->name));
  if (extra.size() > 1) d += fmt::format("  p.bias = args.tensors[{}];\n", simt_tensor_index(program, extra[1]->name));
  d += fmt::format("  p.rows = {}LL;\n  p.cols = {}LL;\n  p.eps = {};\n", rows, cols, codegen_float_literal(eps));
  if (group)
    d += fmt::format("  p.groups = {}LL;\n  p.spatial = {}LL;\n", groups,
                     in->numel() / (in->shape[0] * in->shape[1]));
  d += fmt::format(
      "  if (!ucut_simt::aligned(p.x, {}) || (!{} && !ucut_simt::aligned(p.out, {}))) {{\n"
      "    ucut_rt::set_error(\"{}: tensors '{}' and '{}' must be {}-byte aligned\");\n    return 2;\n  }}\n",
      pl.vec * dsl::dtype_bytes(in->dtype), op->scalar ? "true" : "false",
      pl.vec * dsl::dtype_bytes(out->dtype), label, in->name, out->name,
      pl.vec * dsl::dtype_bytes(in->dtype));
  if (pl.cluster == 1) {
    d += fmt::format(
        "  ucut_simt::rowwise_kernel<ucut_simt::{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>\n"
        "      <<<{}, {}, 0, args.stream>>>(p, {}, {});\n",
        op->kernel_op, in_t, out_t, w_t, pl.threads, pl.group, pl.vec, pl.items,
        pl.cached ? "true" : "false", pro->type, epi->type, (rows + rows_per_block - 1) / rows_per_block,
        pl.threads, pro->init, epi->init);
    d += simt_launch_check(label);
  } else {
    // one cluster of pl.cluster blocks per row; more than 8 is sm_90's non-portable cluster size,
    // allowed once per kernel
    const std::string kernel = fmt::format(
        "ucut_simt::rowwise_kernel<ucut_simt::{}, {}, {}, {}, {}, {}, {}, {}, true, {}, {}, {}>", op->kernel_op,
        in_t, out_t, w_t, pl.threads, pl.group, pl.vec, pl.items, pro->type, epi->type, pl.cluster);
    if (pl.cluster > 8)
      d += fmt::format(
          "  static const cudaError_t nonportable = cudaFuncSetAttribute(\n"
          "      {},\n"
          "      cudaFuncAttributeNonPortableClusterSizeAllowed, 1);\n"
          "  if (nonportable != cudaSuccess) {{\n"
          "    ucut_rt::set_error(\"{}: cluster of {} blocks not allowed: %s\", cudaGetErrorString(nonportable));\n"
          "    return 4;\n  }}\n",
          kernel, label, pl.cluster);
    d += fmt::format(
        "  cudaError_t launched = ucut_simt::launch_clustered(\n"
        "      {},\n"
        "      {}, {}LL, {}, args.stream, p, {}, {});\n"
        "  if (launched != cudaSuccess) {{\n"
        "    ucut_rt::set_error(\"{}: cluster launch failed: %s\", cudaGetErrorString(launched));\n"
        "    return 4;\n  }}\n",
        kernel, pl.cluster, rows * pl.cluster, pl.threads, pro->init, epi->init, label);
    d += simt_launch_check(label);
  }
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace ucut::codegen
