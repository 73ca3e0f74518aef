// codegen_emit_reduce: a reduce stage (sum/mean/max/min/prod over any set of dims; logsumexp,
// argmax/argmin and max/min with indices (two outputs) in the column kernel only; the losses
// mse, l1, huber, smooth_l1, kl_div, hinge reduced over every element; cross_entropy with class
// indices). Dims are merged into alternating kept/reduced groups; the innermost group decides
// between ucut_simt::reduce_inner_kernel and reduce_outer_kernel (runtime/simt_reduce.cuh);
// split reductions write partials to the stage's workspace and finish in
// reduce_finalize_kernel. Cross-entropy runs the rowwise kCrossEntropyRow kernel into the
// workspace, then cross_entropy_finalize_kernel. Settings: reduction (ReduceStage::reduction:
// mean, sum or batchmean), delta (huber), beta (smooth_l1), log_target (kl_div), ignore_index.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "codegen/functors.h"
#include "codegen/simt_common.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "codegen/stage_emitter.h"

namespace ucut::codegen {
namespace {

const char* kPlainOps[][2] = {{"sum", "kRedSum"},         {"mean", "kRedSum"},      {"max", "kRedMax"},
                              {"min", "kRedMin"},         {"prod", "kRedProd"},     {"logsumexp", "kRedLogSumExp"},
                              {"argmax", "kRedArgMax"},   {"argmin", "kRedArgMin"}};
const char* kLossOps[][2] = {{"mse", "kMse"},       {"l1", "kL1"},          {"huber", "kHuber"},
                             {"smooth_l1", "kSmoothL1"}, {"kl_div", "kKlDiv"}, {"hinge", "kHinge"}};

double attr(const dsl::ReduceStage& rs, const char* key, double dflt) {
  auto it = rs.attrs.find(key);
  return it == rs.attrs.end() ? dflt : it->second;
}

std::string groups_init(const std::vector<dsl::ReduceGroup>& g) {
  std::string ext, str;
  for (size_t i = 0; i < g.size(); ++i) {
    ext += (i ? ", " : "") + std::to_string(g[i].ext) + "LL";
    str += (i ? ", " : "") + std::to_string(g[i].stride) + "LL";
  }
  return fmt::format("ucut_simt::Groups{{{}, {{{}}}, {{{}}}}}", g.size(), ext, str);
}

}  // namespace

Result<StageCode> codegen_emit_reduce(const dsl::Program& program, int stage_index) {
  const dsl::Stage& stage = simt_stage(program, stage_index);
  const auto* rs = std::get_if<dsl::ReduceStage>(&stage.body);
  if (!rs) return make_error(ErrorCode::internal, "codegen_emit_reduce called on a non-reduce stage");
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  const char* red_op = nullptr;
  const char* loss = nullptr;
  for (auto& o : kPlainOps)
    if (rs->op == o[0]) red_op = o[1];
  for (auto& o : kLossOps)
    if (rs->op == o[0]) loss = o[1];
  const bool ce = rs->op == "cross_entropy";
  if (!red_op && !loss && !ce)
    return make_error(ErrorCode::unsupported, label + ": unknown reduce op '" + rs->op + "'",
                      "reduce ops: sum, mean, max, min, prod, mse, l1, huber, smooth_l1, kl_div, "
                      "hinge, cross_entropy");
  const size_t n_in = (loss || ce) ? 2 : 1;
  if (rs->inputs.size() != n_in)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: {} takes {} input(s), got {}", label, rs->op, n_in, rs->inputs.size()));
  std::vector<const dsl::Tensor*> ins;
  for (const auto& n : rs->inputs) {
    const dsl::Tensor* t = program.find_tensor(n);
    if (!t) return make_error(ErrorCode::invalid_input, label + ": unknown input tensor '" + n + "'");
    ins.push_back(t);
  }
  if (!simt_is_float(ins[0]->dtype))
    return make_error(ErrorCode::unsupported, label + ": input '" + ins[0]->name + "' must be f32, f16 or bf16");
  if (ins[0]->numel() == 0) return make_error(ErrorCode::invalid_input, label + ": input '" + ins[0]->name + "' is empty");
  if (stage.outputs.empty()) return make_error(ErrorCode::internal, label + ": stage has no output");
  const dsl::Tensor* out = program.find_tensor(stage.outputs[0]);
  if (!out) return make_error(ErrorCode::invalid_input, label + ": unknown output tensor '" + stage.outputs[0] + "'");
  // max/min with two outputs (values, indices) and argmax/argmin: a value with its index per column
  const bool arg = dsl::dsl_reduce_writes_indices(rs->op, stage.outputs.size());
  const bool index_only = rs->op == "argmax" || rs->op == "argmin";
  const bool pair = arg && !index_only;
  const bool column_only = arg || rs->op == "logsumexp";
  if (index_only ? out->dtype != dsl::DType::i64 : !simt_is_float(out->dtype))
    return make_error(ErrorCode::invalid_input, label + ": output '" + out->name + "' must be " +
                                                    (index_only ? "i64" : "f32, f16 or bf16"));
  const dsl::Tensor* indices = index_only ? out : nullptr;
  if (pair) {
    indices = program.find_tensor(stage.outputs[1]);
    if (!indices || indices->dtype != dsl::DType::i64 || indices->numel() != out->numel())
      return make_error(ErrorCode::invalid_input,
                        label + ": the indices '" + stage.outputs[1] + "' must be i64 of the values' shape");
  }
  if (arg && !rs->epilogue.stmts.empty())
    return make_error(ErrorCode::invalid_input, label + ": reduce " + rs->op + " with indices takes no epilogue");
  const int reduction = dsl::dsl_loss_reduction(rs->reduction);
  if (reduction < 0 || reduction > 2 || (reduction == 2 && rs->op != "kl_div"))
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: reduction {} is not one of 0 (mean), 1 (sum){}", label, reduction,
                                  rs->op == "kl_div" ? ", 2 (batchmean)" : ""));
  if (!rs->epilogue.stmts.empty() || !rs->prologue.stmts.empty()) {
    // epilogue loads index the output; prologues may use acc and scalars only
  }
  auto render_epi_load = [&](const dsl::Expr& e, const std::string& field,
                             const dsl::Tensor& t) -> Result<std::string> {
    if (e.mode == dsl::LoadMode::col || t.numel() != out->numel())
      return make_error(ErrorCode::invalid_input,
                        label + ": an epilogue read of '" + t.name + "' must have the output's " +
                            std::to_string(out->numel()) + " elements (one per result)");
    return fmt::format("ucut_simt::ld<{}>({}, row)", simt_cuda_type(t.dtype), field);
  };
  auto render_pro_load = [&](const dsl::Expr& e, const std::string&, const dsl::Tensor&) -> Result<std::string> {
    return make_error(ErrorCode::unsupported,
                      label + ": the prologue of a reduce stage cannot read tensors ('" + e.name + "')",
                      "compute the value in an elementwise stage first");
  };
  auto pro = simt_emit_functor(program, rs->prologue, pre + "pro", "prologue of " + label, render_pro_load);
  if (!pro) return pro.error();
  if (ce && !rs->prologue.stmts.empty())
    return make_error(ErrorCode::unsupported, label + ": cross_entropy takes no prologue");
  auto epi = simt_emit_functor(program, rs->epilogue, pre + "epi", "epilogue of " + label, render_epi_load);
  if (!epi) return epi.error();
  const std::string out_t = simt_cuda_type(out->dtype);
  const std::string epi_t = fmt::format("ucut_simt::TypedEpi<{}, {}>", out_t, epi->type);
  const std::string epi_init = fmt::format("{}{{{}}}", epi_t, epi->init);
  const std::string in_t = simt_cuda_type(ins[0]->dtype);
  const int in_bytes = dsl::dtype_bytes(ins[0]->dtype);

  StageCode code;
  code.includes = {"simt_reduce.cuh"};
  code.launcher = pre + "launch";
  code.needs_cutlass = false;
  std::string d = simt_banner(program, stage_index, "reduce " + rs->op);
  d += pro->definition + epi->definition;
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);

  if (ce) {
    code.includes.push_back("simt_rowwise.cuh");
    const dsl::Tensor* logits = ins[0];
    const dsl::Tensor* target = ins[1];
    if (target->dtype != dsl::DType::i64)
      return make_error(ErrorCode::invalid_input,
                        label + ": cross_entropy targets '" + target->name + "' must be i64 class indices");
    if (logits->shape.size() != 2 || target->numel() != logits->shape[0])
      return make_error(ErrorCode::invalid_input,
                        label + ": cross_entropy takes logits [N, C] and targets [N]",
                        "reshape the logits to two dimensions");
    if (out->numel() != 1)
      return make_error(ErrorCode::invalid_input, label + ": cross_entropy's output is one value");
    if (reduction == 2) return make_error(ErrorCode::invalid_input, label + ": cross_entropy has no batchmean");
    const int64_t rows = logits->shape[0], cols = logits->shape[1];
    auto plan = dsl::simt_plan_rowwise(rows, cols, in_bytes, rs->knobs);
    if (!plan) return make_error(plan.error().code, label + ": " + plan.error().message, plan.error().hint);
    const dsl::RowPlan& pl = *plan;
    const int64_t ignore = static_cast<int64_t>(attr(*rs, "ignore_index", -100));
    code.workspace_expr = fmt::format("size_t({}) * 2 * sizeof(float)", rows);
    code.config_name = fmt::format("reduce_cross_entropy_t{}_g{}_v{}_i{}_p{}", pl.threads, pl.group,
                                   pl.vec, pl.items, pl.cached ? 1 : 2);
    d += fmt::format(
        "  if (args.workspace_bytes < size_t({0}) * 2 * sizeof(float)) {{\n"
        "    ucut_rt::set_error(\"{1}: workspace too small\");\n    return 5;\n  }}\n"
        "  float* loss = static_cast<float*>(args.workspace);\n"
        "  ucut_simt::RowParams p{{}};\n"
        "  p.x = args.tensors[{2}];\n  p.out = loss;\n  p.valid = loss + {0};\n"
        "  p.target = static_cast<const long long*>(args.tensors[{3}]);\n"
        "  p.rows = {0}LL;\n  p.cols = {4}LL;\n  p.ignore_index = {5}LL;\n"
        "  if (!ucut_simt::aligned(p.x, {6})) {{\n"
        "    ucut_rt::set_error(\"{1}: tensor '{7}' must be {6}-byte aligned\");\n    return 2;\n  }}\n",
        rows, label, simt_tensor_index(program, logits->name), simt_tensor_index(program, target->name),
        cols, ignore, pl.vec * in_bytes, logits->name);
    d += fmt::format(
        "  ucut_simt::rowwise_kernel<ucut_simt::kCrossEntropyRow, {}, float, float, {}, {}, {}, {}, {},"
        " ucut_simt::Identity, ucut_simt::Identity>\n      <<<{}, {}, 0, args.stream>>>(p, "
        "ucut_simt::Identity{{}}, ucut_simt::Identity{{}});\n",
        in_t, pl.threads, pl.group, pl.vec, pl.items, pl.cached ? "true" : "false",
        (rows + pl.threads / pl.group - 1) / (pl.threads / pl.group), pl.threads);
    d += simt_launch_check(label);
    d += fmt::format(
        "  ucut_simt::cross_entropy_finalize_kernel<{}, 1024, {}><<<1, 1024, 0, args.stream>>>(\n"
        "      loss, loss + {}, {}LL, {}, args.tensors[{}], {});\n",
        out_t, epi_t, rows, rows, reduction == 0 ? "true" : "false",
        simt_tensor_index(program, out->name), epi_init);
    d += simt_launch_check(label);
    d += "  return 0;\n}\n";
    code.definitions = std::move(d);
    return code;
  }

  const dsl::Tensor* x = ins[0];
  std::set<int> dims;
  const int rank = static_cast<int>(x->shape.size());
  if (loss) {
    if (ins[1]->shape != x->shape || !simt_is_float(ins[1]->dtype))
      return make_error(ErrorCode::invalid_input,
                        label + ": " + rs->op + " needs a float target of the input's shape");
    for (int i = 0; i < rank; ++i) dims.insert(i);
  } else if (rs->dims.empty()) {
    for (int i = 0; i < rank; ++i) dims.insert(i);
  } else {
    for (int dm : rs->dims) {
      int d0 = dm < 0 ? dm + rank : dm;
      if (d0 < 0 || d0 >= rank)
        return make_error(ErrorCode::invalid_input,
                          fmt::format("{}: dim {} is out of range for '{}' of rank {}", label, dm, x->name, rank));
      dims.insert(d0);
    }
  }
  const dsl::ReduceGeometry geo = dsl::simt_reduce_geometry(x->shape, std::vector<int>(dims.begin(), dims.end()));
  const std::vector<dsl::ReduceGroup>& groups = geo.groups;
  const int64_t n_out = geo.n_out, r_total = geo.r_total;
  if (out->numel() != n_out)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: output '{}' has {} elements but the reduction leaves {}", label,
                                  out->name, out->numel(), n_out));
  const bool inner = geo.inner;
  if (column_only && inner)
    return make_error(ErrorCode::unsupported,
                      label + ": reduce " + rs->op + (arg ? " with indices" : "") +
                          " runs in the column kernel; these dims reduce the last dimension",
                      "use the rowwise stage for the last dimension");
  if (arg && dims.size() != 1)
    return make_error(ErrorCode::invalid_input, label + ": reduce " + rs->op + " with indices reduces one dimension");
  std::vector<dsl::ReduceGroup> kept, red;
  for (size_t i = 0; i + 1 < groups.size(); ++i) (groups[i].reduced ? red : kept).push_back(groups[i]);
  const int64_t run = geo.run;
  if (kept.size() > 8 || red.size() > 8)
    return make_error(ErrorCode::unsupported, label + ": more than 8 alternating kept/reduced dimension groups");
  const int state_bytes = dsl::simt_reduce_state_bytes(stage);
  auto plan = dsl::simt_plan_reduce(inner, run, n_out, r_total, in_bytes, rs->knobs, state_bytes);
  if (!plan) return make_error(plan.error().code, label + ": " + plan.error().message, plan.error().hint);
  const dsl::ReducePlan& pl = *plan;
  double scale = 1.0;
  if (rs->op == "mean" || (loss && reduction == 0)) scale = 1.0 / static_cast<double>(r_total);
  if (loss && reduction == 2) scale = 1.0 / static_cast<double>(x->shape[0]);
  std::string loss_op = loss ? loss : "kNoLoss";
  if (rs->op == "kl_div" && attr(*rs, "log_target", 0) != 0) loss_op = "kKlDivLogTarget";
  double alpha = rs->op == "huber" ? attr(*rs, "delta", 1.0) : attr(*rs, "beta", 1.0);
  if ((rs->op == "huber" || rs->op == "smooth_l1") && alpha <= 0)
    return make_error(ErrorCode::invalid_input, label + ": " + rs->op + " needs a positive delta/beta");
  const std::string op_id = pair ? (rs->op == "max" ? "kRedArgMax" : "kRedArgMin") : red_op ? red_op : "kRedSum";
  // a split's partial: a float, or the pair ops' whole state (MaxSum: 8 bytes, ArgVal: 16)
  const std::string partial_bytes = column_only ? (arg ? "16" : "8") : "sizeof(float)";
  code.workspace_expr = pl.splits > 1 ? fmt::format("size_t({}) * {} * {}", n_out, pl.splits, partial_bytes) : "0";
  const bool clustered = pl.cluster > 1;  // splits combined in a cluster: no workspace
  if (clustered) code.workspace_expr = "0";
  code.config_name = fmt::format("reduce_{}{}_{}_t{}_v{}_s{}{}{}", rs->op, pair ? "_idx" : "", inner ? "inner" : "outer",
                                 pl.threads, pl.vec, pl.splits,
                                 pl.unroll != 4 ? fmt::format("_u{}", pl.unroll) : "",
                                 clustered ? fmt::format("_c{}", pl.cluster) : "");
  d += "  ucut_simt::ReduceParams p{};\n";
  d += fmt::format("  p.x = args.tensors[{}];  // {}\n", simt_tensor_index(program, x->name), x->name);
  if (loss) d += fmt::format("  p.t = args.tensors[{}];  // {}\n", simt_tensor_index(program, ins[1]->name), ins[1]->name);
  if (!index_only)
    d += fmt::format("  p.out = args.tensors[{}];  // {}\n", simt_tensor_index(program, out->name), out->name);
  if (indices)
    d += fmt::format("  p.out2 = static_cast<long long*>(args.tensors[{}]);  // {}\n",
                     simt_tensor_index(program, indices->name), indices->name);
  d += fmt::format("  p.kept = {};\n  p.red = {};\n", groups_init(kept), groups_init(red));
  d += fmt::format("  p.n_out = {}LL;\n  p.inner = {}LL;\n  p.r_total = {}LL;\n  p.r_chunk = {}LL;\n",
                   n_out, run, r_total, pl.r_chunk);
  d += fmt::format("  p.splits = {};\n  p.scale = {};\n  p.alpha = {};\n", pl.splits,
                   codegen_float_literal(scale), codegen_float_literal(alpha));
  if (pl.splits > 1 && !clustered)
    d += fmt::format(
        "  if (args.workspace_bytes < size_t({}) * {} * {}) {{\n"
        "    ucut_rt::set_error(\"{}: workspace too small\");\n    return 5;\n  }}\n"
        "  p.partial = args.workspace;\n",
        n_out, pl.splits, partial_bytes, label);
  const int align = pl.vec * in_bytes;
  d += fmt::format(
      "  if (!ucut_simt::aligned(p.x, {0}){1}) {{\n"
      "    ucut_rt::set_error(\"{2}: input tensors must be {0}-byte aligned\");\n    return 2;\n  }}\n",
      align, loss ? fmt::format(" || !ucut_simt::aligned(p.t, {})", pl.vec * dsl::dtype_bytes(ins[1]->dtype)) : "",
      label);
  if (inner) {
    d += fmt::format(
        "  ucut_simt::reduce_inner_kernel<ucut_simt::{}, ucut_simt::{}, {}, {}, {}, {}, {}, {}, {}>\n"
        "      <<<dim3({}, {}), {}, 0, args.stream>>>(p, {}, {});\n",
        op_id, loss_op, in_t, loss ? simt_cuda_type(ins[1]->dtype) : "float", pl.threads, pl.vec,
        red.empty() ? "true" : "false", pro->type, epi_t, n_out, pl.splits, pl.threads, pro->init, epi_init);
  } else {
    const int64_t tiles = (run + 32 * pl.vec - 1) / (32 * pl.vec);
    const std::string kernel = fmt::format("ucut_simt::reduce_outer_kernel<ucut_simt::{}, {}, {}, {}, {}, {}{}>",
                                           op_id, in_t, pl.threads, pl.vec, pro->type, epi_t,
                                           clustered ? fmt::format(", {}, {}", pl.unroll, pl.cluster)
                                           : pl.unroll != 4 ? fmt::format(", {}", pl.unroll) : "");
    // the kernel keeps an arg op's row as a 32-bit offset into the block's chunk of rows
    if (arg)
      d += fmt::format(
          "  if (p.r_chunk >= (1LL << 31)) {{\n"
          "    ucut_rt::set_error(\"{}: an index reduction over 2^31 or more rows a block is not supported\");\n"
          "    return 2;\n  }}\n",
          label);
    if (clustered) {
      d += fmt::format(
          "  cudaError_t launched = ucut_simt::launch_clustered_y(\n"
          "      {}, {}, dim3({}, {}), {}, args.stream, p, {}, {});\n"
          "  if (launched != cudaSuccess) {{\n"
          "    ucut_rt::set_error(\"{}: cluster launch failed: %s\", cudaGetErrorString(launched));\n"
          "    return 4;\n  }}\n",
          kernel, pl.cluster, n_out / run * tiles, pl.cluster, pl.threads, pro->init, epi_init, label);
    } else {
      // Column reductions run one wave: as many splits as the GPU holds resident blocks beside
      // the column tiles (occupancy asked once per stage), at most the plan's split count.
      if (pl.splits > 1)
        d += fmt::format(
            "  static int occupancy = 0, sms = 0;\n"
            "  if (occupancy == 0) {{\n"
            "    int dev = 0;\n"
            "    cudaGetDevice(&dev);\n"
            "    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);\n"
            "    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, {0}, {1}, 0);\n"
            "    if (occupancy < 1) occupancy = 1;\n"
            "  }}\n"
            "  p.splits = ucut_simt::one_wave_splits(occupancy, sms, {2}LL, {3}, p.r_total, &p.r_chunk);\n",
            kernel, pl.threads, n_out / run * tiles, pl.splits);
      d += fmt::format("  {}\n      <<<dim3({}, p.splits), {}, 0, args.stream>>>(p, {}, {});\n", kernel,
                       n_out / run * tiles, pl.threads, pro->init, epi_init);
    }
  }
  d += simt_launch_check(label);
  if (pl.splits > 1 && !clustered) {  // a cluster combines its splits in the kernel
    // The outer kernel picks its split count at run time (one wave): it may end up unsplit.
    const std::string indent = inner ? "  " : "    ";
    if (!inner) d += "  if (p.splits > 1) {\n";
    d += fmt::format("{}ucut_simt::reduce_finalize_kernel<ucut_simt::{}, {}><<<{}, 256, 0, args.stream>>>(p, {});\n",
                     indent, op_id, epi_t, (n_out + 7) / 8, epi_init);
    d += simt_launch_check(label);
    if (!inner) d += "  }\n";
  }
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace ucut::codegen
