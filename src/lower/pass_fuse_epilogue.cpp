// pass_fuse_epilogue: moves each single-op elementwise draft into the draft that computes its
// input (a GEMM, conv, rowwise, reduce or window epilogue, or an earlier elementwise body), in run order, so a
// chain such as linear -> +bias -> *scale -> gelu becomes one stage. An op joins a draft when
//   - one of its inputs is a value the draft computes (its anchor value or a fused op's result),
//   - every other input can be read in that block (constant, v[row], v[col], a full tensor of
//     the block's shape; broadcast in elementwise bodies) and is ready before the draft runs,
//   - its result has the block's shape, and a GEMM epilogue still reads at most one full tensor.
// An op reading the element's position (attention's causal mask, tril/triu) joins no reduce block;
// in a GEMM epilogue it reads the position from vectors of 0 .. M-1 and 0 .. N-1 (pass_emit).
// Then an elementwise draft whose results only one later elementwise draft reads is inlined at the
// front of that draft's body (try_inline_into_consumer).
// Whether the fused draft can store all it must is settled later by pass_split_stores.
// Runs after pass_simt_stages. Golden tests: tests/golden/lower/linear_bias_gelu.json,
// gelu_tanh_side_value.json (the inlining),
// swish_residual.json.
#include <algorithm>

#include "dsl/names.h"
#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

bool accepts_epilogue(const Draft& d) {
  switch (d.kind) {
    case DraftKind::gemm:
    case DraftKind::conv:
    case DraftKind::elementwise:
    case DraftKind::reduce:
    case DraftKind::rowwise: return !draft_writes_indices(d);
    case DraftKind::window: return true;
    default: return false;
  }
}

// Full-size tensors a GEMM epilogue reads (CUTLASS's sm90 epilogue has one source operand, C).
std::set<std::string> gemm_full_loads(const LowerState& s, const Draft& d) {
  std::set<std::string> full;
  BlockCtx ctx = lower_block_ctx(s, d);
  auto locals = draft_locals(s, d);
  std::vector<std::string> reads;
  if (!d.gemm.c.empty()) reads.push_back(d.gemm.c);
  for (int id : d.ops)
    for (const auto& in : s.ops[static_cast<size_t>(id)].inputs)
      if (in.is_tensor()) reads.push_back(in.tensor);
  for (const auto& r : reads) {
    std::string base = s.resolve(r).base;
    if (std::find(locals.begin(), locals.end(), base) != locals.end()) continue;
    std::string why;
    auto p = lower_load_plan(s, r, ctx, why);
    if (p && p->kind == LoadPlan::Kind::full) full.insert(p->tensor);
  }
  return full;
}

// An op reading the element's position (`row`/`col`) joins a block only where the block has
// one (rowwise and elementwise) over the op's own matrices (the last two extents).
bool index_fits(const LowerState& s, const Draft& d, const BlockCtx& ctx, const problem::Op& op) {
  if (!lower_expr_needs_index(op)) return true;
  auto last2 = [](const std::vector<int64_t>& v) {
    return std::pair<int64_t, int64_t>{dsl::dsl_matrix_rows(v), v.empty() ? 1 : v.back()};
  };
  // a GEMM epilogue reads the positions from vectors of 0 .. M-1 and 0 .. N-1 (pass_emit), exact
  // below 2^24, over each matrix of a batch
  if (d.kind == DraftKind::gemm) {
    const auto& out = s.need(op.outputs[0]).shape;
    return out.size() >= 2 && out[out.size() - 2] == d.gemm.m && out.back() == d.gemm.n &&
           d.gemm.m < (int64_t{1} << 24) && d.gemm.n < (int64_t{1} << 24);
  }
  if (d.kind == DraftKind::conv || !draft_has_position(d)) return false;
  return last2(s.need(op.outputs[0]).shape) == last2(ctx.shape);
}

bool try_fuse(LowerState& s, size_t pi, const problem::Op& op) {
  Draft& p = s.drafts[pi];
  if (!accepts_epilogue(p)) return false;
  // a copy of a DSL view reads its tensor at strides, not the producer's element
  for (const auto& in : op.inputs)
    if (in.is_tensor() && s.strided.count(in.tensor)) return false;
  auto locals = draft_locals(s, p);
  BlockCtx ctx = lower_block_ctx(s, p);
  if (!index_fits(s, p, ctx, op)) return false;
  // The result has the block's shape (numel and, ignoring leading 1s, extents).
  const auto& out_shape = s.need(op.outputs[0]).shape;
  if (shape_numel(out_shape) != shape_numel(ctx.shape) || squeeze_leading(out_shape) != squeeze_leading(ctx.shape)) {
    // A GEMM over [B, S, K] keeps [B, S, N]; the op may see the same shape. A rowwise block
    // over flattened trailing dims (layer_norm over [.., H, W]) takes ops on its own values only.
    bool flat_rows = p.kind == DraftKind::rowwise && shape_numel(out_shape) == shape_numel(ctx.shape) &&
                     std::all_of(op.inputs.begin(), op.inputs.end(), [&](const problem::Operand& in) {
                       return !in.is_tensor() || std::find(locals.begin(), locals.end(),
                                                           s.resolve(in.tensor).base) != locals.end();
                     });
    // A batched GEMM over folded leading dims ([B, H, M, N] computed as [B*H, M, N]) keeps the
    // two matrix dims.
    bool folded = p.kind == DraftKind::gemm && shape_numel(out_shape) == shape_numel(ctx.shape) && out_shape.size() > 2 &&
                  ctx.shape.size() >= 2 &&
                  std::equal(out_shape.end() - 2, out_shape.end(), ctx.shape.end() - 2);
    if (!flat_rows && !folded && (shape_numel(out_shape) != shape_numel(ctx.shape) || out_shape.size() != ctx.shape.size()))
      return false;
  }
  bool uses_local = false;
  std::set<std::string> new_full;
  for (const auto& in : op.inputs) {
    if (!in.is_tensor()) continue;
    std::string base = s.resolve(in.tensor).base;
    if (std::find(locals.begin(), locals.end(), base) != locals.end()) {
      uses_local = true;
      // Locals must be read with the block's own shape (no broadcasting of a computed value).
      if (shape_numel(s.need(in.tensor).shape) != shape_numel(ctx.shape)) return false;
      continue;
    }
    int prod = s.producer(in.tensor);
    if (prod >= static_cast<int>(pi)) return false;  // not ready before the draft runs
    std::string why;
    auto plan = lower_load_plan(s, in.tensor, ctx, why);
    if (!plan) return false;
    // a group_norm block's rows and columns are (sample, group) and the position in the group:
    // only full reads line up with them
    if (p.kind == DraftKind::rowwise && p.op == "group_norm" && plan->kind != LoadPlan::Kind::full &&
        plan->kind != LoadPlan::Kind::constant)
      return false;
    // a conv epilogue reads numbers and one value per channel (pass_match_conv's chain)
    if (p.kind == DraftKind::conv && plan->kind != LoadPlan::Kind::col && plan->kind != LoadPlan::Kind::constant)
      return false;
    if (plan->kind == LoadPlan::Kind::full) new_full.insert(plan->tensor);
  }
  if (!uses_local) return false;
  if (p.kind == DraftKind::gemm) {
    auto full = gemm_full_loads(s, p);
    full.insert(new_full.begin(), new_full.end());
    if (full.size() > 1) return false;
  }
  p.ops.push_back(op.id);
  return true;
}

// The draft whose ops include op `id`, or -1.
int draft_of_op(const LowerState& s, int id) {
  for (size_t i = 0; i < s.drafts.size(); ++i) {
    auto ids = draft_op_ids(s.drafts[i]);
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) return static_cast<int>(i);
  }
  return -1;
}

// An elementwise draft of its own (no anchor) whose results are read only by one later elementwise
// draft, and are no output, runs first inside that draft's body instead: a value computed beside
// a chain (`0.5 * x` in `0.5 * x * (1 + tanh(...))`) is then neither stored nor read back.
bool try_inline_into_consumer(LowerState& s, size_t pi) {
  const Draft& p = s.drafts[pi];
  if (p.kind != DraftKind::elementwise || !p.value.empty() || p.ops.empty()) return false;
  int target = -1;
  for (const auto& t : draft_escaping(s, p)) {
    if (s.is_output(t)) return false;
    for (int c : s.consumers(t)) {
      // a DSL view reads the value from memory: it stays stored
      for (const auto& in : s.ops[static_cast<size_t>(c)].inputs)
        if (in.is_tensor() && s.strided.count(in.tensor)) return false;
      const int dj = draft_of_op(s, c);
      if (dj == static_cast<int>(pi)) continue;
      if (dj < 0 || (target >= 0 && dj != target)) return false;
      target = dj;
    }
  }
  if (target <= static_cast<int>(pi)) return false;
  Draft& d = s.drafts[static_cast<size_t>(target)];
  if (d.kind != DraftKind::elementwise || !d.value.empty()) return false;
  BlockCtx ctx = lower_block_ctx(s, d);
  auto locals = draft_locals(s, p);
  for (int id : p.ops) {
    const problem::Op& op = s.ops[static_cast<size_t>(id)];
    if (shape_numel(s.need(op.outputs[0]).shape) != shape_numel(ctx.shape) || !index_fits(s, d, ctx, op)) return false;
    for (const auto& in : op.inputs) {
      if (!in.is_tensor()) continue;
      if (std::find(locals.begin(), locals.end(), s.resolve(in.tensor).base) != locals.end()) continue;
      std::string why;
      if (!lower_load_plan(s, in.tensor, ctx, why)) return false;
    }
  }
  d.ops.insert(d.ops.begin(), p.ops.begin(), p.ops.end());
  s.drafts.erase(s.drafts.begin() + static_cast<std::ptrdiff_t>(pi));
  return true;
}

}  // namespace

Status pass_fuse_epilogue(LowerState& s) {
  for (size_t j = 0; j < s.drafts.size();) {
    Draft& e = s.drafts[j];
    if (e.kind != DraftKind::elementwise || e.ops.size() != 1) {
      ++j;
      continue;
    }
    const problem::Op& op = s.ops[static_cast<size_t>(e.ops[0])];
    // The latest earlier draft computing one of the inputs.
    int target = -1;
    for (const auto& in : op.inputs)
      if (in.is_tensor()) target = std::max(target, s.producer(in.tensor));
    if (target >= 0 && target < static_cast<int>(j) && try_fuse(s, static_cast<size_t>(target), op)) {
      s.drafts.erase(s.drafts.begin() + static_cast<std::ptrdiff_t>(j));
      continue;
    }
    ++j;
  }
  for (size_t j = 0; j < s.drafts.size();) {
    if (!try_inline_into_consumer(s, j)) ++j;
  }
  return ok_status();
}

}  // namespace ucut::lower
