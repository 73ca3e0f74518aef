// window stages: the op, the channels-first input and (sum) the depthwise weight and bias, the
// window / stride / padding / dilation settings with PyTorch's pooling rules, the output shape,
// the knobs and their launch plan (window_rules.h), and the epilogue (full loads broadcast to the
// output's shape).
#include <algorithm>
#include <map>

#include "dsl/checker.h"
#include "dsl/names.h"
#include "dsl/window_rules.h"

namespace ucut::dsl::detail {

namespace {

const char* const kLayoutHint =
    "window reads channels-first tensors as PyTorch holds them: x [N, C, W], [N, C, H, W] or [N, C, D, H, W]";

bool loads_view(const Program& p, const Expr& e) {
  if (e.kind == Expr::Kind::load) {
    const Tensor* t = p.find_tensor(e.name);
    if (t && t->role == TensorRole::view) return true;
  }
  return std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return loads_view(p, *a); });
}

std::string ones(size_t r, const char* v) {
  std::string s = "[";
  for (size_t i = 0; i < r; ++i) s += (i ? ", " : "") + std::string(v);
  return s + "]";
}

}  // namespace

bool Checker::check_window(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  const std::vector<std::string> ops = {"max", "avg", "sum", "adaptive_avg"};
  const std::string example = "write 'stage y = window max(x, window=[3, 3], stride=[2, 2], padding=[1, 1])'";
  if (!s.op) {
    error(s.kind.span, "window stages name their reduction (max, avg, sum, adaptive_avg)", example);
    return false;
  }
  const std::string& op = s.op->text;
  if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
    std::string g = diag_closest(op, ops);
    error(s.op->span, "unknown window operation '" + op + "'",
          g.empty() ? "window operations: max, avg, sum (a depthwise conv), adaptive_avg" : "did you mean '" + g + "'?");
    return false;
  }
  if (s.tuple_outputs || s.outputs.size() != 1) {
    error(s.outputs[0].span, "a window stage has one output", example);
    return false;
  }
  std::vector<std::string> keys;
  if (op == "max") keys = {"window", "stride", "padding", "dilation", "ceil_mode"};
  else if (op == "avg") keys = {"window", "stride", "padding", "ceil_mode", "count_include_pad", "divisor"};
  else if (op == "sum") keys = {"weight", "bias", "stride", "padding", "dilation"};
  std::vector<const AstArg*> pos;
  std::map<std::string, const AstArg*> kw;
  if (!split_stage_args(s, "window " + op, keys, "window's input is a tensor name", example,
                        "remove it (the output's shape sets the windows)", pos, kw))
    return false;
  if (pos.size() != 1) {
    error(pos.size() > 1 ? pos[1]->span : s.op->span,
          "window " + op + " takes one tensor argument, found " + std::to_string(pos.size()),
          op == "sum" ? "write 'window sum(x, weight=w, bias=b)'" : "write 'window " + op + "(x, ...)'");
    return false;
  }
  if (!check_blocks_allowed(s, {"epilogue"})) return false;
  const Tensor* x = need_tensor(pos[0]->name, "window input");
  if (!x) return false;
  reads.push_back({x->name, pos[0]->span});
  WindowStage w;
  w.op = op;
  w.x = x->name;
  const size_t xr = x->shape.size();
  if (xr < 3 || xr > 5) {
    error(pos[0]->span, "window's input '" + x->name + "' has rank " + std::to_string(xr) + "; expected 3, 4 or 5",
          kLayoutHint);
    return false;
  }
  if (!dsl_dtype_is_float(x->dtype)) {
    error(pos[0]->span, "window reads f16, bf16 or f32; '" + x->name + "' is " + dsl_dtype_str(x->dtype),
          "convert it in the PyTorch program");
    return false;
  }
  w.rank = static_cast<int>(xr) - 2;
  const size_t r = static_cast<size_t>(w.rank);
  w.batch = x->shape[0];
  w.channels = x->shape[1];
  w.in_size.assign(x->shape.begin() + 2, x->shape.end());
  const Tensor* out = tensor(st.outputs[0]);

  // a tensor setting (sum's weight and bias)
  auto tensor_arg = [&](const char* key) -> const Tensor* {
    auto it = kw.find(key);
    if (it == kw.end()) return nullptr;
    const AstArg& a = *it->second;
    if (a.kind != AstArg::Kind::name || a.transposed) {
      error(a.span, std::string(key) + " takes a tensor name", std::string("write ") + key + "=<tensor>");
      return nullptr;
    }
    const Tensor* t = need_tensor(a.name, key);
    if (t) reads.push_back({t->name, a.span});
    return t;
  };
  // a list setting: one entry per spatial dim (padding: also lo..., hi...)
  auto list = [&](const char* key, int64_t dflt, int64_t lo, bool two_sided, std::vector<int64_t>& dst) {
    dst.assign(r, dflt);
    auto it = kw.find(key);
    if (it == kw.end()) return true;
    const AstArg& a = *it->second;
    const bool sizes = a.kind == AstArg::Kind::list && (a.list.size() == r || (two_sided && a.list.size() == 2 * r));
    if (!sizes) {
      error(a.span, std::string(key) + " lists one integer per spatial dim of '" + x->name + "', " + std::to_string(r) +
                        (two_sided ? " (each side) or " + std::to_string(2 * r) + " (low sides, then high sides)" : ""),
            std::string("x is channels-first, [N, C, spatial...]: write ") + key + "=" + ones(r, lo ? "1" : "0"));
      return false;
    }
    for (int64_t v : a.list)
      if (v < lo || v > 65536) {
        error(a.span, std::string(key) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", 65536]",
              std::string(key) + (lo ? " is at least 1" : " is not negative"));
        return false;
      }
    std::copy(a.list.begin(), a.list.begin() + static_cast<long>(r), dst.begin());
    if (two_sided) w.pad_hi.assign(a.list.end() - static_cast<long>(r), a.list.end());
    return true;
  };
  auto flag = [&](const char* key, bool dflt, bool& dst) {
    dst = dflt;
    auto it = kw.find(key);
    if (it == kw.end()) return true;
    const AstArg& a = *it->second;
    if (a.kind != AstArg::Kind::name || (a.name.text != "true" && a.name.text != "false")) {
      error(a.span, std::string(key) + " is true or false", std::string("write ") + key + "=" + (dflt ? "false" : "true"));
      return false;
    }
    dst = a.name.text == "true";
    return true;
  };

  if (op == "adaptive_avg") {
    // the output's spatial sizes choose the windows
    std::vector<int64_t> global{w.batch, w.channels};
    global.resize(xr, 1);
    if (out->shape.size() != xr || out->shape[0] != w.batch || out->shape[1] != w.channels) {
      error(s.outputs[0].span, "adaptive_avg of " + tensor_str(*x) + " writes [" + std::to_string(w.batch) + ", " +
                                   std::to_string(w.channels) + ", <output sizes>], but '" + out->name + "' is " +
                                   shape_str(out->shape),
            "declare '" + out->name + "' with x's batch and channels and the pooled sizes, e.g. " +
                shape_str(global) + " for a global pool");
      return false;
    }
    w.out_channels = w.channels;
    w.out_size.assign(out->shape.begin() + 2, out->shape.end());
    for (size_t i = 0; i < r; ++i)
      if (w.out_size[i] < 1) {
        error(s.outputs[0].span, "adaptive_avg's output sizes are at least 1", "declare '" + out->name + "' with pooled sizes of 1 or more");
        return false;
      }
  } else {
    if (op == "sum") {
      const Tensor* wt = tensor_arg("weight");
      if (!wt) {
        if (!kw.count("weight"))
          error(s.op->span, "window sum needs its per-channel weight", "write 'window sum(x, weight=w)', w [C*mult, 1, k...]");
        return false;
      }
      w.weight = wt->name;
      if (wt->shape.size() != xr || wt->shape[1] != 1 || wt->shape[0] < 1 || wt->shape[0] % w.channels != 0) {
        error(kw["weight"]->span, "the weight '" + wt->name + "' is " + shape_str(wt->shape) + ", but a depthwise " +
                                      std::to_string(w.rank) + "-D window sum over " + tensor_str(*x) +
                                      " takes [C*mult, 1, k...] with C = " + std::to_string(w.channels),
              "pass the depthwise conv's weight as PyTorch holds it (groups = C: [C*mult, 1, " +
                  (r == 1 ? std::string("S") : r == 2 ? "R, S" : "T, R, S") + "])");
        return false;
      }
      if (!dsl_dtype_is_float(wt->dtype)) {
        error(kw["weight"]->span, "the weight '" + wt->name + "' is " + dsl_dtype_str(wt->dtype) + "; window reads f16, bf16 or f32",
              "convert it in the PyTorch program");
        return false;
      }
      w.out_channels = wt->shape[0];
      w.mult = w.out_channels / w.channels;
      w.window.assign(wt->shape.begin() + 2, wt->shape.end());
      if (kw.count("bias")) {
        const Tensor* b = tensor_arg("bias");
        if (!b) return false;
        if (b->shape != std::vector<int64_t>{w.out_channels} || !dsl_dtype_is_float(b->dtype)) {
          error(kw["bias"]->span, "the bias '" + b->name + "' is " + tensor_str(*b) + "; it is one float per output channel, [" +
                                      std::to_string(w.out_channels) + "]",
                "pass the conv's bias [" + std::to_string(w.out_channels) + "]");
          return false;
        }
        w.bias = b->name;
      }
    } else {
      w.out_channels = w.channels;
      if (!kw.count("window")) {
        error(s.op->span, "window " + op + " needs its window size", "write window=" + ones(r, "3"));
        return false;
      }
      if (!list("window", 1, 1, false, w.window)) return false;
    }
    // pools stride by their window unless told; a conv by 1
    if (!list("stride", 1, 1, false, w.stride)) return false;
    if (!kw.count("stride") && op != "sum") w.stride = w.window;
    if (!list("dilation", 1, 1, false, w.dilation)) return false;
    w.pad_hi.clear();
    if (!list("padding", 0, 0, true, w.pad_lo)) return false;
    if (w.pad_hi.size() != r || !(kw.count("padding") && kw["padding"]->list.size() == 2 * r)) w.pad_hi = w.pad_lo;
    if (!flag("ceil_mode", false, w.ceil_mode) || !flag("count_include_pad", true, w.count_include_pad)) return false;
    if (auto it = kw.find("divisor"); it != kw.end()) {  // PyTorch's divisor_override
      const AstArg& a = *it->second;
      if (a.kind != AstArg::Kind::number || a.number < 1 || a.number > 65536 || a.number != static_cast<double>(static_cast<int64_t>(a.number))) {
        error(a.span, "divisor is a whole number from 1 to 65536 (avg_pool's divisor_override)",
              "write divisor=9, or leave it out to divide by the window's size");
        return false;
      }
      w.divisor = static_cast<int64_t>(a.number);
    }
    if (op != "sum")
      for (size_t i = 0; i < r; ++i) {
        // PyTorch's rule (pool*_shape_check), so that no window lies wholly in the padding
        const int64_t half = w.window[i] / 2;
        if (w.pad_lo[i] > half || w.pad_hi[i] > half) {
          error(kw["padding"]->span, "padding " + std::to_string(std::max(w.pad_lo[i], w.pad_hi[i])) + " along spatial dim " +
                                         std::to_string(i) + " is more than half the window (" + std::to_string(w.window[i]) + " / 2)",
                "pad at most half the window, as PyTorch's pooling requires");
          return false;
        }
      }
    w.out_size.resize(r);
    std::vector<int64_t> want{w.batch, w.out_channels};
    for (size_t i = 0; i < r; ++i) {
      w.out_size[i] = window_out_size(w.in_size[i], w.window[i], w.stride[i], w.pad_lo[i], w.pad_hi[i], w.dilation[i],
                                      w.ceil_mode);
      if (w.out_size[i] < 1) {
        error(op == "sum" ? kw["weight"]->span : kw["window"]->span,
              "the window (" + std::to_string(w.window[i]) + " taps, dilation " + std::to_string(w.dilation[i]) +
                  ") is wider than the padded input (" + std::to_string(w.in_size[i] + w.pad_lo[i] + w.pad_hi[i]) +
                  ") along spatial dim " + std::to_string(i),
              "check the window and the padding");
        return false;
      }
      want.push_back(w.out_size[i]);
    }
    if (out->shape != want) {
      error(s.outputs[0].span, "the window " + op + " computes " + shape_str(want) + " but '" + out->name + "' is " +
                                   shape_str(out->shape),
            "declare '" + out->name + " : " + dsl_dtype_str(out->dtype) + shape_str(want) + "'");
      return false;
    }
  }
  if (!dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "window outputs are f16, bf16 or f32; '" + out->name + "' is " + dsl_dtype_str(out->dtype),
          "declare '" + out->name + "' as f32 (or f16/bf16)");
    return false;
  }
  bool ok = true;
  w.knobs.threads = int_knob(s, "threads", 32, 1024, ok, "threads is a multiple of 32 from 32 to 1024");
  w.knobs.items_per_thread = int_knob(s, "items_per_thread", 1, 8, ok, "items_per_thread is 1 to 8");
  if (!ok) return false;
  if (auto plan = window_plan(w); !plan) {
    const AstKnob* k = set_knob(s, "items_per_thread");
    if (!k) k = set_knob(s, "threads");
    error(k ? k->value_span : s.kind.span, "no launch plan for these knobs: " + plan.error().message, plan.error().hint);
    return false;
  }

  BlockRules rules;
  rules.what = "the epilogue of this window stage";
  rules.target = out->name;
  rules.broadcast = true;
  rules.allow_vectors = false;
  rules.index_hint = "a window epilogue has no element position: apply it in an elementwise stage after the window";
  rules.shape = out->shape;
  rules.cols = out->shape.back();
  rules.rows = out->numel() / rules.cols;
  std::vector<TensorUse> extra;
  if (!check_block(block(s, "epilogue"), rules, s.kind.span, w.epilogue, reads, extra)) return false;
  for (const auto& stmt : w.epilogue.stmts)
    if (stmt.value && loads_view(prog_, *stmt.value)) {
      error(stmt.span, "a window epilogue reads declared tensors, not views",
            "copy the view in an elementwise stage first, or apply this step in an elementwise stage after the window");
      return false;
    }
  st.body = std::move(w);
  return true;
}

}  // namespace ucut::dsl::detail
