// pass_match_gemm: one gemm draft per GEMM-family op (linear, matmul, mm, bmm, addmm, baddbmm):
// operands through their views (a swap of the last two dims is `X.T`; a reshape redeclares the
// stored tensor in the shape the product reads, e.g. an einsum's flattened index groups or a
// vector as [K, 1]), M, N, K and the batch (3-D x 2-D folds the batch into M, as a Linear over
// [B, S, K] does; rank-4+ operands fold their leading dims into the batch, so a [b, i, j, l] A
// times a 2-D B is one GEMM of b*i*j rows), linear's bias as `acc + b[col]`, addmm's
// `alpha*acc + beta*c`. Runs after pass_check_ops.
// Golden tests: tests/golden/lower/linear_bias_gelu.json, bmm_scale.json, addmm.json,
// einsum_4d_matmul.json, einsum_gemv.json.
#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

struct Operand {
  std::string base;
  bool t = false;
  std::vector<int64_t> shape;  // of the stored tensor
};

// Declares `base` as `shape` for the GEMM stages that read it (the bridge views the contiguous
// tensor so), or says why it cannot be: a tensor has one declared shape, so only tensors no other
// kind of op reads, and not already declared otherwise, are redeclared.
std::string redeclare(LowerState& s, const std::string& base, const std::vector<int64_t>& shape) {
  for (int c : s.consumers(base))
    if (s.cls[static_cast<size_t>(c)] != OpClass::gemm)
      return "it is also read as " + shape_str(s.need(base).shape) + " by " + s.op_label(c);
  auto it = s.decl_shape.find(base);
  if (it != s.decl_shape.end() && it->second != shape)
    return "another stage already declares it " + shape_str(it->second);
  s.decl_shape[base] = shape;
  return {};
}

// The operand in the shape the product reads it: through a reshape (an einsum's flattened index
// groups, a vector as [K, 1]) the stored tensor is redeclared in that shape where it can be; else
// its stored shape stands and the checks below refuse what that cannot express.
Operand operand(LowerState& s, const std::string& name) {
  View v = s.resolve(name);
  std::vector<int64_t> read = s.need(name).shape, decl = lower_decl_shape(s, v.base);
  if (v.transposed && read.size() >= 2) std::swap(read[read.size() - 1], read[read.size() - 2]);
  if (read != decl && read.size() >= 2 && redeclare(s, v.base, read).empty()) decl = read;
  return Operand{v.base, v.transposed, decl};
}

// rows x cols of the matrix the GEMM reads (after the transpose).
void dims_of(const Operand& o, int64_t& rows, int64_t& cols) {
  size_t r = o.shape.size();
  rows = o.shape[r - 2];
  cols = o.shape[r - 1];
  if (o.t) std::swap(rows, cols);
}

// A product of rank-4+ operands ([B, H, M, K] @ [B, H, K, N], attention's scores) is a batched
// GEMM over the leading dims' product: each operand is declared [B*H, rows, cols] (the bridge
// views the contiguous tensor so). Only equal leading dims fold (no broadcasting), a 2-D B is
// shared as before, and only tensors no other kind of op reads are redeclared.
Status fold_batch(LowerState& s, int op_id, Operand& a, Operand& b) {
  auto lead = [](const Operand& o) {
    return std::vector<int64_t>(o.shape.begin(), o.shape.end() - 2);
  };
  // (a 2-D A with a batched B is refused by the caller's check once B is folded)
  if (a.shape.size() > 2 && b.shape.size() > 2 && lead(a) != lead(b))
    return s.unsupported(op_id, "batch dimensions " + shape_str(lead(a)) + " and " + shape_str(lead(b)) +
                                    " differ; a batched gemm stage does not broadcast them",
                         "expand the operands to the same batch shape in PyTorch");
  for (Operand* o : {&a, &b}) {
    if (o->shape.size() <= 3) continue;
    int64_t batch = 1;
    for (int64_t d : lead(*o)) batch *= d;
    std::vector<int64_t> flat = {batch, o->shape[o->shape.size() - 2], o->shape.back()};
    if (std::string why = redeclare(s, o->base, flat); !why.empty())
      return s.unsupported(op_id, "'" + o->base + "' " + shape_str(o->shape) + " is read as a batch of " +
                                      std::to_string(batch) + " matrices here, but " + why +
                                      "; a tensor has one declared shape",
                           "flatten the leading dimensions in PyTorch");
    o->shape = flat;
  }
  return ok_status();
}

}  // namespace

Status pass_match_gemm(LowerState& s) {
  for (const auto& op : s.ops) {
    size_t i = static_cast<size_t>(op.id);
    if (s.dead[i] || s.cls[i] != OpClass::gemm) continue;
    if (op.outputs.size() != 1) return s.unsupported(op.id, "a GEMM op has one output");
    Draft d;
    d.kind = DraftKind::gemm;
    d.anchor = op.id;
    d.value = op.outputs[0];
    GemmPlan& g = d.gemm;
    bool linear = op.op == "linear";
    bool addmm = op.op == "addmm" || op.op == "baddbmm";
    size_t ia = addmm ? 1 : 0, ib = ia + 1;
    if (op.inputs.size() < ib + 1 || !op.inputs[ia].is_tensor() || !op.inputs[ib].is_tensor())
      return s.unsupported(op.id, "expected two tensor operands");
    Operand a = operand(s, op.inputs[ia].tensor), b = operand(s, op.inputs[ib].tensor);
    if (linear) b.t = !b.t;  // linear(x, W) = x @ W.T
    if (a.shape.size() < 2 || b.shape.size() < 2)
      return s.unsupported(op.id, "a 1-D matmul operand is a matrix-vector product, which the gemm stage does not express",
                           "unsqueeze the vector to a matrix in PyTorch");
    if (a.shape.size() > 3 || b.shape.size() > 3) {
      Status st = fold_batch(s, op.id, a, b);
      if (!st) return st;
    }
    int64_t ar, ac, br, bc;
    dims_of(a, ar, ac);
    dims_of(b, br, bc);
    if (ac != br)
      return s.unsupported(op.id, "inner dimensions differ: " + shape_str(a.shape) + " and " + shape_str(b.shape));
    int64_t la = a.shape.size() == 3 ? a.shape[0] : 0, lb = b.shape.size() == 3 ? b.shape[0] : 0;
    if (la && lb && la != lb) return s.unsupported(op.id, "batch sizes differ");
    if (!la && lb)
      return s.unsupported(op.id, "a 2-D A with a batched B is not generated (only a shared 2-D B is)",
                           "write the product the other way round (B^T A^T) or give A a batch dimension");
    if (la && !lb && a.t)
      return s.unsupported(op.id, "a 2-D B is shared across batches only when A is untransposed");
    g.a = a.base;
    g.b = b.base;
    g.a_t = a.t;
    g.b_t = b.t;
    g.m = ar;
    g.n = bc;
    g.k = ac;
    g.batch = std::max<int64_t>({la, lb, 1});
    if (linear && op.inputs.size() > 2 && op.inputs[2].is_tensor()) g.bias = op.inputs[2].tensor;
    if (addmm) {
      if (!op.inputs[0].is_tensor()) return s.unsupported(op.id, "addmm's input must be a tensor");
      g.c = op.inputs[0].tensor;
      g.alpha = attr_number(op, "alpha", 1);
      g.beta = attr_number(op, "beta", 1);
    }
    // The stage computes [M, N] or [L, M, N] (L = 1 too: an operand of rank 3 makes the product
    // rank 3, as the checker reads it); a Linear over [B, S, K] writes [B, S, N] as well.
    g.batched = la || lb;
    std::vector<int64_t> out = g.out_shape();
    View ov = s.resolve(d.value);
    if (lower_decl_shape(s, ov.base) != out) {
      if (s.need(ov.base).numel() != g.batch * g.m * g.n)
        return s.unsupported(op.id, "output '" + d.value + "' does not hold the product's " + shape_str(out));
      s.decl_shape[ov.base] = out;
    }
    s.drafts.push_back(std::move(d));
  }
  return ok_status();
}

}  // namespace ucut::lower
