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

}  // namespace

Result<dsl::Program> codegen_expand_split_gemms(const dsl::Program& program) {
  dsl::Program p = program;
  p.stages.clear();
  // Operands split already (tensor -> its TF32 part and remainder): a later f32x3s stage reading
  // the same tensor (SwiGLU's two GEMMs of x) reuses them until a stage writes the tensor again.
  std::map<std::string, std::pair<std::string, std::string>> splits;
  for (const auto& st : program.stages) {
    for (const auto& o : st.outputs) {
      splits.erase(o);
      splits.erase(o + "^T");
    }
    const auto* g = std::get_if<dsl::GemmStage>(&st.body);
    if (!g || g->knobs.precision != dsl::Precision::f32x3s) {
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
    const dsl::GemmKnobs resolved = dsl::gemm_resolve_auto(program, *g, *out);
    auto add_tmp = [&](const std::string& suffix, const std::vector<int64_t>& shape) {
      std::string name = st.name + "__" + suffix;
      for (int i = 2; p.find_tensor(name); ++i) name = st.name + "__" + suffix + std::to_string(i);
      dsl::Tensor t;
      t.name = name;
      t.role = dsl::TensorRole::tmp;
      t.dtype = dsl::DType::f32;
      t.shape = shape;
      p.tensors.push_back(t);
      return name;
    };
    // One elementwise stage per operand writes both parts: x is read once. TF32 wgmma reads both
    // operands K-major only, so an operand stored otherwise (A written `A.T`, B as [K, N]) is split
    // into its transpose: the split is a copy anyway, and the GEMMs then read it K-major.
    auto split = [&](const dsl::Tensor& src, const std::string& which, bool transpose) {
      const std::string key = src.name + (transpose ? "^T" : "");
      if (auto it = splits.find(key); it != splits.end()) return it->second;
      std::vector<int64_t> shape = src.shape;
      if (transpose) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      const std::string big = add_tmp(which + "b", shape), small = add_tmp(which + "s", shape);
      dsl::Stage s;
      s.name = st.name + "_" + which;
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
      return splits[key] = std::pair{big, small};
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
    gemm(st.name + "_p1", ab, bs, {p1}, e1, false);
    gemm(st.name + "_p2", as, bb, {p2}, e2, false);
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
    es.name = st.name + "_epi";
    es.outputs = st.outputs;
    es.body = std::move(e);
    p.stages.push_back(std::move(es));
  }
  return p;
}

}  // namespace ucut::codegen
