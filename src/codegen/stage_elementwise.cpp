// codegen_emit_elementwise: an elementwise stage (lets and stores of epilogue-vocabulary
// expressions over tensors broadcast to the output shape, numpy rules) as one generated
// grid-stride kernel. Each thread handles VEC consecutive outputs: inputs of the output's shape
// (or broadcast only in outer dims) are read as one vector, inputs broadcast along the last dim
// as one scalar, and each output is written as one vector (16-byte accesses). A stage that reads a
// permuting view (a layout copy: NCHW <-> NHWC) takes the permuting form instead (emit_permuting):
// tiles through shared memory, docs/language.md "Convolution".
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/functors.h"
#include "codegen/simt_common.h"
#include "dsl/simt_plan.h"
#include "codegen/stage_emitter.h"

namespace ucut::codegen {
namespace {

struct LoadInfo {
  const dsl::Tensor* tensor = nullptr;
  dsl::LoadMode mode = dsl::LoadMode::full;
};

// The body of a tiled form (the transposing and the permuting one): lets as locals, each store at
// the element's flat index `at` in its output's dtype; `stores` gets the outputs in order.
Result<std::string> render_tiled_body(const dsl::Program& program, const dsl::ElementwiseStage& es,
                                      const dsl::Tensor& out0, const ExprEnv& env, const std::string& label,
                                      std::vector<const dsl::Tensor*>& stores) {
  std::string body;
  for (const auto& st : es.body.stmts) {
    if (st.kind == dsl::EpilogueStmt::Kind::reduce)
      return make_error(ErrorCode::internal, label + ": a reduction in a tiled elementwise stage");
    auto v = simt_render_expr(*st.value, env);
    if (!v) return v.error();
    if (st.kind == dsl::EpilogueStmt::Kind::let) {
      body += "        const float l_" + st.name + " = " + *v + ";\n";
      continue;
    }
    const dsl::Tensor* t = program.find_tensor(st.name);
    if (!t || t->numel() != out0.numel())
      return make_error(ErrorCode::internal, label + ": output '" + st.name + "' is not of the stage's shape");
    body += fmt::format("        static_cast<{0}*>(p.o{1})[at] = ucut_simt::from_f<{0}>({2});\n",
                        simt_cuda_type(t->dtype), stores.size(), *v);
    stores.push_back(t);
  }
  if (stores.empty()) return make_error(ErrorCode::internal, label + ": the elementwise stage stores nothing");
  return body;
}

// The kernel's parameter struct: input pointers t<i>, runtime scalars s<i>, output pointers o<i>.
std::string params_struct(const std::string& pre, const std::vector<std::string>& fields,
                          const std::vector<std::string>& scalars, const std::vector<std::string>& outputs) {
  std::string d = "struct " + pre + "params {\n";
  for (size_t i = 0; i < fields.size(); ++i) d += fmt::format("  const void* t{};  // {}\n", i, fields[i]);
  for (size_t i = 0; i < scalars.size(); ++i) d += fmt::format("  float s{};  // {}\n", i, scalars[i]);
  for (size_t i = 0; i < outputs.size(); ++i) d += fmt::format("  void* o{};  // {}\n", i, outputs[i]);
  return d + "};\n";
}

// The launcher's opening: the params struct filled from StageArgs (inputs, scalars, outputs).
std::string bind_params(const dsl::Program& program, const std::string& pre, const std::vector<std::string>& fields,
                        const std::vector<std::string>& scalars, const std::vector<std::string>& outputs) {
  std::string d = fmt::format("  {}params p{{}};\n", pre);
  for (size_t i = 0; i < fields.size(); ++i)
    d += fmt::format("  p.t{} = args.tensors[{}];\n", i, simt_tensor_index(program, fields[i]));
  for (size_t i = 0; i < scalars.size(); ++i)
    d += fmt::format("  p.s{} = static_cast<float>(args.scalars[{}]);\n", i, simt_scalar_index(program, scalars[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    d += fmt::format("  p.o{} = args.tensors[{}];\n", i, simt_tensor_index(program, outputs[i]));
  return d;
}

std::vector<std::string> names_of(const std::vector<const dsl::Tensor*>& ts) {
  std::vector<std::string> out;
  for (const auto* t : ts) out.push_back(t->name);
  return out;
}

// The transposing form (ElementwiseStage::transpose, the f32x3s split of a non-K-major operand):
// each block moves 32 x 32 tiles through shared memory, reading the inputs along their rows and
// writing the outputs along theirs (both coalesced), every element once.
Result<StageCode> emit_transposed(const dsl::Program& program, int stage_index, const dsl::ElementwiseStage& es,
                                  const dsl::Tensor& out0) {
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  const auto& os = out0.shape;
  if (os.size() < 2)
    return make_error(ErrorCode::internal, label + ": a transposing elementwise stage needs a matrix output");
  const int64_t rows = os[os.size() - 2], cols = os.back(), mat = rows * cols, batch = out0.numel() / mat;
  std::vector<int64_t> ishape = os;
  std::swap(ishape[ishape.size() - 1], ishape[ishape.size() - 2]);
  std::vector<std::string> fields, scalars;
  auto render_load = [&](const dsl::Expr& e, const std::string& field, const dsl::Tensor& t) -> Result<std::string> {
    if (e.mode != dsl::LoadMode::full || t.shape != ishape)
      return make_error(ErrorCode::internal, label + ": a transposing elementwise stage reads only full inputs of "
                                                 "the output's shape with its last two dims swapped ('" + t.name + "')");
    return field + "x";
  };
  const IndexExprs index = simt_matrix_index(os, fmt::format("(b * {}LL + r)", rows), "c");
  ExprEnv env{&program, "", "elementwise " + label, &fields, &scalars, render_load, index};
  std::vector<const dsl::Tensor*> stores;
  auto rendered = render_tiled_body(program, es, out0, env, label, stores);
  if (!rendered) return rendered.error();
  const std::string& body = *rendered;
  const int64_t tiles_r = (rows + 31) / 32, tiles_c = (cols + 31) / 32;
  StageCode code;
  code.includes = {"simt_common.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  code.config_name = "elementwise_transpose_t256";
  std::string d = simt_banner(program, stage_index, "elementwise (transposing)");
  d += params_struct(pre, fields, scalars, names_of(stores));
  // block (32, 8): tile rows c0.., columns r0.. of the input [cols, rows]; then the output's
  // rows r0.., columns c0.. from the tile read down its columns (the +1 pad keeps banks apart)
  d += fmt::format("__global__ void __launch_bounds__(256) {}kernel({}params p) {{\n", pre, pre);
  for (size_t i = 0; i < fields.size(); ++i) d += fmt::format("  __shared__ float t{}s[32][33];\n", i);
  d += fmt::format("  const long long tile = blockIdx.x, b = tile / {0}LL, rt = tile % {0}LL;\n", tiles_r * tiles_c);
  d += fmt::format("  const long long r0 = rt % {}LL * 32, c0 = rt / {}LL * 32;\n", tiles_r, tiles_r);
  d += "  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n";
  d += "#pragma unroll\n  for (int k = 0; k < 32; k += 8) {\n";
  d += fmt::format("    const long long c = c0 + ty + k, r = r0 + tx;\n    if (c < {}LL && r < {}LL) {{\n", cols, rows);
  for (size_t i = 0; i < fields.size(); ++i)
    d += fmt::format("      t{0}s[ty + k][tx] = ucut_simt::ld<{1}>(p.t{0}, b * {2}LL + c * {3}LL + r);\n", i,
                     simt_cuda_type(program.find_tensor(fields[i])->dtype), mat, rows);
  d += "    }\n  }\n  __syncthreads();\n";
  d += "#pragma unroll\n  for (int k = 0; k < 32; k += 8) {\n";
  d += fmt::format("    const long long r = r0 + ty + k, c = c0 + tx;\n    if (r < {}LL && c < {}LL) {{\n", rows, cols);
  d += fmt::format("      const long long at = b * {}LL + r * {}LL + c;\n", mat, cols);
  for (size_t i = 0; i < fields.size(); ++i) d += fmt::format("      const float t{0}x = t{0}s[tx][ty + k];\n", i);
  d += "      {\n" + body + "      }\n    }\n  }\n}\n";
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  d += bind_params(program, pre, fields, scalars, names_of(stores));
  d += fmt::format("  {}kernel<<<{}, 256, 0, args.stream>>>(p);\n", pre, batch * tiles_r * tiles_c);
  d += simt_launch_check(label);
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

// The permuting form: a block per tj x tc tile of the merged output dims (j, last) at one position
// of the others. Phase 1 reads each permuting view along j (coalesced in the view) into shared
// memory; phase 2 walks the tile along the last dim (coalesced in the output), reads every other
// load at the element's position as the vector form would, and stores. No vectors: each element is
// read and written once. The stage's knobs (threads, vector width, items per thread) do not apply.
Result<StageCode> emit_permuting(const dsl::Program& program, int stage_index, const dsl::ElementwiseStage& es,
                                 const dsl::Tensor& out0, const dsl::PermuteTiling& pt) {
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  const std::vector<int64_t>& oshape = out0.shape;
  const int64_t numel = out0.numel(), last = oshape.back();
  const bool small = numel < (int64_t{1} << 31);
  std::vector<std::string> fields, scalars;
  std::map<std::string, LoadInfo> loads;
  auto render_load = [&](const dsl::Expr& e, const std::string& field, const dsl::Tensor& t) -> Result<std::string> {
    loads[field] = LoadInfo{&t, e.mode};  // the vector form checked the modes and extents
    return field + "x";
  };
  const IndexExprs index = simt_matrix_index(oshape, fmt::format("(at / {}LL)", last), fmt::format("(at % {}LL)", last));
  ExprEnv env{&program, "", "elementwise " + label, &fields, &scalars, render_load, index};
  std::vector<const dsl::Tensor*> stores;
  auto rendered = render_tiled_body(program, es, out0, env, label, stores);
  if (!rendered) return rendered.error();
  const std::string& body = *rendered;
  const size_t j = pt.j;
  const int64_t ej = pt.shape[j], ec = pt.c_extent(), tiles_j = (ej + pt.tj - 1) / pt.tj,
                tiles_c = (ec + pt.tc - 1) / pt.tc;
  // a tiled view's offset of c-run position `c`: one dim at its stride, or several walked from the last
  const std::vector<int64_t> run(pt.shape.begin() + static_cast<std::ptrdiff_t>(j) + 1, pt.shape.end());
  auto c_offset = [&](const std::vector<int64_t>& s) {
    if (run.size() == 1) return fmt::format("c * {}LL", s.back());
    const std::vector<int64_t> rs(s.begin() + static_cast<std::ptrdiff_t>(j) + 1, s.end());
    return simt_element_offset(run, run, rs, ec < (int64_t{1} << 31), "c");
  };
  const std::vector<int64_t> ostr = dsl::dsl_contiguous_strides(pt.shape);  // the output's merged strides
  std::map<std::string, std::vector<int64_t>> tiled;  // field -> merged strides
  for (const auto& [f, li] : loads)
    if (li.mode == dsl::LoadMode::full)
      if (auto s = dsl::simt_permute_strides(*li.tensor, out0, pt)) tiled[f] = *s;
  if (tiled.empty()) return make_error(ErrorCode::internal, label + ": a permuting stage without a permuting read");
  int64_t outer = 1;
  for (size_t d = 0; d < j; ++d) outer *= pt.shape[d];

  StageCode code;
  code.includes = {"simt_common.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  code.config_name = pt.name();
  std::string d = simt_banner(program, stage_index, "elementwise (permuting)");
  d += fmt::format("// merged dims [{}], tile {} (dim {}) x {} (the dims after it)\n", fmt::join(pt.shape, ", "), pt.tj, j,
                   pt.tc);
  d += params_struct(pre, fields, scalars, names_of(stores));
  d += fmt::format("__global__ void __launch_bounds__(256) {}kernel({}params p) {{\n", pre, pre);
  for (const auto& [f, s] : tiled) d += fmt::format("  __shared__ float {}s[{}][{}];\n", f, pt.tc, pt.tj + 1);
  d += fmt::format("  const long long tile = blockIdx.x;\n  const long long c0 = tile % {}LL * {}, j0 = tile / {}LL % {}LL * {};\n",
                   tiles_c, pt.tc, tiles_c, tiles_j, pt.tj);
  std::string bases = "ob = 0";
  for (const auto& [f, s] : tiled) bases += ", " + f + "b = 0";
  d += fmt::format("  long long o = tile / {}LL, {};\n", tiles_c * tiles_j, bases);
  for (size_t k = j; k-- > 0;) {  // the outer dims (before j), from the last
    std::string add = fmt::format("ob += x * {}LL;", ostr[k]);
    for (const auto& [f, s] : tiled) add += fmt::format(" {}b += x * {}LL;", f, s[k]);
    d += fmt::format("  {{ const long long x = o % {0}LL; o /= {0}LL; {1} }}\n", pt.shape[k], add);
  }
  d += "  (void)o;\n";
  d += fmt::format("  for (int e = threadIdx.x; e < {}; e += 256) {{\n", pt.tj * pt.tc);
  d += fmt::format("    const int jj = e % {0}, cc = e / {0};\n", pt.tj);
  d += fmt::format("    const long long j = j0 + jj, c = c0 + cc;\n    if (j < {}LL && c < {}LL) {{\n", ej, ec);
  for (const auto& [f, s] : tiled) {
    const dsl::Tensor& t = *loads[f].tensor;
    d += fmt::format("      {0}s[cc][jj] = ucut_simt::ld<{1}>(p.{0}, {0}b + j * {2}LL + {3});\n", f,
                     simt_cuda_type(t.dtype), s[j], c_offset(s));
  }
  d += "    }\n  }\n  __syncthreads();\n";
  d += fmt::format("  for (int e = threadIdx.x; e < {}; e += 256) {{\n", pt.tj * pt.tc);
  d += fmt::format("    const int cc = e % {0}, jj = e / {0};\n", pt.tc);
  d += fmt::format("    const long long j = j0 + jj, c = c0 + cc;\n    if (j < {}LL && c < {}LL) {{\n", ej, ec);
  d += fmt::format("      const long long at = ob + j * {}LL + c;\n", ostr[j]);
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string f = "t" + std::to_string(i);
    const LoadInfo& li = loads[f];
    const dsl::Tensor& t = *li.tensor;
    const std::string ty = simt_cuda_type(t.dtype);
    std::string at;
    if (tiled.count(f)) {
      d += fmt::format("      const float {0}x = {0}s[cc][jj];\n", f);
      continue;
    }
    if (li.mode == dsl::LoadMode::row) {
      at = fmt::format("at / {}LL", last);
    } else if (li.mode == dsl::LoadMode::col) {
      at = fmt::format("at % {}LL", last);
    } else if (t.role == dsl::TensorRole::view) {
      const bool bc = dsl::simt_broadcasts_to(t.shape, oshape);
      at = simt_element_offset(bc ? oshape : t.shape, t.shape, t.view_strides, small, "at");
    } else {
      at = t.numel() == numel ? "at" : simt_broadcast_offset(oshape, t.shape, "at");
    }
    d += fmt::format("      const float {0}x = ucut_simt::ld<{1}>(p.{0}, {2});\n", f, ty, at);
  }
  d += "      {\n" + body + "      }\n    }\n  }\n}\n";
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  d += bind_params(program, pre, fields, scalars, names_of(stores));
  std::string align_check;
  for (size_t i = 0; i < fields.size(); ++i)
    align_check += fmt::format(" || !ucut_simt::aligned(p.t{}, {})", i,
                               dsl::dtype_bytes(program.find_tensor(fields[i])->dtype));
  for (size_t i = 0; i < stores.size(); ++i)
    align_check += fmt::format(" || !ucut_simt::aligned(p.o{}, {})", i, dsl::dtype_bytes(stores[i]->dtype));
  d += fmt::format("  if (false{}) {{\n    ucut_rt::set_error(\"{}: tensors must be aligned to their element size\");\n"
                   "    return 2;\n  }}\n", align_check, label);
  d += fmt::format("  {}kernel<<<{}, 256, 0, args.stream>>>(p);\n", pre, outer * tiles_j * tiles_c);
  d += simt_launch_check(label);
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace

Result<StageCode> codegen_emit_elementwise(const dsl::Program& program, int stage_index) {
  const dsl::Stage& stage = simt_stage(program, stage_index);
  const auto* es = std::get_if<dsl::ElementwiseStage>(&stage.body);
  if (!es) return make_error(ErrorCode::internal, "codegen_emit_elementwise called on a non-elementwise stage");
  const std::string label = simt_stage_label(program, stage_index);
  const std::string pre = simt_prefix(stage_index);
  if (stage.outputs.empty()) return make_error(ErrorCode::internal, label + ": stage has no output");
  const dsl::Tensor* out0 = program.find_tensor(stage.outputs[0]);
  if (!out0) return make_error(ErrorCode::invalid_input, label + ": unknown output tensor '" + stage.outputs[0] + "'");
  const std::vector<int64_t> oshape = out0->shape.empty() ? std::vector<int64_t>{1} : out0->shape;
  const int64_t numel = out0->numel();
  const int64_t last = oshape.back();
  if (numel == 0) return make_error(ErrorCode::invalid_input, label + ": output '" + out0->name + "' is empty");
  if (es->transpose) return emit_transposed(program, stage_index, *es, *out0);

  std::vector<std::string> fields, scalars;
  std::map<std::string, LoadInfo> loads;  // field -> tensor
  auto render_load = [&](const dsl::Expr& e, const std::string& field,
                         const dsl::Tensor& t) -> Result<std::string> {
    auto it = loads.find(field);
    if (it != loads.end() && it->second.mode != e.mode)
      return make_error(ErrorCode::unsupported,
                        label + ": '" + t.name + "' is read with two different index modes");
    if (e.mode == dsl::LoadMode::row && t.numel() != numel / last)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: {}[row] needs {} elements (one per row of the output), it has {}",
                                    label, t.name, numel / last, t.numel()));
    if (e.mode == dsl::LoadMode::col && t.numel() != last)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: {}[col] needs {} elements (one per column of the output), it has {}",
                                    label, t.name, last, t.numel()));
    if (e.mode == dsl::LoadMode::full && !(t.role == dsl::TensorRole::view && t.numel() == numel)) {
      const auto& ts = t.shape;
      if (ts.size() > oshape.size())
        return make_error(ErrorCode::invalid_input,
                          label + ": '" + t.name + "' has more dimensions than the output '" + out0->name + "'");
      for (size_t i = 0; i < ts.size(); ++i) {
        int64_t te = ts[ts.size() - 1 - i], oe = oshape[oshape.size() - 1 - i];
        if (te != oe && te != 1)
          return make_error(ErrorCode::invalid_input,
                            fmt::format("{}: '{}' of extent {} does not broadcast to extent {} of the output "
                                        "(dimension {} from the right)", label, t.name, te, oe, i + 1),
                            "broadcasting needs equal extents or 1");
      }
    }
    loads[field] = LoadInfo{&t, e.mode};
    return field + "v[u][k]";
  };
  // `row`/`col` of output element base + k
  const IndexExprs index = simt_matrix_index(oshape, fmt::format("((base + k) / {}LL)", last),
                                             fmt::format("((base + k) % {}LL)", last));
  ExprEnv env{&program, "", "elementwise " + label, &fields, &scalars, render_load, index};
  std::string body;
  std::vector<std::pair<const dsl::Tensor*, std::string>> stores;
  for (const auto& st : es->body.stmts) {
    if (st.kind == dsl::EpilogueStmt::Kind::reduce)
      return make_error(ErrorCode::unsupported, label + ": reductions are not allowed in an elementwise stage",
                        "use a reduce or rowwise stage");
    auto v = simt_render_expr(*st.value, env);
    if (!v) return v.error();
    if (st.kind == dsl::EpilogueStmt::Kind::let) {
      body += "        const float l_" + st.name + " = " + *v + ";\n";
    } else {
      const dsl::Tensor* t = program.find_tensor(st.name);
      if (!t) return make_error(ErrorCode::invalid_input, label + ": unknown output tensor '" + st.name + "'");
      if (t->numel() != numel)
        return make_error(ErrorCode::invalid_input,
                          fmt::format("{}: output '{}' has {} elements, the stage's shape has {}", label,
                                      t->name, t->numel(), numel));
      body += fmt::format("        o{}v[k] = {};\n", stores.size(), *v);
      stores.emplace_back(t, *v);
    }
  }
  if (stores.empty())
    return make_error(ErrorCode::invalid_input, label + ": the elementwise stage stores nothing");
  if (auto pt = dsl::simt_permute_tiling(*es, *out0, [&](const std::string& n) { return program.find_tensor(n); }))
    return emit_permuting(program, stage_index, *es, *out0, *pt);

  const int max_bytes = dsl::simt_elementwise_vector_bytes(
      *es, last, [&](const std::string& n) { return program.find_tensor(n); });
  auto plan = dsl::simt_plan_elementwise(numel, last, max_bytes, es->knobs);
  if (!plan) return make_error(plan.error().code, label + ": " + plan.error().message, plan.error().hint);
  const dsl::ElementwisePlan& pl = *plan;
  const int V = pl.vec;

  StageCode code;
  code.includes = {"simt_common.cuh"};
  code.launcher = pre + "launch";
  code.workspace_expr = "0";
  code.needs_cutlass = false;
  code.config_name = fmt::format("elementwise_t{}_v{}", pl.threads, V);
  std::string d = simt_banner(program, stage_index, "elementwise");
  // parameters
  std::vector<std::string> outs;
  for (const auto& st : stores) outs.push_back(st.first->name);
  d += params_struct(pre, fields, scalars, outs);
  // broadcast index functions
  std::string loads_code;
  std::map<std::string, bool> view_vec;  // view fields read as vectors
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string f = "t" + std::to_string(i);
    const LoadInfo& li = loads[f];
    const std::string ty = simt_cuda_type(li.tensor->dtype);
    if (li.mode == dsl::LoadMode::row) {
      loads_code += fmt::format(
          "        {{ const float s = ucut_simt::ld<{2}>(p.{0}, base / {3}LL);\n"
          "          for (int k = 0; k < {1}; ++k) {0}v[u][k] = s; }}\n", f, V, ty, last);
    } else if (li.mode == dsl::LoadMode::col) {
      loads_code += fmt::format(
          "        ucut_simt::load_vec<{2}, {1}>(static_cast<const {2}*>(p.{0}), base % {3}LL, {0}v[u]);\n",
          f, V, ty, last);
    } else if (li.tensor->role == dsl::TensorRole::view) {
      // a view (docs/language.md): the element at the view's strides from its pointer (which the
      // library offsets); one vector where the last dim runs at stride 1 and every stride and
      // the offset keep vectors aligned, else one element at a time
      const auto& ts = li.tensor->shape;
      const auto& vs = li.tensor->view_strides;
      // broadcast to the output, or (the output's element count in another shape) read in the
      // output's element order: then the view's own dims index it
      const bool bc = dsl::simt_broadcasts_to(ts, oshape);
      const std::vector<int64_t>& walk = bc ? oshape : ts;
      // 32-bit division by constants where every position fits (a few instructions, where 64-bit
      // division costs tens: the copy stays memory-bound)
      const std::string idx = simt_element_offset(walk, ts, vs, numel < (int64_t{1} << 31));
      bool aligned = !vs.empty() && vs.back() == 1 && ts.back() % V == 0 && (!bc || ts.back() == last) &&
                     li.tensor->view_offset % V == 0;
      for (size_t k = 1; k < walk.size() && k < ts.size(); ++k)  // the last dim runs at stride 1
        if (ts[ts.size() - 1 - k] != 1 && walk[walk.size() - 1 - k] != 1)
          aligned = aligned && vs[ts.size() - 1 - k] % V == 0;
      if (aligned)
        loads_code += fmt::format(
            "        {{ const long long i = base; ucut_simt::load_vec<{0}, {1}>(static_cast<const {0}*>(p.{2}), {3}, {2}v[u]); }}\n",
            ty, V, f, idx);
      else
        loads_code += fmt::format(
            "        for (int k = 0; k < {3}; ++k) {{ const long long i = base + k; {1}v[u][k] = ucut_simt::ld<{0}>(p.{1}, {2}); }}\n",
            ty, f, idx, V);
      view_vec[f] = aligned;
    } else {
      // offset of the broadcast element: walk the output dims from the last one
      const auto& ts = li.tensor->shape;
      const std::string idx = simt_broadcast_offset(oshape, ts);
      const bool same = li.tensor->numel() == numel;
      const bool vec_ok = !ts.empty() && ts.back() == last && last % V == 0;
      if (same) {
        loads_code += fmt::format("        ucut_simt::load_vec<{0}, {1}>(static_cast<const {0}*>(p.{2}), base, {2}v[u]);\n", ty, V, f);
      } else if (vec_ok) {
        loads_code += fmt::format(
            "        {{ const long long i = base; ucut_simt::load_vec<{0}, {1}>(static_cast<const {0}*>(p.{2}), {3}, {2}v[u]); }}\n",
            ty, V, f, idx);
      } else {
        loads_code += fmt::format(
            "        {{ const long long i = base; const float s = ucut_simt::ld<{0}>(p.{1}, {2});\n"
            "          for (int k = 0; k < {3}; ++k) {1}v[u][k] = s; }}\n", ty, f, idx, V);
      }
    }
  }
  d += fmt::format("__global__ void __launch_bounds__({}) {}kernel({}params p) {{\n", pl.threads, pre, pre);
  // a block covers THREADS * UNROLL consecutive vectors; a thread loads its UNROLL of them (one
  // block-width apart, so each load instruction of a warp is coalesced) before it uses the first
  d += fmt::format("  constexpr int UNROLL = {};\n", pl.unroll);
  d += fmt::format("  const long long nvec = {}LL;\n", numel / V);
  d += fmt::format("  const long long stride = {};\n", pl.threads);
  d += fmt::format("  {{\n    const long long v0 = (long long)blockIdx.x * ({0} * UNROLL) + threadIdx.x;\n",
                   pl.threads);
  for (size_t i = 0; i < fields.size(); ++i) d += fmt::format("    float t{}v[UNROLL][{}];\n", i, V);
  d += "#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) {\n"
       "      const long long vi = v0 + u * stride;\n"
       "      if (vi < nvec) {\n"
       + fmt::format("        const long long base = vi * {};\n", V);
  d += loads_code;
  d += "      }\n    }\n";
  d += "#pragma unroll\n    for (int u = 0; u < UNROLL; ++u) {\n"
       "      const long long vi = v0 + u * stride;\n"
       "      if (vi >= nvec) break;\n"
       + fmt::format("      const long long base = vi * {};\n", V);
  for (size_t i = 0; i < stores.size(); ++i) d += fmt::format("      float o{}v[{}];\n", i, V);
  d += fmt::format("#pragma unroll\n      for (int k = 0; k < {}; ++k) {{\n", V);
  d += body;
  d += "      }\n";
  for (size_t i = 0; i < stores.size(); ++i) {
    const std::string ty = simt_cuda_type(stores[i].first->dtype);
    d += fmt::format("      ucut_simt::store_vec<{0}, {1}>(static_cast<{0}*>(p.o{2}), base, o{2}v);\n", ty, V, i);
  }
  d += "    }\n  }\n}\n";
  // launcher
  d += fmt::format("int {}(const ucut_rt::StageArgs& args) {{\n", code.launcher);
  d += bind_params(program, pre, fields, scalars, outs);
  std::string align_check;
  for (size_t i = 0; i < fields.size(); ++i) {
    const LoadInfo& li = loads["t" + std::to_string(i)];
    const auto vv = view_vec.find("t" + std::to_string(i));
    const int lanes = vv != view_vec.end() && !vv->second ? 1 : V;  // a view read element by element
    align_check += fmt::format(" || !ucut_simt::aligned(p.t{}, {})", i, lanes * dsl::dtype_bytes(li.tensor->dtype));
  }
  for (size_t i = 0; i < stores.size(); ++i)
    align_check += fmt::format(" || !ucut_simt::aligned(p.o{}, {})", i, V * dsl::dtype_bytes(stores[i].first->dtype));
  d += fmt::format(
      "  if (false{}) {{\n    ucut_rt::set_error(\"{}: tensors must be aligned to {} elements\");\n"
      "    return 2;\n  }}\n", align_check, label, V);
  d += fmt::format("  {}kernel<<<{}, {}, 0, args.stream>>>(p);\n", pre, pl.blocks, pl.threads);
  d += simt_launch_check(label);
  d += "  return 0;\n}\n";
  code.definitions = std::move(d);
  return code;
}

}  // namespace ucut::codegen
