// pass_row_reductions: a sum/max/min (amax, amin, mean) over the last dim of a value a GEMM
// draft computes becomes a `rowsum/rowmax/rowmin` statement in that GEMM's epilogue, written to
// an extra f32 output of shape [M] (or [L, M]); over dim -2 of an unbatched GEMM it becomes
// `colsum/colmax/colmin` into [N]. The rowwise draft it replaces disappears, or, when it has a
// mean's 1/N scale or fused ops of its own, turns into an elementwise draft reading the
// reduction. The GEMM still stores its main output (a gemm stage always does).
// Runs after pass_fuse_epilogue. Golden test: tests/golden/lower/gemm_rowsum.json.
#include <algorithm>

#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

bool mergeable_op(const std::string& op) {
  return op == "sum" || op == "mean" || op == "max" || op == "min" || op == "amax" || op == "amin";
}

}  // namespace

Status pass_row_reductions(LowerState& s) {
  for (size_t j = 0; j < s.drafts.size();) {
    Draft r = s.drafts[j];
    if ((r.kind != DraftKind::rowwise && r.kind != DraftKind::reduce) || r.anchor < 0) {
      ++j;
      continue;
    }
    const problem::Op op = s.ops[static_cast<size_t>(r.anchor)];  // copy: add_op grows s.ops
    if (!mergeable_op(op.op) || draft_writes_indices(r)) {
      ++j;
      continue;
    }
    const std::string in = op.inputs.at(0).tensor;
    int gi = s.producer(in);
    if (gi < 0 || gi >= static_cast<int>(j) || s.drafts[static_cast<size_t>(gi)].kind != DraftKind::gemm) {
      ++j;
      continue;
    }
    Draft& g = s.drafts[static_cast<size_t>(gi)];
    auto locals = draft_locals(s, g);
    std::string base = s.resolve(in).base;
    if (std::find(locals.begin(), locals.end(), base) == locals.end()) {
      ++j;
      continue;
    }
    // Which axis of the GEMM's [.., M, N] value the op reduces.
    const std::vector<int64_t> seen = s.need(in).shape;
    int rank = static_cast<int>(seen.size());
    auto dims = attr_dims(op, rank);
    bool row = r.kind == DraftKind::rowwise;
    bool col = !row && dims && dims->size() == 1 && (*dims)[0] == rank - 2 && g.gemm.batch == 1 && rank == 2;
    const problem::Tensor out = s.need(s.resolve(op.outputs[0]).base);  // copy: add_tensor grows s.tensors
    if ((!row && !col) || out.dtype != problem::DType::f32) {
      ++j;
      continue;
    }
    std::vector<int64_t> vec = row ? (g.gemm.batch > 1 ? std::vector<int64_t>{g.gemm.batch, g.gemm.m}
                                                       : std::vector<int64_t>{g.gemm.m})
                                   : std::vector<int64_t>{g.gemm.n};
    bool mean = op.op == "mean";
    std::string target = out.name;
    if (mean) {
      // The epilogue sums; an elementwise draft scales by 1/N into the op's own output.
      target = s.add_tensor(out.name + "_sum", problem::DType::f32, out.shape);
      problem::Op mul;
      mul.op = "mul";
      mul.inputs = {problem::Operand{target, std::nullopt},
                    problem::Operand{"", 1.0 / static_cast<double>(row ? g.gemm.n : g.gemm.m)}};
      mul.outputs = {op.outputs[0]};
      int mid = s.add_op(mul);
      // The synthetic sum op stands for the reduction in the epilogue.
      problem::Op sum = op;
      sum.op = "sum";
      sum.outputs = {target};
      int sid = s.add_op(sum);
      s.dead[static_cast<size_t>(r.anchor)] = true;
      r.anchor = sid;
      r.ops.insert(r.ops.begin(), mid);
    }
    s.decl_shape[target] = vec;
    s.drafts[static_cast<size_t>(gi)].reductions.push_back(r.anchor);
    s.notes.push_back(s.op_label(op.id) + " is computed in the epilogue of the GEMM " +
                      s.op_label(g.anchor) + " as a " + (row ? "row" : "column") + " reduction");
    if (r.ops.empty()) {
      s.drafts.erase(s.drafts.begin() + static_cast<std::ptrdiff_t>(j));
      continue;
    }
    Draft e;
    e.kind = DraftKind::elementwise;
    e.ops = r.ops;
    s.drafts[j] = e;
    ++j;
  }
  return ok_status();
}

}  // namespace ucut::lower
