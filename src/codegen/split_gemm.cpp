// codegen_expand_split_gemms: a gemm stage with `precision f32x3s` (3xTF32 on TF32 wgmma) becomes
// five stages the other emitters already generate. With A = Ab + As and B = Bb + Bs split into
// their TF32 values (`tf32`, round to nearest) and the fp32 remainders:
//   Ab, As / Bb, Bs  two elementwise stages, each reading its operand once (tmp tensors), and
//                    writing the parts K-major ([M, K] and [N, K]) whatever the operand's layout
//                    (a transposing copy where the operand is not: TF32 wgmma reads only K-major)
//   p1 = Ab @ Bs     a TF32 GEMM, its own zero-initialized accumulator
//   p2 = As @ Bb + p1
//   out = epi(Ab @ Bb + p2)   the stage's epilogue, `acc` read as acc + p2; its K split in the
//                             stage's split_k pieces (auto 4) added in fp32
// p2 takes the GEMM's one source slot (CUTLASS's C), so an epilogue that reads a full-size tensor
// of its own (a residual) runs after the GEMM instead: the GEMM stores acc3 = acc + p2 and an
// elementwise stage computes out = epi(acc3) (one more [M, N] write and read; gemm_rules:
// rule_f32x3s admits it without reductions and, batched, without vector loads).
// f32x3k (3xTF32 in one TF32 GEMM over K three times) is three stages instead:
//   A3 = [Ab | Ab | As]   an elementwise stage reading A once through a view that repeats each row
//                         three times (stride 0), writing [.., M, 3K] K-major (a slice view
//                         [.., M, 3, K] of it: its second-to-last index picks the part)
//   B3 = [Bb | Bs | Bb]   the same for B, [.., N, 3K]
//   out = epi(A3 @ B3^T)  one TF32 GEMM with K' = 3K and the stage's own epilogue: the sum over K'
//                         is Ab Bb + Ab Bs + As Bb, one pass over the output where f32x3s makes
//                         five. All three products share the accumulator, which is as accurate as
//                         f32x3s's big x big GEMM in one K piece (the cross products are 2^-11 of
//                         it, so the tensor core's accumulation drops no more of them than of the
//                         big one) and the search offers it only where f32x3s keeps K in one piece.
// The small cross products never share an accumulator with the big one (TF32 tensor cores
// accumulate with reduced precision), and every GEMM reads TF32 values exactly. Measured on the
// H200 (docs/benchmarks.md run Y): 1.45x faster than the one-kernel SM80 3xTF32 (`f32x3`) on a
// 4096 x 8192 x 8192 fp32 Linear, max error 1.1e-4 against 6.4e-5. Golden: src/codegen/library_test.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "codegen/epilogue_expr.h"
#include "codegen/library.h"
#include "dsl/gemm_rules.h"
#include "dsl/names.h"

namespace ucut::codegen {
namespace {

// The name of a stage an expansion adds for the program's stage `stage` (codegen_stage_runs_as).
std::string part_name(const std::string& stage, const std::string& part) { return stage + "_" + part; }

using dsl::Expr;
using dsl::ExprPtr;

ExprPtr load(const std::string& name) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::load;
  e->name = name;
  e->mode = dsl::LoadMode::full;
  return e;
}

ExprPtr tf32(ExprPtr x) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::unary;
  e->fn = dsl::Fn::tf32;
  e->args = {std::move(x)};
  return e;
}

ExprPtr binary(dsl::BinOp op, ExprPtr a, ExprPtr b) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::binary;
  e->op = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}

ExprPtr acc() { return std::make_shared<Expr>(); }  // Kind::acc

ExprPtr local(const std::string& name) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::local;
  e->name = name;
  return e;
}

// `acc` in an epilogue expression, replaced by the local `name`.
ExprPtr replace_acc(const ExprPtr& e, const std::string& name) {
  if (!e) return e;
  if (e->kind == Expr::Kind::acc) return local(name);
  auto c = std::make_shared<Expr>(*e);
  for (auto& a : c->args) a = replace_acc(a, name);
  return c;
}

dsl::EpilogueStmt store(const std::string& out, ExprPtr v) {
  dsl::EpilogueStmt s;
  s.kind = dsl::EpilogueStmt::Kind::store;
  s.name = out;
  s.value = std::move(v);
  return s;
}

ExprPtr constant(double v) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::constant;
  e->value = v;
  return e;
}

ExprPtr call(dsl::Fn fn, std::vector<ExprPtr> args) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::call;
  e->fn = fn;
  e->args = std::move(args);
  return e;
}

// `row`: the element's index along the value's second-to-last dim
ExprPtr index_row() {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::index;
  e->mode = dsl::LoadMode::row;
  return e;
}

// Declares in `p` an f32 tensor `<stage>__<suffix>` (numbered when taken) of `role`: a tmp, or a
// view of `base` with `strides`. Returns its name.
std::string declare(dsl::Program& p, const std::string& stage, const std::string& suffix, dsl::TensorRole role,
                    const std::vector<int64_t>& shape, const std::string& base = "",
                    const std::vector<int64_t>& strides = {}, dsl::DType dtype = dsl::DType::f32) {
  std::string name = stage + "__" + suffix;
  for (int i = 2; p.find_tensor(name); ++i) name = stage + "__" + suffix + std::to_string(i);
  dsl::Tensor t;
  t.name = name;
  t.role = role;
  t.dtype = dtype;
  t.shape = shape;
  t.view_of = base;
  t.view_strides = strides;
  p.tensors.push_back(std::move(t));
  return name;
}

// An f32x3k operand: `src` (rank >= 2; K its last dim when `k_major`, else its second-to-last)
// as parts [.., R, 3, K], part `small_part` of row r the remainder x - TF32(x) and the other two
// TF32(x), x = src's element (r, k). Appends the stage writing them to `p` and declares there the
// GEMM's operand (a tmp [.., R, 3K], whose name it returns), the slice view [.., R, 3, K] of it
// that the stage writes, and the view of `src` that the stage reads (stride 0 along the part).
// `bf16` (bf16x3): the parts are bf16 tensors, the big part round_bf16(x) and the small one
// x - round_bf16(x), rounded to bf16 by the store.
std::string k3_split(dsl::Program& p, const std::string& stage_name, const dsl::Tensor& src, bool k_major,
                     const char* which, int small_part, bool bf16 = false) {
  const size_t r = src.shape.size();
  const int64_t rows = k_major ? src.shape[r - 2] : src.shape[r - 1];
  const int64_t k = k_major ? src.shape[r - 1] : src.shape[r - 2];
  const std::vector<int64_t> src_strides = dsl::dsl_contiguous_strides(src.shape);
  std::vector<int64_t> parts_shape(src.shape.begin(), src.shape.end() - 2);
  std::vector<int64_t> read_strides(src_strides.begin(), src_strides.end() - 2);
  std::vector<int64_t> gemm_shape = parts_shape;
  parts_shape.insert(parts_shape.end(), {rows, 3, k});
  read_strides.insert(read_strides.end(), {k_major ? k : 1, 0, k_major ? 1 : rows});
  gemm_shape.insert(gemm_shape.end(), {rows, 3 * k});
  const std::string w = which;
  const dsl::DType parts_dt = bf16 ? dsl::DType::bf16 : dsl::DType::f32;
  const std::string operand = declare(p, stage_name, w + "3", dsl::TensorRole::tmp, gemm_shape, "", {}, parts_dt);
  const std::string slice = declare(p, stage_name, w + "3_parts", dsl::TensorRole::view, parts_shape, operand,
                                    dsl::dsl_contiguous_strides(parts_shape), parts_dt);
  const std::string rep = declare(p, stage_name, w + "3_src", dsl::TensorRole::view, parts_shape, src.name, read_strides);

  dsl::EpilogueStmt x, big;
  x.kind = big.kind = dsl::EpilogueStmt::Kind::let;
  x.name = "ucut_x";
  x.value = load(rep);
  big.name = bf16 ? "ucut_bf16" : "ucut_tf32";
  big.value = bf16 ? call(dsl::Fn::round_bf16, {local(x.name)}) : tf32(local(x.name));
  ExprPtr value = call(dsl::Fn::where, {call(dsl::Fn::eq, {index_row(), constant(small_part)}),
                                        binary(dsl::BinOp::sub, local(x.name), local(big.name)), local(big.name)});
  dsl::ElementwiseStage e;
  e.body.stmts = {x, big, store(slice, value)};
  dsl::Stage s;
  s.name = part_name(stage_name, w + "3");
  s.outputs = {slice};
  s.body = std::move(e);
  p.stages.push_back(std::move(s));
  return operand;
}

}  // namespace

bool codegen_stage_runs_as(const std::string& program_stage, const std::string& library_stage) {
  return library_stage == program_stage || library_stage.rfind(part_name(program_stage, ""), 0) == 0;
}

Result<dsl::Program> codegen_expand_split_gemms(const dsl::Program& program) {
  dsl::Program p = program;
  p.stages.clear();
  // Operands split already, by tensor: f32x3s's (layout "" or "^T" -> its TF32 part and remainder)
  // and f32x3k's (layout and role -> its parts). A later stage reading the same tensor (SwiGLU's
  // two GEMMs of x) reuses them until a stage writes the tensor again.
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> splits;
  std::map<std::string, std::map<std::string, std::string>> k3_parts;
  for (const auto& st : program.stages) {
    for (const auto& o : st.outputs) {
      splits.erase(o);
      k3_parts.erase(o);
    }
    const auto* g = std::get_if<dsl::GemmStage>(&st.body);
    if (!g || !dsl::gemm_is_split(g->knobs.precision)) {
      p.stages.push_back(st);
      continue;
    }
    const dsl::Tensor* a = program.find_tensor(g->a.tensor);
    const dsl::Tensor* b = program.find_tensor(g->b.tensor);
    const dsl::Tensor* out = st.outputs.empty() ? nullptr : program.find_tensor(st.outputs[0]);
    if (!a || !b || !out)
      return make_error(ErrorCode::invalid_input, "stage '" + st.name + "': an operand or the output is not declared");
    auto bad = dsl::gemm_rules_check(program, *g, *out);
    if (!bad.empty())
      return make_error(ErrorCode::invalid_input, "stage '" + st.name + "': " + bad.front().message, bad.front().hint);
    if (g->knobs.precision == dsl::Precision::f32x3k || g->knobs.precision == dsl::Precision::bf16x3) {
      // A3 = [Ab | Ab | As] and B3 = [Bb | Bs | Bb] along K (parts 2 and 1 the remainders); bf16x3's
      // parts are bf16 and its GEMM a bf16 one whose tensor-core sums are promoted into fp32 every
      // kBf16x3PromoteK of K (one accumulator over 3K products drifts: docs/language.md)
      const bool bf16 = g->knobs.precision == dsl::Precision::bf16x3;
      auto parts = [&](const dsl::Tensor& src, bool k_major, const char* which, int small_part) {
        std::string& name = k3_parts[src.name][std::string(k_major ? "" : "^T") + which + (bf16 ? "16" : "")];
        if (name.empty()) name = k3_split(p, st.name, src, k_major, which, small_part, bf16);
        return name;
      };
      dsl::GemmStage h = *g;
      h.a.tensor = parts(*a, dsl::gemm_a_k_major(*g), "a", 2);
      h.b.tensor = parts(*b, dsl::gemm_b_k_major(*g), "b", 1);
      h.a.transposed = false;  // [.., M, 3K] and [.., N, 3K]: both K-major
      h.b.transposed = true;
      h.k = 3 * g->k;
      h.knobs.precision = bf16 ? dsl::Precision::bf16 : dsl::Precision::tf32;
      if (bf16) h.promote_k = dsl::kBf16x3PromoteK;
      dsl::Stage s = st;
      s.body = std::move(h);
      p.stages.push_back(std::move(s));
      continue;
    }
    const dsl::GemmKnobs resolved = dsl::gemm_resolve_auto(program, *g, *out);
    auto add_tmp = [&](const std::string& suffix, const std::vector<int64_t>& shape) {
      return declare(p, st.name, suffix, dsl::TensorRole::tmp, shape);
    };
    // One elementwise stage per operand writes both parts: x is read once. TF32 wgmma reads both
    // operands K-major only, so an operand stored otherwise (A written `A.T`, B as [K, N]) is split
    // into its transpose: the split is a copy anyway, and the GEMMs then read it K-major.
    auto split = [&](const dsl::Tensor& src, const std::string& which, bool transpose) {
      auto& cached = splits[src.name];
      const std::string layout = transpose ? "^T" : "";
      if (auto it = cached.find(layout); it != cached.end()) return it->second;
      std::vector<int64_t> shape = src.shape;
      if (transpose) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      const std::string big = add_tmp(which + "b", shape), small = add_tmp(which + "s", shape);
      dsl::Stage s;
      s.name = part_name(st.name, which);
      s.outputs = {big, small};
      dsl::EpilogueStmt let;
      let.kind = dsl::EpilogueStmt::Kind::let;
      let.name = "ucut_tf32";
      let.value = tf32(load(src.name));
      dsl::ElementwiseStage e;
      e.body.stmts = {let, store(big, local(let.name)),
                      store(small, binary(dsl::BinOp::sub, load(src.name), local(let.name)))};
      e.transpose = transpose;
      s.body = e;
      p.stages.push_back(std::move(s));
      return cached[layout] = std::pair{big, small};
    };
    const bool a_t = !dsl::gemm_a_k_major(*g), b_t = !dsl::gemm_b_k_major(*g);
    const auto [ab, as] = split(*a, "a", a_t);
    const auto [bb, bs] = split(*b, "b", b_t);
    const std::string p1 = add_tmp("p1", out->shape), p2 = add_tmp("p2", out->shape);
    auto gemm = [&](const std::string& name, const std::string& x, const std::string& y,
                    std::vector<std::string> outputs, dsl::Epilogue epi, bool main) {
      dsl::GemmStage h = *g;
      h.a.tensor = x;
      h.b.tensor = y;
      h.a.transposed = false;  // the splits are K-major: A [.., M, K], B [.., N, K]
      h.b.transposed = true;
      h.knobs.precision = dsl::Precision::tf32;
      h.knobs.scheduler = resolved.scheduler;
      h.knobs.split_k = resolved.split_k;
      h.knobs.schedule = resolved.schedule;
      if (!main) {  // the cross products: one piece each (their sums are small)
        h.knobs.scheduler = dsl::TileScheduler::persistent;
        h.knobs.split_k = 1;
      }
      h.epilogue = std::move(epi);
      dsl::Stage s;
      s.name = name;
      s.outputs = std::move(outputs);
      s.body = std::move(h);
      p.stages.push_back(std::move(s));
    };
    dsl::Epilogue e1, e2;
    e1.stmts = {store(p1, acc())};
    e2.stmts = {store(p2, binary(dsl::BinOp::add, acc(), load(p1)))};
    gemm(part_name(st.name, "p1"), ab, bs, {p1}, e1, false);
    gemm(part_name(st.name, "p2"), as, bb, {p2}, e2, false);
    // the stage's own epilogue over acc + p2 (bound once as a local)
    const std::string sum = "ucut_acc3";
    dsl::EpilogueStmt let;
    let.kind = dsl::EpilogueStmt::Kind::let;
    let.name = sum;
    let.value = binary(dsl::BinOp::add, acc(), load(p2));
    std::vector<dsl::EpilogueStmt> body{let};
    for (auto s : g->epilogue.stmts) {
      s.value = replace_acc(s.value, sum);
      body.push_back(std::move(s));
    }
    if (g->epilogue.stmts.empty()) body.push_back(store(st.outputs[0], local(sum)));
    const auto leaves = epi_leaves(program, g->epilogue);
    const bool after = std::any_of(leaves.begin(), leaves.end(),
                                   [](const EpiLeaf& l) { return l.kind == EpiLeaf::Kind::full; });
    if (!after) {
      dsl::Epilogue main_epi;
      main_epi.stmts = std::move(body);
      gemm(st.name, ab, bb, st.outputs, std::move(main_epi), true);
      continue;
    }
    // The epilogue reads a full-size tensor: the GEMM stores acc + p2, an elementwise stage the rest.
    const std::string acc3 = add_tmp("acc3", out->shape);
    dsl::Epilogue e3;
    e3.stmts = {store(acc3, binary(dsl::BinOp::add, acc(), load(p2)))};
    gemm(st.name, ab, bb, {acc3}, std::move(e3), true);
    body.front().value = load(acc3);
    dsl::ElementwiseStage e;
    e.body.stmts = std::move(body);
    dsl::Stage es;
    es.name = part_name(st.name, "epi");
    es.outputs = st.outputs;
    es.body = std::move(e);
    p.stages.push_back(std::move(es));
  }
  return p;
}

}  // namespace ucut::codegen
