// conv stages: operands (channels-last x, KRSC filter), the stride / padding / dilation settings,
// the output shape, dtypes and precision, the epilogue (the gemm stage's, over M = N*P*Q rows and
// K columns), and the code generator's legality rules (conv_rules.h).
#include <algorithm>
#include <map>

#include "dsl/checker.h"
#include "dsl/conv_rules.h"
#include "dsl/names.h"

namespace ucut::dsl::detail {

namespace {

const char* const kLayoutHint =
    "conv reads channels-last tensors: x [N, W, C], [N, H, W, C] or [N, D, H, W, C] and the filter "
    "[K, (T,) (R,) S, C]; relayout a PyTorch NCHW tensor or [K, C, R, S] weight in an elementwise stage over a "
    "view first (docs/language.md, \"Convolution\")";

bool has_row_load(const Expr& e) {
  if (e.kind == Expr::Kind::load && e.mode == LoadMode::row) return true;
  return std::any_of(e.args.begin(), e.args.end(), [](const ExprPtr& a) { return has_row_load(*a); });
}

}  // namespace

bool Checker::check_conv(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  const std::string example = "write 'stage y = conv(x, w, stride=[1, 1], padding=[1, 1], dilation=[1, 1])'";
  if (s.op) {
    error(s.op->span, "conv takes its operands in parentheses", example);
    return false;
  }
  if (s.tuple_outputs || s.outputs.size() != 1) {
    error(s.outputs[0].span, "a conv stage has one output", example);
    return false;
  }
  std::vector<const AstArg*> pos;
  std::map<std::string, const AstArg*> kw;
  if (!split_stage_args(s, "conv", {"stride", "padding", "dilation", "groups"}, "conv's operands are tensor names",
                        example, "", pos, kw))
    return false;
  if (pos.size() != 2) {
    error(pos.size() > 2 ? pos[2]->span : s.kind.span,
          "conv takes two tensor arguments (the input and the filter), found " + std::to_string(pos.size()), example);
    return false;
  }
  if (!check_blocks_allowed(s, {"epilogue"})) return false;
  const Tensor* x = need_tensor(pos[0]->name, "conv input");
  const Tensor* w = need_tensor(pos[1]->name, "conv filter");
  if (!x || !w) return false;
  reads.push_back({x->name, pos[0]->span});
  reads.push_back({w->name, pos[1]->span});
  ConvStage c;
  c.x = x->name;
  c.w = w->name;
  if (!parse_gemm_knobs(*this, s, c.knobs)) return false;

  if (auto it = kw.find("groups"); it != kw.end()) {
    const AstArg& g = *it->second;
    if (g.kind != AstArg::Kind::number || g.number != 1) {
      error(g.span, "conv stages run groups = 1 only (CUTLASS 4.2's sm90 conv has no grouped convolution)",
            "a depthwise conv (groups = C) is a window stage on the NCHW tensors ('window sum(x, weight=w)'); write "
            "a grouped one as one conv per group on channel slices, or run it in a torch stage");
      return false;
    }
  }
  const size_t xr = x->shape.size();
  if (xr < 3 || xr > 5) {
    error(pos[0]->span, "conv's input '" + x->name + "' has rank " + std::to_string(xr) + "; expected 3, 4 or 5",
          kLayoutHint);
    return false;
  }
  c.rank = static_cast<int>(xr) - 2;
  const size_t r = static_cast<size_t>(c.rank);
  if (w->shape.size() != xr || w->shape.back() != x->shape.back()) {
    error(pos[1]->span, "the filter '" + w->name + "' is " + shape_str(w->shape) + ", but a " + std::to_string(c.rank) +
                            "-D conv of " + tensor_str(*x) + " takes a filter [K, " +
                            (c.rank == 3 ? "T, R, S" : c.rank == 2 ? "R, S" : "S") + ", " +
                            std::to_string(x->shape.back()) + "] (KRSC: C last, as x's)",
          kLayoutHint);
    return false;
  }
  // stride, padding, dilation: one entry per spatial dim (padding: also lo..., hi...)
  auto list = [&](const char* key, int64_t dflt, int64_t lo, bool two_sided, std::vector<int64_t>& out) {
    out.assign(r, dflt);
    auto it = kw.find(key);
    if (it == kw.end()) return true;
    const AstArg& a = *it->second;
    const bool sizes = a.kind == AstArg::Kind::list && (a.list.size() == r || (two_sided && a.list.size() == 2 * r));
    if (!sizes) {
      error(a.span, std::string(key) + " of a " + std::to_string(c.rank) + "-D conv is a list of " + std::to_string(r) +
                        (two_sided ? " (each side) or " + std::to_string(2 * r) + " (low sides, then high sides)" : "") +
                        " integers",
            std::string("write ") + key + "=[" + (r == 1 ? "1" : r == 2 ? "1, 1" : "1, 1, 1") + "]");
      return false;
    }
    for (int64_t v : a.list)
      if (v < lo || v > 65536) {
        error(a.span, std::string(key) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", 65536]",
              std::string(key) + (lo ? " is at least 1" : " is not negative"));
        return false;
      }
    std::copy(a.list.begin(), a.list.begin() + static_cast<long>(r), out.begin());
    return true;
  };
  if (!list("stride", 1, 1, false, c.stride) || !list("dilation", 1, 1, false, c.dilation) ||
      !list("padding", 0, 0, true, c.pad_lo))
    return false;
  c.pad_hi = c.pad_lo;
  if (auto it = kw.find("padding"); it != kw.end() && it->second->list.size() == 2 * r)
    std::copy(it->second->list.begin() + static_cast<long>(r), it->second->list.end(), c.pad_hi.begin());

  for (const Tensor* t : {x, w})
    if (!dsl_dtype_is_float(t->dtype)) {
      error(t == x ? pos[0]->span : pos[1]->span,
            "conv operands are f16, bf16 or f32; '" + t->name + "' is " + dsl_dtype_str(t->dtype),
            "convert it in the layout stage");
      return false;
    }
  if (w->dtype != x->dtype) {
    error(pos[1]->span, "conv operands have different dtypes: '" + x->name + "' is " + dsl_dtype_str(x->dtype) +
                            ", '" + w->name + "' is " + dsl_dtype_str(w->dtype),
          "convert the filter to " + std::string(dsl_dtype_str(x->dtype)) + " in its layout stage");
    return false;
  }
  c.batch = x->shape[0];
  c.channels = x->shape.back();
  c.out_channels = w->shape[0];
  c.in_size.assign(x->shape.begin() + 1, x->shape.end() - 1);
  c.filter.assign(w->shape.begin() + 1, w->shape.end() - 1);
  c.out_size.resize(r);
  std::vector<int64_t> want{c.batch};
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = c.in_size[i] + c.pad_lo[i] + c.pad_hi[i] - c.dilation[i] * (c.filter[i] - 1) - 1;
    if (span < 0) {
      error(pos[1]->span, "the filter (" + std::to_string(c.filter[i]) + " taps, dilation " +
                              std::to_string(c.dilation[i]) + ") is wider than the padded input (" +
                              std::to_string(c.in_size[i] + c.pad_lo[i] + c.pad_hi[i]) + ") along spatial dim " +
                              std::to_string(i),
            "check the filter's shape and the padding");
      return false;
    }
    c.out_size[i] = span / c.stride[i] + 1;
    want.push_back(c.out_size[i]);
  }
  want.push_back(c.out_channels);
  const Tensor* out = tensor(st.outputs[0]);
  if (out->shape != want) {
    error(s.outputs[0].span, "the conv computes " + shape_str(want) + " (channels-last) but '" + out->name + "' is " +
                                 shape_str(out->shape),
          "declare '" + out->name + " : " + dsl_dtype_str(out->dtype) + shape_str(want) + "'");
    return false;
  }
  if (!dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "conv outputs are f16, bf16 or f32; '" + out->name + "' is " + dsl_dtype_str(out->dtype),
          "declare '" + out->name + "' as f32 (or f16/bf16)");
    return false;
  }
  if (c.knobs.precision != Precision::auto_) {
    const DType need = c.knobs.precision == Precision::bf16 ? DType::bf16
                       : c.knobs.precision == Precision::f16 ? DType::f16 : DType::f32;
    if (need != x->dtype) {
      const AstKnob* k = knob(s, "precision");
      error(k ? k->value_span : s.kind.span,
            std::string("precision ") + dsl_precision_str(c.knobs.precision) + " needs " + dsl_dtype_str(need) +
                " operands, but '" + x->name + "' and '" + w->name + "' are " + dsl_dtype_str(x->dtype),
            x->dtype == DType::f32 ? "use precision tf32 on f32 data, or convert x and w to bf16 in their layout stages"
                                   : "use precision " + std::string(dsl_dtype_str(x->dtype)));
      return false;
    }
  }
  c.m = c.batch;
  c.k = c.channels;
  for (size_t i = 0; i < r; ++i) {
    c.m *= c.out_size[i];
    c.k *= c.filter[i];
  }
  c.n = c.out_channels;

  BlockRules rules;
  rules.what = "the epilogue of this conv";
  rules.target = out->name;
  rules.index_hint = "a conv epilogue has no element position: apply it in an elementwise stage after the conv";
  rules.shape = want;
  rules.rows = c.m;
  rules.cols = c.n;
  std::vector<TensorUse> extra;
  if (!check_block(block(s, "epilogue"), rules, s.kind.span, c.epilogue, reads, extra)) return false;
  for (const auto& stmt : c.epilogue.stmts)
    if (stmt.value && has_row_load(*stmt.value)) {
      error(stmt.span, "a conv epilogue reads v[col] (one value per output channel) and tensors of the output's shape, "
                       "not v[row]",
            "read a per-pixel value as a full tensor of the output's shape");
      return false;
    }
  bool ok = true;
  for (const auto& v : conv_rules_check(prog_, c, *out)) {
    const AstKnob* k = knob(s, v.knob);
    Span at = k ? k->value_span
              : v.knob == "x"   ? pos[0]->span
              : v.knob == "w"   ? pos[1]->span
              : v.knob == "out" ? s.outputs[0].span
              : kw.count(v.knob) ? kw[v.knob]->span
                                 : s.kind.span;
    error(at, v.message, v.hint);
    ok = false;
  }
  st.body = std::move(c);
  return ok;
}

}  // namespace ucut::dsl::detail
