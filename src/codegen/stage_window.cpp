// codegen_emit_window: a window stage (dsl::WindowStage: max / avg / adaptive avg pooling, a
// depthwise conv as a weighted sum) as one generated grid-stride kernel over the channels-first
// output. Each thread computes `items` consecutive outputs along the last dim: for each, it walks
// the taps of its window inside x (the clipped tap range along each dim, so padding costs no
// test), accumulating in fp32, then applies the bias, the epilogue and the store. Neighbouring
// threads read neighbouring (overlapping) windows, so the warp's loads are coalesced and repeated
// taps hit L1. Large windows (global and large adaptive pools, dsl/window_rules.h) take a warp an
// output instead: the lanes split each row of the window, then combine by shuffles. Every shape and setting is a constant of the text; spatial dims are padded to three
// (leading dims of size 1), as the interpreter does.
#include <fmt/format.h>

#include "codegen/functors.h"
#include "codegen/simt_common.h"
#include "codegen/stage_emitter.h"
#include "dsl/window_rules.h"

namespace ucut::codegen {

Result<StageCode> codegen_emit_window(const dsl::Program& program, int stage_index) {
  const dsl::Stage& stage = simt_stage(program, stage_index);
  const auto* w = std::get_if<dsl::WindowStage>(&stage.body);
  if (!w) return make_error(ErrorCode::internal, "codegen_emit_window called on a non-window stage");
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  const dsl::Tensor* out = program.find_tensor(stage.outputs.at(0));
  const dsl::Tensor* x = program.find_tensor(w->x);
  if (!out || !x) return make_error(ErrorCode::invalid_input, label + ": unknown input or output tensor");
  auto plan = dsl::window_plan(*w);
  if (!plan) return make_error(plan.error().code, label + ": " + plan.error().message, plan.error().hint);
  const dsl::WindowPlan& pl = *plan;
  const int I = pl.items;
  const bool adaptive = w->op == "adaptive_avg";

  // sizes padded to three spatial dims
  const size_t r = static_cast<size_t>(w->rank);
  int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1}, k[3] = {1, 1, 1}, sd[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
          lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    in[j] = w->in_size[i], o[j] = w->out_size[i];
    if (!adaptive)
      k[j] = w->window[i], sd[j] = w->stride[i], dl[j] = w->dilation[i], lo[j] = w->pad_lo[i], hi[j] = w->pad_hi[i];
  }

  // the epilogue: lets and one store over acc (the reduced value, after the bias), its full
  // loads broadcast to the output's shape
  std::vector<std::string> fields, scalars;
  auto render_load = [&](const dsl::Expr& e, const std::string& field, const dsl::Tensor& t) -> Result<std::string> {
    if (e.mode != dsl::LoadMode::full || t.role == dsl::TensorRole::view)
      return make_error(ErrorCode::internal, label + ": a window epilogue reads whole declared tensors ('" + t.name + "')");
    return fmt::format("ucut_simt::ld<{}>(p.{}, {})", simt_cuda_type(t.dtype), field, simt_broadcast_offset(out->shape, t.shape, "at"));
  };
  ExprEnv env{&program, "a", "window epilogue of " + label, &fields, &scalars, render_load, {}};
  std::string epi;
  std::string result = "a";
  for (const auto& st : w->epilogue.stmts) {
    if (st.kind == dsl::EpilogueStmt::Kind::reduce)
      return make_error(ErrorCode::internal, label + ": a reduction in a window epilogue");
    auto v = simt_render_expr(*st.value, env);
    if (!v) return v.error();
    if (st.kind == dsl::EpilogueStmt::Kind::let) epi += "        const float l_" + st.name + " = " + *v + ";\n";
    else result = *v;
  }

  StageCode code;
  code.includes = {"simt_common.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  code.config_name = fmt::format("window_{}_t{}_i{}{}", w->op, pl.threads, I, pl.lanes == 32 ? "_warp" : "");
  const std::string xt = simt_cuda_type(x->dtype);
  const dsl::Tensor* wt = w->weight.empty() ? nullptr : program.find_tensor(w->weight);
  const dsl::Tensor* bt = w->bias.empty() ? nullptr : program.find_tensor(w->bias);

  std::string d = simt_banner(program, stage_index, "window " + w->op);
  d += "struct " + pre + "params {\n  const void* x;  // " + x->name + "\n";
  if (wt) d += "  const void* w;  // " + wt->name + "\n";
  if (bt) d += "  const void* b;  // " + bt->name + "\n";
  for (size_t i = 0; i < fields.size(); ++i) d += fmt::format("  const void* t{};  // {}\n", i, fields[i]);
  for (size_t i = 0; i < scalars.size(); ++i) d += fmt::format("  float s{};  // {}\n", i, scalars[i]);
  d += "  void* o;  // " + out->name + "\n};\n";
  d += fmt::format("__global__ void __launch_bounds__({0}) {1}kernel({1}params p) {{\n", pl.threads, pre);
  const bool warp = pl.lanes == 32;
  if (warp) {
    // a warp an output: every lane of a warp takes the same g (the shuffles below need all 32)
    d += "  const int lane = threadIdx.x & 31;\n";
    d += fmt::format("  for (long long g = ((long long)blockIdx.x * {0} + threadIdx.x) >> 5; g < {1}LL; g += (long long)gridDim.x * {2}) {{\n",
                     pl.threads, pl.groups, pl.threads / 32);
  } else {
    d += fmt::format("  for (long long g = (long long)blockIdx.x * {0} + threadIdx.x; g < {1}LL; g += (long long)gridDim.x * {0}) {{\n",
                     pl.threads, pl.groups);
  }
  // the first output's position: (n, c, o0, o1, o2)
  d += fmt::format("    const long long base = g * {};\n", I);
  d += fmt::format("    const long long o2b = base % {0}LL, o1 = base / {0}LL % {1}LL, o0 = base / {2}LL % {3}LL;\n",
                   o[2], o[1], o[2] * o[1], o[0]);
  d += fmt::format("    const long long nc = base / {}LL, c = nc % {}LL;\n", o[0] * o[1] * o[2], w->out_channels);
  d += fmt::format("    const {}* xp = static_cast<const {}*>(p.x) + (nc / {}LL * {}LL + c / {}LL) * {}LL;\n", xt, xt,
                   w->out_channels, w->channels, w->mult, in[0] * in[1] * in[2]);
  if (bt) d += fmt::format("    const float bias = ucut_simt::ld<{}>(p.b, c);\n", simt_cuda_type(bt->dtype));
  d += fmt::format("#pragma unroll\n    for (int u = 0; u < {}; ++u) {{\n", I);
  d += "      const long long oi[3] = {o0, o1, o2b + u};\n";
  // the window along each dim: its first input index, its taps [tlo, thi) inside x, the step
  d += "      long long first[3], tlo[3], thi[3];\n";
  // avg's divisor with count_include_pad: the window inside the padded input
  const bool sized = w->op == "avg" && w->count_include_pad && w->divisor == 0;
  if (sized) d += "      float size = 1.f;\n";
  d += fmt::format("      const long long IN[3] = {{{}LL, {}LL, {}LL}};\n", in[0], in[1], in[2]);
  if (adaptive) {
    d += fmt::format("      const long long OUT[3] = {{{}LL, {}LL, {}LL}};\n", o[0], o[1], o[2]);
    d += "#pragma unroll\n      for (int q = 0; q < 3; ++q) {\n"
         "        first[q] = oi[q] * IN[q] / OUT[q];\n"
         "        tlo[q] = 0;\n"
         "        thi[q] = ((oi[q] + 1) * IN[q] + OUT[q] - 1) / OUT[q] - first[q];\n"
         "      }\n";
  } else {
    d += fmt::format("      const long long K[3] = {{{}LL, {}LL, {}LL}}, S[3] = {{{}LL, {}LL, {}LL}}, D[3] = {{{}LL, {}LL, {}LL}};\n",
                     k[0], k[1], k[2], sd[0], sd[1], sd[2], dl[0], dl[1], dl[2]);
    d += fmt::format("      const long long LO[3] = {{{}LL, {}LL, {}LL}};\n", lo[0], lo[1], lo[2]);
    if (sized) d += fmt::format("      const long long HI[3] = {{{}LL, {}LL, {}LL}};\n", hi[0], hi[1], hi[2]);
    d += "#pragma unroll\n      for (int q = 0; q < 3; ++q) {\n"
         "        first[q] = oi[q] * S[q] - LO[q];\n"
         "        // taps t with 0 <= first + t*D < IN\n"
         "        tlo[q] = first[q] < 0 ? (-first[q] + D[q] - 1) / D[q] : 0;\n"
         "        thi[q] = IN[q] - first[q] <= 0 ? 0 : min(K[q], (IN[q] - first[q] + D[q] - 1) / D[q]);\n";
    if (sized) d += "        size *= (float)(min(first[q] + K[q], IN[q] + HI[q]) - first[q]);\n";
    d += "      }\n";
  }
  d += std::string("      float a = ") + (w->op == "max" ? "-INFINITY" : "0.f") + ";\n";
  d += "      for (long long t0 = tlo[0]; t0 < thi[0]; ++t0) {\n";
  d += fmt::format("        const long long r0 = (first[0] + t0 * {}LL) * {}LL;\n", adaptive ? 1 : dl[0], in[1]);
  d += "        for (long long t1 = tlo[1]; t1 < thi[1]; ++t1) {\n";
  d += fmt::format("          const long long r1 = (r0 + first[1] + t1 * {}LL) * {}LL + first[2];\n", adaptive ? 1 : dl[1], in[2]);
  // a warp's lanes split each row of the window (consecutive inputs: coalesced)
  d += warp ? "          for (long long t2 = tlo[2] + lane; t2 < thi[2]; t2 += 32) {\n"
            : "          for (long long t2 = tlo[2]; t2 < thi[2]; ++t2) {\n";
  d += fmt::format("            const float v = ucut_simt::to_f<{}>(xp[r1 + t2 * {}LL]);\n", xt, adaptive ? 1 : dl[2]);
  if (w->op == "max") {
    d += "            a = (v > a || isnan(v)) ? v : a;  // NaN propagates, as PyTorch's max_pool\n";
  } else if (w->op == "sum") {
    d += fmt::format("            a = fmaf(v, ucut_simt::ld<{}>(p.w, ((c * {}LL + t0) * {}LL + t1) * {}LL + t2), a);\n",
                     simt_cuda_type(wt->dtype), k[0], k[1], k[2]);
  } else {
    d += "            a += v;\n";
  }
  d += "          }\n        }\n      }\n";
  if (warp) {
    d += "#pragma unroll\n      for (int m = 16; m > 0; m >>= 1) {\n"
         "        const float b = __shfl_xor_sync(0xffffffffu, a, m);\n";
    d += w->op == "max" ? "        a = (b > a || isnan(b)) ? b : a;\n" : "        a += b;\n";
    d += "      }\n      if (lane != 0) continue;  // lane 0 writes the output\n";
  }
  if (w->op == "avg") {
    if (w->divisor > 0)
      d += fmt::format("      a /= {}.f;  // divisor_override\n", w->divisor);
    else if (w->count_include_pad)
      d += "      a /= size;\n";
    else
      d += "      a /= (float)((thi[0] - tlo[0]) * (thi[1] - tlo[1]) * (thi[2] - tlo[2]));\n";
  } else if (adaptive) {
    d += "      a /= (float)(thi[0] * thi[1] * thi[2]);\n";
  }
  if (bt) d += "      a += bias;\n";
  d += "      const long long at = base + u;\n";
  d += "      {\n" + epi;
  d += fmt::format("        static_cast<{0}*>(p.o)[at] = ucut_simt::from_f<{0}>({1});\n", simt_cuda_type(out->dtype), result);
  d += "      }\n    }\n  }\n}\n";
  // launcher
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  d += fmt::format("  {}params p{{}};\n", pre);
  d += fmt::format("  p.x = args.tensors[{}];\n", simt_tensor_index(program, x->name));
  if (wt) d += fmt::format("  p.w = args.tensors[{}];\n", simt_tensor_index(program, wt->name));
  if (bt) d += fmt::format("  p.b = args.tensors[{}];\n", simt_tensor_index(program, bt->name));
  for (size_t i = 0; i < fields.size(); ++i)
    d += fmt::format("  p.t{} = args.tensors[{}];\n", i, simt_tensor_index(program, fields[i]));
  for (size_t i = 0; i < scalars.size(); ++i)
    d += fmt::format("  p.s{} = static_cast<float>(args.scalars[{}]);\n", i, simt_scalar_index(program, scalars[i]));
  d += fmt::format("  p.o = args.tensors[{}];\n", simt_tensor_index(program, out->name));
  d += fmt::format("  {}kernel<<<{}, {}, 0, args.stream>>>(p);\n", pre, pl.blocks, pl.threads);
  d += simt_launch_check(label);
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace ucut::codegen
