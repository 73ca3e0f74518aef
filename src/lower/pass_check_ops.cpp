// pass_check_ops: rejects, before any stage is formed, every live op the language cannot
// express, naming the op and why (data movement, functions missing
// from functions.def, reshaped or transposed views read outside a GEMM, unsupported dtypes).
// Convolutions (transposed ones too) were rewritten or refused by pass_match_conv, which runs
// before it. Each refusal says what the user can do (integer tensors).
// Golden tests: tests/golden/lower/integer_input_unsupported.json, einsum_diagonal_unsupported.json (errors).
#include <map>

#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

// Why an op outside the lowerable classes does not lower, by op name.
std::string why_unsupported(const problem::Op& op) {
  static const std::map<std::string, std::string> reasons = {
      {"batch_norm", "batch_norm in training mode normalizes with batch statistics over dims other than the last; "
                     "rowwise stages normalize the last dim (eval mode, with running statistics, lowers)"},
      {"instance_norm", "instance_norm normalizes over spatial dims; rowwise stages normalize the last dim"},
      {"var", "var has no reduce operation (sum, mean, max, min do)"},
      {"std", "std has no reduce operation (sum, mean, max, min do)"},
      {"norm", "norm has no reduce operation (sum, mean, max, min do)"},
      {"prod", "prod has no reduce operation (sum, mean, max, min do)"},
      {"where", "selection (where) has no μCUTLASS function"},
      {"masked_fill", "masked_fill has no μCUTLASS function"},
      {"cat", "concatenation moves data; the language has no stage for it"},
      {"stack", "stacking moves data; the language has no stage for it"},
      {"split", "split moves data; the language has no stage for it"},
      {"chunk", "chunk moves data; the language has no stage for it"},
      {"slice", "slicing moves data; the language has no stage for it"},
      {"select", "select moves data; the language has no stage for it"},
      {"gather", "gather moves data; the language has no stage for it"},
      {"index_select", "index_select moves data; the language has no stage for it"},
      {"pad", "padding moves data; the language has no stage for it"},
      {"flip", "flip moves data; the language has no stage for it"},
      {"tril", "tril has no μCUTLASS function"},
      {"triu", "triu has no μCUTLASS function"},
      {"nll_loss", "nll_loss is not a reduce loss (cross_entropy is)"},
  };
  auto it = reasons.find(op.op);
  if (it != reasons.end()) return it->second;
  if (op.op == "opaque" && op.attrs.contains("equation") && op.attrs.contains("why"))  // an einsum the IR cannot write
    return "einsum('" + op.attrs.value("equation", std::string()) + "') " + op.attrs.value("why", std::string());
  if (op.op == "opaque")
    return "an operation outside the Problem IR vocabulary (" + op.attrs.value("target", std::string("?")) + ")";
  static const std::set<std::string> cmp = {"eq", "ne", "lt", "le", "gt", "ge"};
  if (cmp.count(op.op)) return "comparisons produce bool tensors, which expressions do not compute";
  return "'" + op.op + "' has no μCUTLASS function or stage";
}

bool float_dtype(problem::DType t) {
  return t == problem::DType::f32 || t == problem::DType::f16 || t == problem::DType::bf16;
}

// Integer and bool tensors lower only in these roles (pass_check_ops's exceptions below).
constexpr const char* kIntegerRoles =
    "integer and bool tensors lower only as cross_entropy's class labels, a masked cumsum's mask and the indices "
    "argmax/argmin/max/min write; make the tensor f32, f16 or bf16 in the problem if the computation allows "
    "(e.g. .float() in get_inputs()), else this problem stays on PyTorch";

}  // namespace

Status pass_check_ops(LowerState& s) {
  for (const auto& op : s.ops) {
    size_t i = static_cast<size_t>(op.id);
    if (s.dead[i]) continue;
    OpClass c = s.cls[i];
    if (c == OpClass::torch) continue;  // PyTorch runs it (pass_emit checks it can be declared)
    if (c == OpClass::unsupported) return s.unsupported(op.id, why_unsupported(op));
    if (c == OpClass::view) continue;
    std::string why;
    if (c == OpClass::elementwise && !lower_expr_supported(op, why)) return s.unsupported(op.id, why);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const auto& in = op.inputs[k];
      if (!in.is_tensor()) continue;
      View v = s.resolve(in.tensor);
      const problem::Tensor& base = s.need(v.base);
      // cross_entropy's labels; a scan's mask (pass_expand_ops)
      bool label_input = (op.op == "cross_entropy" || op.op == "cumsum") && k == 1;
      if (!float_dtype(base.dtype) && !label_input)
        return s.unsupported(op.id, "operand '" + in.tensor + "' is " + problem::dtype_name(base.dtype) +
                                        "; stages read f16, bf16 or f32 tensors",
                             kIntegerRoles);
      if (c == OpClass::gemm || c == OpClass::conv) continue;  // operands may be transposed or reshaped (pass_match_gemm)
      if (s.strided.count(in.tensor)) continue;  // a DSL view, read whole by its copy
      if (v.transposed)
        return s.unsupported(op.id, "reads '" + in.tensor + "', a transposed view of '" + v.base +
                                        "'; only GEMM operands can be transposed",
                             "make the tensor contiguous in another layout in PyTorch, or transpose the GEMM instead");
      const auto& seen = s.need(in.tensor).shape;
      const bool row_vector = seen.size() == 2 && seen[1] == 1 &&  // [len, 1] of a [len] (pass_match_conv)
                              lower_decl_shape(s, v.base) == std::vector<int64_t>{seen[0]};
      if (seen != base.shape && squeeze_leading(seen) != squeeze_leading(base.shape) && !row_vector &&
          lower_decl_shape(s, v.base) != seen)  // a view the lowering declares (pass_expand_ops)
        return s.unsupported(op.id, "reads '" + in.tensor + "' " + shape_str(seen) + ", a reshape of '" + v.base +
                                        "' " + shape_str(base.shape) + "; only GEMM operands can be reshaped views");
    }
    for (const auto& o : op.outputs) {
      const problem::Tensor& t = s.need(o);
      bool index_out = op.op == "argmax" || op.op == "argmin" || ((op.op == "max" || op.op == "min") && &o != &op.outputs[0]);
      if (!float_dtype(t.dtype) && !index_out)
        return s.unsupported(op.id, "writes '" + o + "' as " + problem::dtype_name(t.dtype) +
                                        "; stages write f16, bf16 or f32",
                             kIntegerRoles);
      if (t.dtype == problem::DType::f64 || t.shape.size() > 6)
        return s.unsupported(op.id, "'" + o + "' is " + problem::dtype_name(t.dtype) + shape_str(t.shape) +
                                        ", outside the language's tensors");
    }
  }
  for (const auto& o : s.problem.outputs) {
    const problem::Tensor& t = s.need(o);
    if (t.kind == problem::TensorKind::input || t.kind == problem::TensorKind::parameter)
      return make_error(ErrorCode::unsupported,
                        s.label() + ": output '" + o + "' is an input returned unchanged; the language has no copy stage");
  }
  return ok_status();
}

}  // namespace ucut::lower
