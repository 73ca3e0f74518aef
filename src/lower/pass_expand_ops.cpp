// pass_expand_ops: composite ops that are one elementwise expression over views of their inputs.
//   batch_norm in eval mode (running statistics): per channel (dim 1) an affine map,
//     y = (x - mean[c]) * rsqrt(var[c] + eps) * weight[c] + bias[c];
//   the op becomes an elementwise op (lower_expr_op) whose per-channel vectors are read through
//   [C, 1, ..., 1] views (declared so, and broadcast NumPy-style by the elementwise stage).
// Training-mode batch_norm (batch statistics) stays unsupported with its reason. Runs after
// pass_views, before pass_check_ops. Golden test: tests/golden/lower/batch_norm_eval.json.
#include "lower/passes.h"

namespace ucut::lower {

Status pass_expand_ops(LowerState& s) {
  const size_t n = s.ops.size();
  for (size_t i = 0; i < n; ++i) {
    if (s.dead[i] || s.ops[i].op != "batch_norm") continue;
    if (attr_bool(s.ops[i], "training", true)) continue;  // pass_check_ops gives the reason
    const problem::Op op = s.ops[i];
    if (op.inputs.size() < 3 || !op.inputs[0].is_tensor() || !op.inputs[1].is_tensor() || !op.inputs[2].is_tensor())
      return s.unsupported(op.id, "batch_norm in eval mode needs its running mean and variance tensors");
    const std::vector<int64_t> x = s.need(op.inputs[0].tensor).shape;  // a copy: add_tensor grows s.tensors
    if (x.size() < 2) return s.unsupported(op.id, "batch_norm needs an input of rank 2 or more (channels at dim 1)");
    std::vector<int64_t> per_channel(x.size() - 1, 1);
    per_channel[0] = x[1];
    for (size_t k = 1; k < op.inputs.size() && k < 5; ++k) {
      if (!op.inputs[k].is_tensor()) continue;
      View v = s.resolve(op.inputs[k].tensor);
      const problem::Tensor t = s.need(v.base);  // a copy, as above
      if (v.transposed || t.numel() != x[1])
        return s.unsupported(op.id, "batch_norm's '" + op.inputs[k].tensor + "' must hold one value per channel (" +
                                        std::to_string(x[1]) + ")");
      auto it = s.decl_shape.find(v.base);
      if (it != s.decl_shape.end() && it->second != per_channel)
        return s.unsupported(op.id, "'" + v.base + "' is read with two different shapes");
      s.decl_shape[v.base] = per_channel;
      std::string view = s.add_tensor(v.base + "_per_channel", t.dtype, per_channel);
      s.views[view] = View{v.base, false};
      s.ops[i].inputs[k].tensor = view;
    }
    s.cls[i] = OpClass::elementwise;
  }
  return ok_status();
}

}  // namespace ucut::lower
