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
  // Index arithmetic in 32 bits where every offset fits (64-bit division and multiplication cost
  // several instructions each, and a window's taps are a few instructions apiece).
  const bool narrow = dsl::window_fits_int32(*w);
  const std::string IT = narrow ? "int" : "long long", L = narrow ? "" : "LL";
  // the first output's position: (n, c, o0, o1, o2)
  d += fmt::format("    const {0} base = ({0})g * {1};\n", IT, I);
  d += fmt::format("    const {0} o2b = base % {1}{4}, o1 = base / {1}{4} % {2}{4}, o0 = base / {3}{4} % {5}{4};\n", IT,
                   o[2], o[1], o[2] * o[1], L, o[0]);
  d += fmt::format("    const {0} nc = base / {1}{3}, c = nc % {2}{3};\n", IT, o[0] * o[1] * o[2], w->out_channels, L);
  d += fmt::format("    const {}* xp = static_cast<const {}*>(p.x) + (nc / {}{} * {}{} + c / {}{}) * {}{};\n", xt, xt,
                   w->out_channels, L, w->channels, L, w->mult, L, in[0] * in[1] * in[2], L);
  if (bt) d += fmt::format("    const float bias = ucut_simt::ld<{}>(p.b, c);\n", simt_cuda_type(bt->dtype));
  // avg's divisor with count_include_pad: the window inside the padded input
  const bool sized = w->op == "avg" && w->count_include_pad && w->divisor == 0;
  const std::string init = w->op == "max" ? "-INFINITY" : "0.f";
  // one tap into `acc`: v is x's element, (t0, t1, t2) its place in the window
  auto tap = [&](const std::string& indent, const std::string& acc) {
    if (w->op == "max")
      return indent + acc + " = (v > " + acc + " || isnan(v)) ? v : " + acc + ";  // NaN propagates, as PyTorch's max_pool\n";
    if (w->op == "sum")
      return indent + fmt::format("{0} = fmaf(v, ucut_simt::ld<{1}>(p.w, ((c * {2}{5} + t0) * {3}{5} + t1) * {4}{5} + t2), {0});\n",
                                  acc, simt_cuda_type(wt->dtype), k[0], k[1], k[2], L);
    return indent + acc + " += v;\n";
  };
  const std::string consts =
      fmt::format("    const {0} IN[3] = {{{1}{4}, {2}{4}, {3}{4}}};\n", IT, in[0], in[1], in[2], L) +
      (adaptive ? fmt::format("    const {0} OUT[3] = {{{1}{4}, {2}{4}, {3}{4}}};\n", IT, o[0], o[1], o[2], L)
                : fmt::format("    const {0} K[3] = {{{1}{4}, {2}{4}, {3}{4}}}, S[3] = {{{5}{4}, {6}{4}, {7}{4}}};\n", IT, k[0],
                              k[1], k[2], L, sd[0], sd[1], sd[2]) +
                      fmt::format("    const {0} D[3] = {{{1}{4}, {2}{4}, {3}{4}}}, LO[3] = {{{5}{4}, {6}{4}, {7}{4}}};\n", IT,
                                  dl[0], dl[1], dl[2], L, lo[0], lo[1], lo[2]) +
                      (sized ? fmt::format("    const {0} HI[3] = {{{1}{4}, {2}{4}, {3}{4}}};\n", IT, hi[0], hi[1], hi[2], L)
                             : std::string()));
  // Output u of the thread's run, one window at a time, its taps inside x only (padding costs no
  // test): the window's first input index along each dim, its taps [tlo, thi), the step; leaves
  // the result, divided for avg, in `a`.
  auto clipped = [&](const std::string& n) {
    std::string t = n + fmt::format("const {} oi[3] = {{o0, o1, o2b + u}};\n", IT);
    t += n + fmt::format("{} first[3], tlo[3], thi[3];\n", IT);
    if (sized) t += n + "float size = 1.f;\n";
    t += "#pragma unroll\n" + n + "for (int q = 0; q < 3; ++q) {\n";
    if (adaptive) {
      t += n + "  first[q] = oi[q] * IN[q] / OUT[q];\n" + n + "  tlo[q] = 0;\n" + n +
           "  thi[q] = ((oi[q] + 1) * IN[q] + OUT[q] - 1) / OUT[q] - first[q];\n";
    } else {
      t += n + "  first[q] = oi[q] * S[q] - LO[q];\n" + n + "  // taps t with 0 <= first + t*D < IN\n" + n +
           "  tlo[q] = first[q] < 0 ? (-first[q] + D[q] - 1) / D[q] : 0;\n" + n +
           "  thi[q] = IN[q] - first[q] <= 0 ? 0 : min(K[q], (IN[q] - first[q] + D[q] - 1) / D[q]);\n";
      if (sized) t += n + "  size *= (float)(min(first[q] + K[q], IN[q] + HI[q]) - first[q]);\n";
    }
    t += n + "}\n" + n + "float a = " + init + ";\n";
    t += n + fmt::format("for ({} t0 = tlo[0]; t0 < thi[0]; ++t0) {{\n", IT);
    t += n + fmt::format("  const {} r0 = (first[0] + t0 * {}{}) * {}{};\n", IT, adaptive ? 1 : dl[0], L, in[1], L);
    t += n + fmt::format("  for ({} t1 = tlo[1]; t1 < thi[1]; ++t1) {{\n", IT);
    t += n + fmt::format("    const {} r1 = (r0 + first[1] + t1 * {}{}) * {}{} + first[2];\n", IT, adaptive ? 1 : dl[1], L,
                         in[2], L);
    // a warp's lanes split each row of the window (consecutive inputs: coalesced)
    t += n + (warp ? fmt::format("    for ({} t2 = tlo[2] + lane; t2 < thi[2]; t2 += 32) {{\n", IT)
                   : fmt::format("    for ({} t2 = tlo[2]; t2 < thi[2]; ++t2) {{\n", IT));
    t += n + fmt::format("      const float v = ucut_simt::to_f<{}>(xp[r1 + t2 * {}{}]);\n", xt, adaptive ? 1 : dl[2], L);
    t += tap(n + "      ", "a");
    t += n + "    }\n" + n + "  }\n" + n + "}\n";
    if (warp) {
      t += "#pragma unroll\n" + n + "for (int m = 16; m > 0; m >>= 1) {\n" + n +
           "  const float b = __shfl_xor_sync(0xffffffffu, a, m);\n";
      t += n + (w->op == "max" ? "  a = (b > a || isnan(b)) ? b : a;\n" : "  a += b;\n");
      t += n + "}\n" + n + "if (lane != 0) continue;  // lane 0 writes the output\n";
    }
    if (w->op == "avg" && w->divisor == 0)
      t += n + (w->count_include_pad ? "a /= size;\n" : "a /= (float)((thi[0] - tlo[0]) * (thi[1] - tlo[1]) * (thi[2] - tlo[2]));\n");
    if (adaptive) t += n + "a /= (float)(thi[0] * thi[1] * thi[2]);\n";
    return t;
  };
  // the rest of output u from `a`: divisor_override, the bias, the epilogue and the store
  auto finish = [&](const std::string& n) {
    std::string t;
    if (w->op == "avg" && w->divisor > 0) t += n + fmt::format("a /= {}.f;  // divisor_override\n", w->divisor);
    if (bt) t += n + "a += bias;\n";
    t += n + fmt::format("const {} at = base + u;\n", IT);
    t += n + "{\n" + epi;
    t += n + fmt::format("  static_cast<{0}*>(p.o)[at] = ucut_simt::from_f<{0}>({1});\n", simt_cuda_type(out->dtype), result);
    t += n + "}\n";
    return t;
  };
  if (adaptive || warp) {
    d += consts;
    d += fmt::format("#pragma unroll\n    for (int u = 0; u < {}; ++u) {{\n", I);
    d += clipped("      ") + finish("      ");
    d += "    }\n";
  } else {
    // Where the windows of all the thread's outputs lie wholly inside x (most of them), their taps
    // sit at offsets fixed in the text from one base: one load a tap, no bounds, and a load two
    // outputs share (overlapping windows) is made once, as nothing is stored in between. The
    // others take the clipped walk.
    const int64_t taps = k[0] * k[1] * k[2];
    d += consts;
    d += fmt::format("    const {} f0 = o0 * S[0] - LO[0], f1 = o1 * S[1] - LO[1], f2 = o2b * S[2] - LO[2];\n", IT);
    d += fmt::format("    float acc[{}];\n", I);
    d += fmt::format("    if (f0 >= 0 && f0 + (K[0] - 1) * D[0] < IN[0] && f1 >= 0 && f1 + (K[1] - 1) * D[1] < IN[1] &&\n"
                     "        f2 >= 0 && f2 + {} * S[2] + (K[2] - 1) * D[2] < IN[2]) {{\n", I - 1);
    d += fmt::format("      const {}* xq = xp + (f0 * {}{} + f1) * {}{} + f2;\n", xt, in[1], L, in[2], L);
    d += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) acc[u] = {};\n", I, init);
    // straight-line code where the window is small enough
    const std::string outer = taps <= 64 ? "#pragma unroll\n" : "#pragma unroll 1\n";
    const std::string inner = k[2] * I <= 128 ? "#pragma unroll\n" : "#pragma unroll 4\n";
    d += outer + fmt::format("      for (int t0 = 0; t0 < {}; ++t0) {{\n", k[0]);
    d += outer + fmt::format("        for (int t1 = 0; t1 < {}; ++t1) {{\n", k[1]);
    d += fmt::format("#pragma unroll\n          for (int u = 0; u < {}; ++u) {{\n", I);
    d += inner + fmt::format("            for (int t2 = 0; t2 < {}; ++t2) {{\n", k[2]);
    d += fmt::format("              const float v = ucut_simt::to_f<{}>(xq[(t0 * {}{} + t1 * {}{}) * {}{} + u * {}{} + t2 * {}{}]);\n",
                     xt, dl[0] * in[1], L, dl[1], L, in[2], L, sd[2], L, dl[2], L);
    d += tap("              ", "acc[u]");
    d += "            }\n          }\n        }\n      }\n";
    if (w->op == "avg" && w->divisor == 0)
      d += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) acc[u] /= {}.f;  // every tap is inside x\n", I,
                       taps);
    d += "    } else {\n";
    d += fmt::format("#pragma unroll\n      for (int u = 0; u < {}; ++u) {{\n", I);
    d += clipped("        ") + "        acc[u] = a;\n      }\n    }\n";
    d += fmt::format("#pragma unroll\n    for (int u = 0; u < {}; ++u) {{\n      float a = acc[u];\n", I);
    d += finish("      ");
    d += "    }\n";
  }
  d += "  }\n}\n";
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
