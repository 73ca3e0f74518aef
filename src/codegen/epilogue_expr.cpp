// Epilogue expressions to CUDA C++ (see epilogue_expr.h).
#include "codegen/epilogue_expr.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "codegen/functors.h"
#include "support/diagnostics.h"

namespace ucut::codegen {

using dsl::Expr;
using dsl::Fn;

std::string epi_float(double v) { return codegen_float_literal(v); }

namespace {

const char* binop(dsl::BinOp op) {
  switch (op) {
    case dsl::BinOp::add: return " + ";
    case dsl::BinOp::sub: return " - ";
    case dsl::BinOp::mul: return " * ";
    case dsl::BinOp::div: return " / ";
  }
  return " ? ";
}

std::string leaf_var(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::acc: return "acc";
    case Expr::Kind::scalar: return "s_" + e.name;
    case Expr::Kind::load:
      return std::string(e.mode == dsl::LoadMode::row ? "vr_" : e.mode == dsl::LoadMode::col ? "vc_" : "r_") +
             e.name;
    default: return "";
  }
}

void collect(const Expr& e, const dsl::Program& p, std::vector<EpiLeaf>& out) {
  EpiLeaf l;
  bool leaf = true;
  switch (e.kind) {
    case Expr::Kind::scalar:
      l.kind = EpiLeaf::Kind::scalar;
      for (size_t i = 0; i < p.scalars.size(); ++i)
        if (p.scalars[i].name == e.name) l.scalar_index = static_cast<int>(i);
      break;
    case Expr::Kind::load:
      l.kind = e.mode == dsl::LoadMode::row ? EpiLeaf::Kind::row
               : e.mode == dsl::LoadMode::col ? EpiLeaf::Kind::col
                                              : EpiLeaf::Kind::full;
      break;
    default: leaf = false;
  }
  if (leaf) {
    l.name = e.name;
    l.var = leaf_var(e);
    bool seen = std::any_of(out.begin(), out.end(), [&](const EpiLeaf& o) { return o.var == l.var; });
    if (!seen) out.push_back(l);
  }
  for (const auto& a : e.args) collect(*a, p, out);
}

}  // namespace

std::vector<EpiLeaf> epi_leaves(const dsl::Program& p, const dsl::Epilogue& ep) {
  std::vector<EpiLeaf> out;
  EpiLeaf acc;
  acc.var = "acc";
  out.push_back(acc);
  for (const auto& st : ep.stmts)
    if (st.value) collect(*st.value, p, out);
  return out;
}

namespace {

void count_locals(const Expr& e, std::map<std::string, int>& uses) {
  if (e.kind == Expr::Kind::local) ++uses[e.name];
  for (const auto& a : e.args) count_locals(*a, uses);
}

// `e` with every local in `inline_lets` replaced by its expression.
dsl::ExprPtr substitute(const dsl::ExprPtr& e, const std::map<std::string, dsl::ExprPtr>& inline_lets) {
  if (e->kind == Expr::Kind::local)
    if (auto it = inline_lets.find(e->name); it != inline_lets.end()) return it->second;
  auto c = std::make_shared<Expr>(*e);
  c->span = {};
  for (auto& a : c->args) a = substitute(a, inline_lets);
  return c;
}

struct Renamer {
  CanonicalEpilogue& out;
  std::map<std::string, std::string> tensors, scalars, lets;  // program name -> canonical
  static const std::string& name_of(std::map<std::string, std::string>& m, const std::string& n, const char* prefix) {
    auto it = m.find(n);
    if (it == m.end()) it = m.emplace(n, prefix + std::to_string(m.size())).first;
    return it->second;
  }
  dsl::ExprPtr expr(const Expr& e) {
    auto c = std::make_shared<Expr>(e);
    switch (e.kind) {
      case Expr::Kind::load:
        c->name = name_of(tensors, e.name, "t");
        out.tensor_of[c->name] = e.name;
        break;
      case Expr::Kind::scalar:
        c->name = name_of(scalars, e.name, "p");
        out.scalar_of[c->name] = e.name;
        break;
      case Expr::Kind::local: c->name = name_of(lets, e.name, "v"); break;
      default: break;
    }
    for (auto& a : c->args) a = expr(*a);
    return c;
  }
};

}  // namespace

CanonicalEpilogue epi_canonical(const dsl::Epilogue& ep) {
  // 1. Lets read once (or never) are written into their one reader, so `let t = acc + b[col];
  //    y = gelu(t)` and `y = gelu(acc + b[col])` are one form.
  std::map<std::string, int> uses;
  for (const auto& st : ep.stmts)
    if (st.value) count_locals(*st.value, uses);
  std::map<std::string, dsl::ExprPtr> inline_lets;
  dsl::Epilogue flat;
  for (const auto& st : ep.stmts) {
    dsl::EpilogueStmt c = st;
    c.span = {};
    if (st.value) c.value = substitute(st.value, inline_lets);
    if (st.kind == dsl::EpilogueStmt::Kind::let && uses[st.name] <= 1) {
      inline_lets[st.name] = c.value;
      continue;
    }
    flat.stmts.push_back(std::move(c));
  }
  // 2. Names in the order the flat epilogue reads them.
  CanonicalEpilogue out;
  Renamer r{out, {}, {}, {}};
  int reductions = 0;
  for (const auto& st : flat.stmts) {
    dsl::EpilogueStmt c = st;
    if (st.value) c.value = r.expr(*st.value);  // the value first: a let's name is bound after it
    switch (st.kind) {
      case dsl::EpilogueStmt::Kind::let: c.name = Renamer::name_of(r.lets, st.name, "v"); break;
      case dsl::EpilogueStmt::Kind::store: c.name = "out"; break;
      case dsl::EpilogueStmt::Kind::reduce: c.name = "r" + std::to_string(reductions++); break;
    }
    out.epilogue.stmts.push_back(std::move(c));
  }
  return out;
}

std::string epi_expr_cpp(const Expr& e, bool fast) {
  switch (e.kind) {
    case Expr::Kind::acc:
    case Expr::Kind::scalar:
    case Expr::Kind::load: return leaf_var(e);
    case Expr::Kind::constant: return epi_float(e.value);
    case Expr::Kind::local: return "l_" + e.name;
    case Expr::Kind::index:
      UCUT_CHECK(false, "`row`/`col` in a GEMM epilogue (the checker refuses it)");
      return "0.f";
    case Expr::Kind::binary:
      UCUT_CHECK(e.args.size() == 2, "binary expression needs two operands");
      if (fast && e.op == dsl::BinOp::div)
        return "__fdividef(" + epi_expr_cpp(*e.args[0], fast) + ", " + epi_expr_cpp(*e.args[1], fast) + ")";
      return "(" + epi_expr_cpp(*e.args[0], fast) + binop(e.op) + epi_expr_cpp(*e.args[1], fast) + ")";
    case Expr::Kind::unary:
    case Expr::Kind::call: {
      std::vector<std::string> args;
      for (const auto& a : e.args) args.push_back(epi_expr_cpp(*a, fast));
      return codegen_fn_call(e.fn, args, e.params, fast);
    }
  }
  return "0.f";
}

std::string epi_lets_cpp(const dsl::Epilogue& ep, const std::string& indent, bool fast) {
  std::string s;
  for (const auto& st : ep.stmts)
    if (st.kind == dsl::EpilogueStmt::Kind::let)
      s += indent + "const float l_" + st.name + " = " + epi_expr_cpp(*st.value, fast) + ";\n";
  return s;
}

const dsl::EpilogueStmt* epi_main_store(const dsl::Epilogue& ep) {
  for (const auto& st : ep.stmts)
    if (st.kind == dsl::EpilogueStmt::Kind::store) return &st;
  return nullptr;
}

bool epi_is_identity(const dsl::Epilogue& ep) {
  if (ep.stmts.empty()) return true;
  if (ep.stmts.size() != 1) return false;
  const auto& st = ep.stmts[0];
  return st.kind == dsl::EpilogueStmt::Kind::store && st.value && st.value->kind == Expr::Kind::acc;
}

std::string epi_functor_header(const std::string& code) {
  const std::string rounding = code.find("ucut_fn_round_") != std::string::npos ? codegen_rounding_source() : "";
  return codegen_functors_source() + rounding +
      "// Float atomics for GEMM epilogue reductions across tiles. CUTLASS ships atomic_add and\n"
      "// atomic_maximum; this adds the minimum. Non-negative floats order like their int bits,\n"
      "// negative floats in reverse as unsigned bits.\n"
      "#ifndef UCUT_ATOMICS_DEFINED\n#define UCUT_ATOMICS_DEFINED\n"
      "namespace ucut_fn {\n"
      "__device__ __forceinline__ void atomic_reduce_sum(float* p, float v) { atomicAdd(p, v); }\n"
      "__device__ __forceinline__ void atomic_reduce_max(float* p, float v) {\n"
      "  if (!signbit(v)) atomicMax((int*)p, __float_as_int(v)); else atomicMin((unsigned int*)p, __float_as_uint(v)); }\n"
      "__device__ __forceinline__ void atomic_reduce_min(float* p, float v) {\n"
      "  if (!signbit(v)) atomicMin((int*)p, __float_as_int(v)); else atomicMax((unsigned int*)p, __float_as_uint(v)); }\n"
      "}  // namespace ucut_fn\n#endif\n";
}

}  // namespace ucut::codegen
