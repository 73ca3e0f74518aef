// codegen_emit_scan: a scan stage (cumsum/cumprod, inclusive or exclusive, forward or reverse,
// optional mask) as ucut_simt::scan_row_kernel when the scanned dim is the last one, else
// scan_strided_kernel over the [outer, len, inner] view; `order torch` as scan_row_torch_kernel
// (runtime/simt_scan.cuh).
#include <fmt/format.h>

#include <algorithm>

#include "codegen/simt_common.h"
#include "dsl/simt_plan.h"
#include "codegen/stage_emitter.h"

namespace ucut::codegen {

Result<StageCode> codegen_emit_scan(const dsl::Program& program, int stage_index) {
  const dsl::Stage& stage = simt_stage(program, stage_index);
  const auto* sc = std::get_if<dsl::ScanStage>(&stage.body);
  if (!sc) return make_error(ErrorCode::internal, "codegen_emit_scan called on a non-scan stage");
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  if (sc->op != "cumsum" && sc->op != "cumprod")
    return make_error(ErrorCode::unsupported, label + ": unknown scan op '" + sc->op + "'",
                      "scan ops: cumsum, cumprod");
  const dsl::Tensor* x = program.find_tensor(sc->input);
  if (!x) return make_error(ErrorCode::invalid_input, label + ": unknown input tensor '" + sc->input + "'");
  if (!simt_is_float(x->dtype))
    return make_error(ErrorCode::unsupported, label + ": scan input '" + x->name + "' must be f32, f16 or bf16");
  if (x->shape.empty() || x->numel() == 0)
    return make_error(ErrorCode::invalid_input, label + ": scan input '" + x->name + "' is empty or a scalar");
  if (stage.outputs.empty()) return make_error(ErrorCode::internal, label + ": stage has no output");
  const dsl::Tensor* out = program.find_tensor(stage.outputs[0]);
  if (!out) return make_error(ErrorCode::invalid_input, label + ": unknown output tensor '" + stage.outputs[0] + "'");
  if (out->numel() != x->numel() || !simt_is_float(out->dtype))
    return make_error(ErrorCode::invalid_input,
                      label + ": output '" + out->name + "' must be a float tensor of the input's shape");
  const dsl::Tensor* mask = nullptr;
  if (!sc->mask.empty()) {
    mask = program.find_tensor(sc->mask);
    if (!mask) return make_error(ErrorCode::invalid_input, label + ": unknown mask tensor '" + sc->mask + "'");
    if (mask->numel() != x->numel())
      return make_error(ErrorCode::invalid_input,
                        label + ": mask '" + mask->name + "' must have the input's shape",
                        "broadcast it in an elementwise stage first");
  }
  const int rank = static_cast<int>(x->shape.size());
  const int dim = sc->dim < 0 ? sc->dim + rank : sc->dim;
  if (dim < 0 || dim >= rank)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{}: dim {} is out of range for '{}' of rank {}", label, sc->dim, x->name, rank));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < dim; ++i) outer *= x->shape[i];
  for (int i = dim + 1; i < rank; ++i) inner *= x->shape[i];
  const int64_t len = x->shape[dim];
  const std::string op = sc->op == "cumsum" ? "ucut_simt::kCumsum" : "ucut_simt::kCumprod";
  const std::string in_t = simt_cuda_type(x->dtype), out_t = simt_cuda_type(out->dtype);
  const std::string mask_t = mask ? simt_cuda_type(mask->dtype) : "bool";

  StageCode code;
  code.includes = {"simt_scan.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  std::string d = simt_banner(program, stage_index, "scan " + sc->op);
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  d += "  ucut_simt::ScanParams p{};\n";
  d += fmt::format("  p.x = args.tensors[{}];  // {}\n", simt_tensor_index(program, x->name), x->name);
  if (mask) d += fmt::format("  p.mask = args.tensors[{}];  // {}\n", simt_tensor_index(program, mask->name), mask->name);
  d += fmt::format("  p.out = args.tensors[{}];  // {}\n", simt_tensor_index(program, out->name), out->name);
  const char* excl = sc->exclusive ? "true" : "false";
  const char* rev = sc->reverse ? "true" : "false";
  if (inner == 1) {
    const int64_t rows = outer, cols = len;
    int bytes = std::max(dsl::dtype_bytes(x->dtype), dsl::dtype_bytes(out->dtype));
    auto plan = dsl::simt_plan_scan(rows, cols, bytes, sc->knobs);
    if (!plan) return make_error(plan.error().code, label + ": " + plan.error().message, plan.error().hint);
    const dsl::ScanPlan& pl = *plan;
    d += fmt::format("  p.rows = {}LL;\n  p.cols = {}LL;\n", rows, cols);
    if (pl.torch) {
      const int warps = pl.threads / 32;
      code.config_name = fmt::format("scan_{}_row_torch_w{}_u{}{}{}", sc->op, warps, pl.items,
                                     sc->exclusive ? "_excl" : "", sc->reverse ? "_rev" : "");
      d += "  // order torch: PyTorch's fp32 row-scan order, a warp a row (runtime/simt_scan.cuh)\n";
      const int64_t grid = std::min<int64_t>((rows + warps - 1) / warps, 1 << 20);
      auto launch = [&](bool vec) {
        return fmt::format("ucut_simt::scan_row_torch_kernel<{}, {}, {}, {}, {}, {}, {}, {}, {}>\n"
                           "        <<<{}, {}, 0, args.stream>>>(p);\n",
                           op, mask_t, mask ? "true" : "false", excl, rev, warps, pl.items, pl.stages,
                           vec ? "true" : "false", grid, pl.threads);
      };
      // 16-byte copies where every row starts 16-byte aligned (the mask's rows too)
      if (cols % 4 == 0 && (!mask || cols % 16 == 0))
        d += fmt::format("  if (ucut_simt::aligned(p.x, 16){})\n    {}  else\n    {}",
                         mask ? " && ucut_simt::aligned(p.mask, 16)" : "", launch(true), launch(false));
      else
        d += "  " + launch(false);
    } else {
      code.config_name = fmt::format("scan_{}_row_t{}_i{}_v{}{}{}", sc->op, pl.threads, pl.items, pl.vec,
                                     sc->exclusive ? "_excl" : "", sc->reverse ? "_rev" : "");
      d += fmt::format(
          "  if (!ucut_simt::aligned(p.x, {0}) || !ucut_simt::aligned(p.out, {1}) || (p.mask && "
          "!ucut_simt::aligned(p.mask, {2}))) {{\n"
          "    ucut_rt::set_error(\"{3}: scan tensors must be aligned to {4} elements\");\n    return 2;\n  }}\n",
          pl.vec * dsl::dtype_bytes(x->dtype), pl.vec * dsl::dtype_bytes(out->dtype),
          pl.vec * (mask ? dsl::dtype_bytes(mask->dtype) : 1), label, pl.vec);
      d += fmt::format(
          "  ucut_simt::scan_row_kernel<{}, {}, {}, {}, {}, {}, {}, {}, {}>\n"
          "      <<<{}, {}, 0, args.stream>>>(p);\n",
          op, in_t, mask_t, out_t, pl.threads, pl.items, pl.vec, excl, rev, rows, pl.threads);
    }
  } else {
    code.config_name = fmt::format("scan_{}_strided{}{}", sc->op, sc->exclusive ? "_excl" : "",
                                   sc->reverse ? "_rev" : "");
    d += fmt::format("  p.outer = {}LL;\n  p.len = {}LL;\n  p.inner = {}LL;\n", outer, len, inner);
    d += fmt::format(
        "  ucut_simt::scan_strided_kernel<{}, {}, {}, {}, {}, {}>\n"
        "      <<<{}, 256, 0, args.stream>>>(p);\n",
        op, in_t, mask_t, out_t, excl, rev, (outer * inner + 255) / 256);
  }
  d += simt_launch_check(label);
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace ucut::codegen
