#include "space/stage_facts.h"

#include "space/kinds/kinds.h"

#include <algorithm>
#include <set>
#include <variant>

namespace ucut::space {

namespace {

void walk(const dsl::ExprPtr& e, const dsl::Program& p, std::set<std::string>& loads, int& ops, GemmFacts* g) {
  if (!e) return;
  if (e->kind == dsl::Expr::Kind::binary || e->kind == dsl::Expr::Kind::unary || e->kind == dsl::Expr::Kind::call) ++ops;
  if (e->kind == dsl::Expr::Kind::load && loads.insert(e->name).second && g) {
    if (const dsl::Tensor* t = p.find_tensor(e->name)) g->epi_read_bytes += t->numel() * dsl::dtype_bytes(t->dtype);
    if (e->mode == dsl::LoadMode::full) g->full_load = true;
  }
  for (const auto& a : e->args) walk(a, p, loads, ops, g);
}

int64_t tensor_bytes(const dsl::Program& p, const std::string& n) {
  const dsl::Tensor* t = p.find_tensor(n);
  return t ? t->numel() * dsl::dtype_bytes(t->dtype) : 0;
}

}  // namespace

GemmFacts gemm_facts(const dsl::Program& p, const dsl::GemmStage& g) {
  GemmFacts f;
  f.m = g.m;
  f.n = g.n;
  f.k = g.k;
  f.batch = g.batch;
  const dsl::Tensor* a = p.find_tensor(g.a.tensor);
  const dsl::Tensor* b = p.find_tensor(g.b.tensor);
  f.ab_elems = (a ? a->numel() : 0) + (b ? b->numel() : 0);
  std::set<std::string> loads;
  for (const auto& st : g.epilogue.stmts) {
    walk(st.value, p, loads, f.epi_ops, &f);
    if (st.kind == dsl::EpilogueStmt::Kind::reduce) ++f.reductions;
  }
  return f;
}

void space_block_loads(const dsl::Epilogue& block, std::vector<std::string>& reads) {
  std::set<std::string> loads;
  int ops = 0;
  static const dsl::Program none;  // walk reads the program only for GEMM facts
  for (const auto& s : block.stmts) walk(s.value, none, loads, ops, nullptr);
  reads.insert(reads.end(), loads.begin(), loads.end());
}

SimtFacts simt_facts(const dsl::Program& p, const dsl::Stage& st) {
  SimtFacts f;
  const SpaceStageKind& kind = space_stage_kind(dsl::dsl_stage_kind_of(st));
  f.kind = dsl::dsl_stage_kind_word(kind.id);
  f.rows_kind = kind.rows_kind;
  std::string data;
  std::vector<std::string> reads;
  kind.io(p, st, data, reads);
  if (const dsl::Tensor* t = p.find_tensor(data)) {
    f.last_dim = t->shape.empty() ? 1 : t->shape.back();
    f.row_len = f.last_dim;
    f.total = t->numel();
    f.elem_bytes = dsl::dtype_bytes(t->dtype);
  }
  if (kind.row_length)
    if (const int64_t n = kind.row_length(p, st); n > 0) f.row_len = n;
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  for (const auto& r : reads) f.bytes += tensor_bytes(p, r);
  for (const auto& o : st.outputs) f.bytes += tensor_bytes(p, o);
  // A row kernel whose outputs hold one value a row (or fewer) reads each row once and writes no
  // row back: the register cache of a cluster has nothing to keep.
  if (f.rows_kind && !st.outputs.empty() && f.row_len > 0) {
    const int64_t rows = f.total / f.row_len;
    f.per_row_outputs = std::all_of(st.outputs.begin(), st.outputs.end(), [&](const std::string& o) {
      const dsl::Tensor* t = p.find_tensor(o);
      return t && t->numel() <= rows;
    });
  }
  return f;
}

}  // namespace ucut::space
