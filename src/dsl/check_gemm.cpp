// gemm and grouped_gemm stages: operands, dimensions, dtypes and precision, knob values, the
// epilogue, and the code generator's legality rules (gemm_rules.h).
#include <algorithm>

#include "dsl/checker.h"
#include "dsl/gemm_rules.h"
#include "dsl/names.h"

namespace ucut::dsl::detail {

namespace {

std::optional<std::vector<int64_t>> dims_knob(Checker& c, const AstStage& s, const std::string& name, size_t n,
                                              const std::string& example, bool& ok) {
  const AstKnob* k = c.set_knob(s, name);
  if (!k) return std::nullopt;
  if (k->kind != AstKnob::Kind::dims || k->dims.size() != n) {
    std::string g = k->kind == AstKnob::Kind::word ? diag_closest(k->text, {"auto"}) : "";
    c.error(k->value_span, "invalid value '" + k->text + "' for " + name + ": expected auto or " + example,
            g.empty() ? "write '" + name + " " + example + "'" : "did you mean 'auto'?");
    ok = false;
    return std::nullopt;
  }
  return k->dims;
}

}  // namespace

bool parse_gemm_knobs(Checker& c, const AstStage& s, GemmKnobs& k) {
  bool ok = true;
  int p = c.word_knob(s, "precision", {"auto", "f16", "bf16", "tf32", "f32x3", "f32", "f32x3s", "tf32m", "f32x3k", "f32x3w", "bf16x3"}, ok);
  k.precision = static_cast<Precision>(p);
  if (auto t = dims_knob(c, s, "tile", 3, "MxNxK such as 128x128x64", ok)) {
    const AstKnob* kn = c.knob(s, "tile");
    auto& d = *t;
    const char* axis[] = {"M", "N", "K"};
    for (int i = 0; i < 3; ++i)
      if (d[i] < 8 || d[i] > 256 || d[i] % 8 != 0) {
        c.error(kn->value_span, std::string("tile ") + axis[i] + " = " + std::to_string(d[i]) +
                                    " is not a multiple of 8 from 8 to 256",
                "common tiles: 128x128x64, 128x256x64, 256x128x64 (bf16/f16), 128x128x32 (tf32)");
        ok = false;
        break;
      }
    if (ok) k.tile = TileShape{static_cast<int>(d[0]), static_cast<int>(d[1]), static_cast<int>(d[2])};
  }
  if (auto cl = dims_knob(c, s, "cluster", 2, "MxN such as 2x1", ok)) {
    const AstKnob* kn = c.knob(s, "cluster");
    auto& d = *cl;
    auto pow2 = [](int64_t v) { return v >= 1 && v <= 8 && (v & (v - 1)) == 0; };
    if (!pow2(d[0]) || !pow2(d[1]) || d[0] * d[1] > 8) {
      c.error(kn->value_span, "cluster " + kn->text + " is not legal: each side is 1, 2, 4 or 8 and the cluster has at most 8 blocks",
              "use 1x1, 2x1, 1x2, 2x2, 4x1 or 1x4");
      ok = false;
    } else {
      k.cluster = ClusterShape{static_cast<int>(d[0]), static_cast<int>(d[1])};
    }
  }
  k.stages = c.int_knob(s, "stages", 1, 16, ok, "pipeline stages are usually 2 to 7; 'auto' fills shared memory");
  k.schedule =
      static_cast<Schedule>(c.word_knob(s, "schedule", {"auto", "cooperative", "pingpong", "gemv16", "gemv32"}, ok));
  k.scheduler = static_cast<TileScheduler>(c.word_knob(s, "scheduler", {"auto", "persistent", "stream_k"}, ok));
  k.split_k = c.int_knob(s, "split_k", 1, kGemvMaxSplitK, ok, "split_k 1 means no split");
  k.raster = static_cast<Raster>(c.word_knob(s, "raster", {"auto", "along_m", "along_n"}, ok));
  k.swizzle = c.int_knob(s, "swizzle", 1, 8, ok, "swizzle is 1, 2, 4 or 8", true);
  k.align = c.int_knob(s, "align", 1, 16, ok, "align is the elements per access: 1, 2, 4, 8 or 16", true);
  k.math = static_cast<MathMode>(c.word_knob(s, "math", {"auto", "precise", "fast"}, ok));
  return ok;
}

// Checks A/B dtypes against each other and the precision; `where` points at the operand.
static bool check_precision(Checker& c, const Tensor& a, const Tensor& b, Precision p, const AstStage& s,
                            Span a_span, Span b_span) {
  if (!dsl_dtype_is_float(a.dtype)) {
    c.error(a_span, "GEMM operands are f16, bf16 or f32; '" + a.name + "' is " + dsl_dtype_str(a.dtype), "convert it in the PyTorch program");
    return false;
  }
  if (!dsl_dtype_is_float(b.dtype)) {
    c.error(b_span, "GEMM operands are f16, bf16 or f32; '" + b.name + "' is " + dsl_dtype_str(b.dtype), "convert it in the PyTorch program");
    return false;
  }
  auto convert_hint = [&](const Tensor& t, DType to) {
    std::string nn = t.name + "_" + dsl_dtype_str(to);
    return "convert it first: 'tmp " + nn + " : " + dsl_dtype_str(to) + Checker::shape_str(t.shape) +
           "' and 'stage " + nn + " = elementwise { body { " + nn + " = " + t.name + " } }'";
  };
  if (a.dtype != b.dtype) {
    c.error(b_span, "GEMM operands have different dtypes: '" + a.name + "' is " + dsl_dtype_str(a.dtype) +
                        ", '" + b.name + "' is " + dsl_dtype_str(b.dtype),
            convert_hint(b, a.dtype));
    return false;
  }
  if (p == Precision::auto_) return true;
  DType need = (p == Precision::f16) ? DType::f16 : (p == Precision::bf16) ? DType::bf16 : DType::f32;
  if (a.dtype == need) return true;
  const AstKnob* k = c.knob(s, "precision");
  std::string alt = a.dtype == DType::f32 ? "tf32 (or f32x3 for fp32-faithful results)" : dsl_dtype_str(a.dtype);
  c.error(k ? k->value_span : s.kind.span,
          std::string("precision ") + dsl_precision_str(p) + " needs " + dsl_dtype_str(need) + " operands, but '" +
              a.name + "' and '" + b.name + "' are " + dsl_dtype_str(a.dtype),
          "use precision " + alt + ", or " + convert_hint(a, need));
  return false;
}

// Resolves (M, K) of A, (K, N) of B and the batch of one GEMM; reports shape mismatches.
static bool gemm_dims(Checker& c, const Operand& a, const Operand& b, const Tensor& ta, const Tensor& tb,
                      int64_t& m, int64_t& n, int64_t& k, int64_t& batch, bool allow_batch) {
  auto rank_ok = [&](const Tensor& t, const Operand& o) {
    size_t r = t.shape.size();
    if (r == 2 || (allow_batch && r == 3)) return true;
    c.error(o.span, "GEMM operand '" + t.name + "' has rank " + std::to_string(r) + "; expected " +
                        (allow_batch ? "2 ([rows, cols]) or 3 ([batch, rows, cols])" : "2 in a grouped GEMM"),
            "declare it as a matrix or a batch of matrices");
    return false;
  };
  if (!rank_ok(ta, a) || !rank_ok(tb, b)) return false;
  auto last2 = [](const Tensor& t, bool tr, int64_t& r, int64_t& cc) {
    size_t z = t.shape.size();
    r = t.shape[z - 2];
    cc = t.shape[z - 1];
    if (tr) std::swap(r, cc);
  };
  int64_t ka = 0, kb = 0;
  last2(ta, a.transposed, m, ka);
  last2(tb, b.transposed, kb, n);
  if (ka != kb) {
    std::string as = a.tensor + (a.transposed ? ".T" : ""), bs = b.tensor + (b.transposed ? ".T" : "");
    std::string hint = "the columns of A must equal the rows of B";
    int64_t m2 = 0, k2 = 0, kb2 = 0, n2 = 0;
    last2(tb, !b.transposed, kb2, n2);
    last2(ta, !a.transposed, m2, k2);
    if (ka == kb2) hint = "write " + b.tensor + (b.transposed ? "" : ".T") + " (an nn.Linear weight is [out, in]: use W.T)";
    else if (k2 == kb) hint = "write " + a.tensor + (a.transposed ? "" : ".T");
    (void)m2;
    (void)n2;
    c.error(b.span, "GEMM inner dimensions differ: " + as + " has K = " + std::to_string(ka) + " but " + bs +
                        " has K = " + std::to_string(kb),
            hint);
    return false;
  }
  k = ka;
  int64_t la = ta.shape.size() == 3 ? ta.shape[0] : 0, lb = tb.shape.size() == 3 ? tb.shape[0] : 0;
  if (la && lb && la != lb) {
    c.error(b.span, "batch sizes differ: '" + ta.name + "' has " + std::to_string(la) + ", '" + tb.name + "' has " +
                        std::to_string(lb),
            "batched operands share the batch size (a rank-2 operand is shared by every batch)");
    return false;
  }
  batch = std::max<int64_t>({la, lb, 1});
  return true;
}

static Span violation_span(Checker& c, const AstStage& s, const RuleViolation& v) {
  if (const AstKnob* k = c.knob(s, v.knob)) return k->value_span;
  if (v.knob == "a" && !s.args.empty()) return s.args[0].span;
  if (v.knob == "b" && s.args.size() > 1) return s.args[1].span;
  if (v.knob == "out" && !s.outputs.empty()) return s.outputs[0].span;
  return s.kind.span;
}

bool Checker::check_gemm(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (s.op) {
    error(s.op->span, "gemm takes its operands in parentheses", "write 'stage y = gemm(x, W.T)'");
    return false;
  }
  if (s.tuple_outputs || s.outputs.size() != 1) {
    error(s.outputs[0].span, "a gemm stage has one output", "for several GEMMs in one launch use grouped_gemm");
    return false;
  }
  if (s.args.size() != 2 || std::any_of(s.args.begin(), s.args.end(), [](const AstArg& a) {
        return a.key || a.kind != AstArg::Kind::name;
      })) {
    error(s.args.empty() ? s.kind.span : s.args[0].span,
          "gemm takes two operands, found " + std::to_string(s.args.size()) + " argument(s)",
          "write gemm(A, B); add .T to transpose, e.g. gemm(x, W.T)");
    return false;
  }
  if (!check_blocks_allowed(s, {"epilogue"})) return false;
  GemmStage g;
  g.a = Operand{s.args[0].name.text, s.args[0].transposed, s.args[0].span};
  g.b = Operand{s.args[1].name.text, s.args[1].transposed, s.args[1].span};
  const Tensor* ta = need_tensor(s.args[0].name, "GEMM operand A");
  const Tensor* tb = need_tensor(s.args[1].name, "GEMM operand B");
  if (!ta || !tb) return false;
  reads.push_back({ta->name, s.args[0].span});
  reads.push_back({tb->name, s.args[1].span});
  if (!parse_gemm_knobs(*this, s, g.knobs)) return false;
  if (!gemm_dims(*this, g.a, g.b, *ta, *tb, g.m, g.n, g.k, g.batch, true)) return false;
  const Tensor* out = tensor(st.outputs[0]);
  bool batched = ta->shape.size() == 3 || tb->shape.size() == 3;
  std::vector<int64_t> want = batched ? std::vector<int64_t>{g.batch, g.m, g.n} : std::vector<int64_t>{g.m, g.n};
  if (out->shape != want) {
    error(s.outputs[0].span, "the gemm computes " + shape_str(want) + " but '" + out->name + "' is " + shape_str(out->shape),
          "declare '" + out->name + " : " + dsl_dtype_str(out->dtype) + shape_str(want) + "'");
    return false;
  }
  if (!dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "gemm outputs are f16, bf16 or f32; '" + out->name + "' is " + dsl_dtype_str(out->dtype),
          "declare '" + out->name + "' as f32 (or f16/bf16)");
    return false;
  }
  if (!check_precision(*this, *ta, *tb, g.knobs.precision, s, s.args[0].span, s.args[1].span)) return false;
  BlockRules rules;
  rules.what = "the epilogue of this gemm";
  rules.target = out->name;
  rules.allow_reductions = true;
  rules.index_hint = "a gemm epilogue has no element position yet: apply it in the next rowwise stage's "
                     "prologue or in an elementwise stage";
  rules.shape = want;
  rules.rows = g.m;
  rules.cols = g.n;
  rules.batch = g.batch;
  std::vector<TensorUse> extra;
  if (!check_block(block(s, "epilogue"), rules, s.kind.span, g.epilogue, reads, extra)) return false;
  for (const auto& e : extra) {
    st.outputs.push_back(e.name);
    reads.push_back({"=" + e.name, e.span});
  }
  bool ok = true;
  for (const auto& v : gemm_rules_check(prog_, g, *out)) {
    error(violation_span(*this, s, v), v.message, v.hint);
    ok = false;
  }
  st.body = std::move(g);
  return ok;
}

bool Checker::check_grouped_gemm(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (s.op) {
    error(s.op->span, "grouped_gemm takes its groups in parentheses", "write 'stage (y0, y1) = grouped_gemm((a0, b0.T), (a1, b1.T))'");
    return false;
  }
  if (s.args.size() < 1 || s.args.size() != s.outputs.size()) {
    error(s.args.empty() ? s.kind.span : s.args[0].span,
          "grouped_gemm has " + std::to_string(s.args.size()) + " group(s) but the stage names " +
              std::to_string(s.outputs.size()) + " output(s)",
          "write one (A, B) pair per output: stage (y0, y1) = grouped_gemm((a0, b0), (a1, b1))");
    return false;
  }
  if (!check_blocks_allowed(s, {"epilogue"})) return false;
  GroupedGemmStage g;
  if (!parse_gemm_knobs(*this, s, g.knobs)) return false;
  std::vector<const Tensor*> outs;
  const Tensor* first_a = nullptr;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const AstArg& p = s.args[i];
    if (p.kind != AstArg::Kind::pair || p.key || p.pair[0].kind != AstArg::Kind::name ||
        p.pair[1].kind != AstArg::Kind::name) {
      error(p.span, "each group of a grouped_gemm is a pair (A, B)", "write grouped_gemm((a0, b0.T), (a1, b1.T))");
      return false;
    }
    Operand a{p.pair[0].name.text, p.pair[0].transposed, p.pair[0].span};
    Operand b{p.pair[1].name.text, p.pair[1].transposed, p.pair[1].span};
    const Tensor* ta = need_tensor(p.pair[0].name, "GEMM operand A");
    const Tensor* tb = need_tensor(p.pair[1].name, "GEMM operand B");
    if (!ta || !tb) return false;
    reads.push_back({ta->name, a.span});
    reads.push_back({tb->name, b.span});
    if (i > 0 && (a.transposed != g.a[0].transposed || b.transposed != g.b[0].transposed)) {
      error(p.span, "every group of a grouped_gemm uses the same transposes as the first group",
            "write all groups as (" + std::string(g.a[0].transposed ? "A.T" : "A") + ", " +
                (g.b[0].transposed ? "B.T" : "B") + ")");
      return false;
    }
    int64_t m = 0, n = 0, k = 0, batch = 1;
    if (!gemm_dims(*this, a, b, *ta, *tb, m, n, k, batch, false)) return false;
    if (first_a && ta->dtype != first_a->dtype) {
      error(a.span, "every group of a grouped_gemm has the same operand dtype", "convert the operands to " +
            std::string(dsl_dtype_str(first_a->dtype)));
      return false;
    }
    if (!check_precision(*this, *ta, *tb, g.knobs.precision, s, a.span, b.span)) return false;
    if (g.knobs.precision == Precision::f32x3s || g.knobs.precision == Precision::f32x3k ||
        g.knobs.precision == Precision::bf16x3) {
      const AstKnob* kn = knob(s, "precision");
      error(kn ? kn->value_span : s.kind.span,
            g.knobs.precision == Precision::f32x3s
                ? "f32x3s (3xTF32 as split stages and three TF32 GEMMs) applies to gemm stages"
            : g.knobs.precision == Precision::f32x3k
                ? "f32x3k (3xTF32 as split stages and one TF32 GEMM over K three times) applies to gemm stages"
                : "bf16x3 (split stages and one bf16 GEMM over K three times) applies to gemm stages",
            "use precision f32x3 in a grouped_gemm, or one gemm stage per group");
      return false;
    }
    if (!first_a) first_a = ta;
    const Tensor* out = tensor(st.outputs[i]);
    std::vector<int64_t> want{m, n};
    if (out->shape != want) {
      error(s.outputs[i].span, "group " + std::to_string(i) + " computes " + shape_str(want) + " but '" + out->name +
                                   "' is " + shape_str(out->shape),
            "declare '" + out->name + " : " + dsl_dtype_str(out->dtype) + shape_str(want) + "'");
      return false;
    }
    if (i > 0 && out->dtype != outs[0]->dtype) {
      error(s.outputs[i].span, "every output of a grouped_gemm has the same dtype", "declare '" + out->name + "' as " +
            std::string(dsl_dtype_str(outs[0]->dtype)));
      return false;
    }
    if (!dsl_dtype_is_float(out->dtype)) {
      error(s.outputs[i].span, "gemm outputs are f16, bf16 or f32", "declare '" + out->name + "' as f32");
      return false;
    }
    outs.push_back(out);
    g.a.push_back(a);
    g.b.push_back(b);
    g.mnk.push_back({m, n, k});
  }
  BlockRules rules;
  rules.what = "the epilogue of a grouped_gemm";
  rules.target = st.outputs[0];
  rules.allow_loads = false;
  rules.index_hint = "a grouped_gemm epilogue has no element position: use an elementwise stage after it";
  rules.shape = outs[0]->shape;
  rules.rows = g.mnk[0][0];
  rules.cols = g.mnk[0][1];
  std::vector<TensorUse> extra;
  if (!check_block(block(s, "epilogue"), rules, s.kind.span, g.epilogue, reads, extra)) return false;
  bool ok = true;
  for (const auto& v : gemm_rules_check_grouped(prog_, g, outs)) {
    error(violation_span(*this, s, v), v.message, v.hint);
    ok = false;
  }
  st.body = std::move(g);
  return ok;
}

}  // namespace ucut::dsl::detail
