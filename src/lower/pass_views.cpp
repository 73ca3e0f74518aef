// pass_views: turns view ops into aliases (LowerState::views) so later passes see stored
// tensors: reshape/view/flatten/squeeze/unsqueeze/contiguous/clone/dropout (eval) alias their
// input; t/transpose/permute that swap the last two dims alias it transposed, which a GEMM
// operand expresses as `X.T`. Other permutes, and reshapes of them or of transposed tensors,
// move data: they stay without an alias for pass_strided_copies. Whether a consumer can read an
// alias is checked by pass_check_ops. Runs after pass_dead_ops. Golden tests: tests/golden/lower/matmul_transposed.json,
// window_global_avgpool_squeezed.json (a returned chain of squeezes).
#include "lower/passes.h"

namespace ucut::lower {

namespace {

// Whether a transpose/permute swaps exactly the last two dims of a rank-r tensor.
bool swaps_last_two(const problem::Op& op, int rank) {
  auto p = op_permutation(op, rank);
  return p && permutation_swaps_last_two(*p);
}

}  // namespace

Status pass_views(LowerState& s) {
  for (const auto& op : s.ops) {
    if (s.dead[static_cast<size_t>(op.id)] || s.cls[static_cast<size_t>(op.id)] != OpClass::view) continue;
    if (op.inputs.empty() || !op.inputs[0].is_tensor() || op.outputs.size() != 1)
      return s.unsupported(op.id, "a view op needs one tensor input and one output");
    const std::string& in = op.inputs[0].tensor;
    const std::string& out = op.outputs[0];
    int rank = static_cast<int>(s.need(in).shape.size());
    View v{in, false};
    if (op.op == "t" || op.op == "transpose" || op.op == "permute") {
      // other permutations move data: pass_strided_copies reads them through a DSL view
      if (!swaps_last_two(op, rank)) continue;
      v.transposed = true;
    } else if (op.op == "dropout") {
      if (attr_bool(op, "training", false) || attr_bool(op, "train", false))
        return s.unsupported(op.id, "dropout in training mode is random; only eval-mode dropout (identity) lowers");
    } else if (op.op == "expand") {
      if (s.need(out).shape != s.need(in).shape && s.need(out).numel() != s.need(in).numel()) {
        // An expand is a broadcast: consumers read the input with broadcasting instead.
      }
    } else if (s.resolve(in).transposed && s.need(out).shape != s.need(in).shape) {
      continue;  // a reshape of a transposed tensor needs a copy: pass_strided_copies
    } else if (!s.views.count(in) && s.writer(in) >= 0 && s.cls[static_cast<size_t>(s.writer(in))] == OpClass::view &&
               s.ops[static_cast<size_t>(s.writer(in))].op != "expand") {
      continue;  // a view of a data-moving permute (no alias): pass_strided_copies
    }
    // `return y.view(...)`: the output is what the stage must write, so the intermediate
    // becomes the alias of the output instead (same elements, same order).
    const problem::Tensor& src = s.need(in);
    if (!v.transposed && s.is_output(out) && src.kind == problem::TensorKind::intermediate &&
        !s.views.count(in) && !s.is_output(in) && s.consumers(in).empty()) {
      s.views[in] = View{out, false};
      continue;
    }
    // ... also through earlier views of it (x.squeeze(-1).squeeze(-1) returned): the stored base
    // and every alias of it become aliases of the output
    if (!v.transposed && s.is_output(out) && s.views.count(in)) {
      const View b = s.resolve(in);
      const problem::Tensor& base = s.need(b.base);
      bool plain = !b.transposed && base.kind == problem::TensorKind::intermediate && !s.is_output(b.base) &&
                   s.consumers(b.base).empty();
      for (const auto& [alias, to] : s.views) plain = plain && (to.base != b.base || !to.transposed);
      if (plain) {
        for (auto& [alias, to] : s.views)
          if (to.base == b.base) to = View{out, false};
        s.views[b.base] = View{out, false};
        continue;
      }
    }
    if (s.is_output(out))
      return s.unsupported(op.id, "output '" + out + "' is a " + op.op + " of '" + in +
                                      "', which other ops also read; a stage cannot write one tensor under two shapes",
                           "return the tensor before the " + op.op + ", or reshape it in PyTorch after the kernel");
    s.views[out] = v;
  }
  return ok_status();
}

}  // namespace ucut::lower
