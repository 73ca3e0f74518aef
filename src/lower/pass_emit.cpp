// pass_emit: drafts to a dsl::Program: DSL names for the problem's tensors, the declarations
// (every problem input and output, in ABI order, then the params and tmps the stages touch),
// one stage per draft with its epilogue/body statements, the tf32 -> f32x3 fallback where
// gemm_rules_check rejects tf32 (K-major and alignment rules), then dsl_print and a re-check
// through dsl_compile: the text is what the user gets, the re-checked program what callers use.
// Runs last. Golden tests: every tests/golden/lower/*.ucut.
#include <algorithm>
#include <cctype>
#include <set>

#include "dsl/dsl.h"
#include "dsl/gemm_rules.h"
#include "dsl/names.h"
#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

using dsl::EpilogueStmt;
using dsl::ExprPtr;

std::optional<dsl::DType> dsl_dtype(problem::DType t) {
  switch (t) {
    case problem::DType::f16: return dsl::DType::f16;
    case problem::DType::bf16: return dsl::DType::bf16;
    case problem::DType::f32: return dsl::DType::f32;
    case problem::DType::i32: return dsl::DType::i32;
    case problem::DType::i64: return dsl::DType::i64;
    case problem::DType::u8: return dsl::DType::u8;
    case problem::DType::boolean: return dsl::DType::boolean;
    default: return std::nullopt;
  }
}

class Emitter {
 public:
  explicit Emitter(LowerState& s) : s_(s) {}

  Result<LoweredProgram> run() {
    for (const auto& d : s_.drafts) {
      auto st = stage(d);
      if (!st) return st.error();
      stages_.push_back(std::move(*st));
    }
    auto decl = declarations();
    if (!decl) return decl.error();
    prog_.name = s_.options.name.empty() ? name_of_program(s_.problem.name) : s_.options.name;
    prog_.stages = stages_;
    if (Status st = precision_fallback(); !st) return st.error();
    std::string text = dsl::dsl_print(prog_);
    dsl::CheckResult r = dsl::dsl_compile(SourceFile{prog_.name + ".ucut", text});
    if (!r.program) {
      SourceFile f{prog_.name + ".ucut", text};
      return make_error(ErrorCode::internal, "the lowered program of " + s_.label() +
                                                 " does not check (a lowering bug):\n" +
                                                 diag_render_all(f, r.diagnostics) + "\n" + text);
    }
    LoweredProgram out;
    out.text = dsl::dsl_print(*r.program);
    out.program = std::move(*r.program);
    out.notes = s_.notes;
    return out;
  }

 private:
  LowerState& s_;
  dsl::Program prog_;
  std::vector<dsl::Stage> stages_;
  std::map<std::string, std::string> names_;  // problem tensor -> DSL name
  std::set<std::string> taken_;
  std::vector<std::string> written_;          // stored tensors in stage order (tmp order)
  std::set<std::string> touched_;             // every tensor a stage reads or writes

  static std::string name_of_program(const std::string& n) {
    std::string r;
    for (char c : n) r += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
    return r.empty() ? "program" : r;
  }

  // A DSL identifier for a problem tensor, unique and not a reserved word.
  std::string dsl_name(const std::string& t) {
    auto it = names_.find(t);
    if (it != names_.end()) return it->second;
    std::string n;
    for (char c : t) n += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) n = "t" + n;
    if (dsl::dsl_reserved_words().count(n)) n += "_";
    std::string u = n;
    for (int i = 2; taken_.count(u); ++i) u = n + "_" + std::to_string(i);
    taken_.insert(u);
    names_[t] = u;
    return u;
  }

  std::string let_name(const std::string& stem) {
    std::string u = stem;
    for (int i = 2; taken_.count(u); ++i) u = stem + "_" + std::to_string(i);
    taken_.insert(u);
    return u;
  }

  std::string use(const std::string& base) {
    touched_.insert(base);
    return dsl_name(base);
  }

  // The expression reading tensor operand `name` inside a block, recording declaration shapes.
  Result<ExprPtr> load(const std::string& name, const BlockCtx& ctx, int op_id) {
    std::string why;
    auto p = lower_load_plan(s_, name, ctx, why);
    if (!p) return s_.unsupported(op_id, why);
    if (p->kind == LoadPlan::Kind::constant) return ex_const(p->value);
    if (p->decl != lower_decl_shape(s_, p->tensor)) s_.decl_shape[p->tensor] = p->decl;
    dsl::LoadMode m = p->kind == LoadPlan::Kind::row ? dsl::LoadMode::row
                      : p->kind == LoadPlan::Kind::col ? dsl::LoadMode::col
                                                        : dsl::LoadMode::full;
    return ex_load(use(p->tensor), m);
  }

  // Statements for the draft's fused ops (and GEMM reductions) after the anchor value `v0`.
  Result<dsl::Epilogue> block(const Draft& d, const BlockCtx& ctx, ExprPtr v0, const std::string& stored) {
    std::map<std::string, ExprPtr> locals;
    std::vector<EpilogueStmt> stmts;
    std::string stored_let;
    auto bind = [&](const std::string& base, ExprPtr e) {
      EpilogueStmt st;
      st.kind = EpilogueStmt::Kind::let;
      st.name = dsl_name(base);
      if (base == stored) {  // a let may not hide the declared tensor it is stored to
        st.name = let_name(dsl_name(base) + "_v");
        stored_let = st.name;
      }
      st.value = std::move(e);
      stmts.push_back(st);
      locals[base] = ex_local(st.name);
    };
    if (!d.value.empty()) {
      std::string vb = s_.resolve(d.value).base;
      bool plain = v0->kind == dsl::Expr::Kind::acc;
      if (plain || (d.ops.empty() && d.reductions.empty())) locals[vb] = v0;
      else bind(vb, v0);
    }
    for (int id : d.ops) {
      const problem::Op& op = s_.ops[static_cast<size_t>(id)];
      std::optional<Error> err;
      auto operand = [&](size_t i) -> ExprPtr {
        const auto& in = op.inputs.at(i);
        if (in.is_absent()) {
          err = s_.unsupported(id, "operand " + std::to_string(i) + " is absent (None) where the op needs a value");
          return ex_const(0);
        }
        if (!in.is_tensor()) return ex_const(*in.scalar);
        std::string b = s_.resolve(in.tensor).base;
        if (auto it = locals.find(b); it != locals.end()) return it->second;
        auto e = load(in.tensor, ctx, id);
        if (!e) {
          err = e.error();
          return ex_const(0);
        }
        return *e;
      };
      ExprPtr e = lower_expr_op(op, operand);
      if (err) return *err;
      bind(s_.resolve(op.outputs.at(0)).base, e);
    }
    bool reduced_stored = false;
    for (int id : d.reductions) {
      const problem::Op& op = s_.ops[static_cast<size_t>(id)];
      std::string in = s_.resolve(op.inputs.at(0).tensor).base;
      reduced_stored = reduced_stored || in == stored;
      int rank = static_cast<int>(s_.need(op.inputs.at(0).tensor).shape.size());
      auto dims = attr_dims(op, rank);
      bool row = dims && dims->size() == 1 && (*dims)[0] == rank - 1;
      EpilogueStmt st;
      st.kind = EpilogueStmt::Kind::reduce;
      std::string target = s_.resolve(op.outputs.at(0)).base;
      st.name = use(target);
      extra_outputs_.push_back(target);
      st.reduce_axis = row ? dsl::ReduceAxis::row : dsl::ReduceAxis::col;
      st.reduce_op = op.op == "max" || op.op == "amax" ? dsl::ReduceOp::max
                     : op.op == "min" || op.op == "amin" ? dsl::ReduceOp::min
                                                         : dsl::ReduceOp::sum;
      st.value = locals.count(in) ? locals[in] : v0;
      stmts.push_back(st);
    }
    // The store: the last let becomes the store when nothing else reads it.
    EpilogueStmt store;
    store.kind = EpilogueStmt::Kind::store;
    store.name = use(stored);
    bool last_is_stored = !stmts.empty() && stmts.back().kind == EpilogueStmt::Kind::let &&
                          stmts.back().name == stored_let && !reduced_stored;
    if (last_is_stored) {
      store.value = stmts.back().value;
      stmts.pop_back();
    } else {
      store.value = locals.count(stored) ? locals[stored] : v0;
    }
    stmts.push_back(store);
    dsl::Epilogue ep;
    ep.stmts = std::move(stmts);
    return ep;
  }
  std::vector<std::string> extra_outputs_;

  std::string stored_of(const Draft& d) {
    auto esc = draft_escaping(s_, d);
    if (!esc.empty()) return esc.front();
    auto locals = draft_locals(s_, d);
    if (d.kind == DraftKind::gemm && d.ops.empty() && !d.reductions.empty())
      s_.notes.push_back(s_.op_label(d.anchor) + ": the GEMM's own output is written to a tmp that nothing "
                         "reads (a gemm stage always stores its main output)");
    return locals.back();
  }

  void fix_shape(const std::string& stored, const std::vector<int64_t>& shape) {
    if (lower_decl_shape(s_, stored) != shape) s_.decl_shape[stored] = shape;
  }

  // A norm reduces |x| (p = 1, inf) or x^2 (p = 2) written as the stage's prologue; the value
  // after the reduction is sqrt(acc) for p = 2, else acc.
  static ExprPtr norm_prologue(const problem::Op& norm, const std::string& input, dsl::Epilogue& prologue) {
    double p = lower_norm_order(norm).value_or(2);
    EpilogueStmt st;
    st.kind = EpilogueStmt::Kind::store;
    st.name = input;
    st.value = p == 2 ? ex_bin(dsl::BinOp::mul, ex_acc(), ex_acc()) : ex_fn(dsl::Fn::abs, {ex_acc()});
    prologue.stmts = {st};
    return p == 2 ? ex_fn(dsl::Fn::sqrt, {ex_acc()}) : ex_acc();
  }

  // The prologue of a draft that absorbed a chain of elementwise ops (pass_simt_stages): acc is
  // the element of `prologue_src`, each op a let, the last one stored to the input's name.
  Result<dsl::Epilogue> prologue_block(const Draft& d, const std::string& input) {
    std::map<std::string, ExprPtr> locals;
    locals[d.prologue_src] = ex_acc();
    dsl::Epilogue out;
    ExprPtr last;
    for (size_t k = 0; k < d.prologue_ops.size(); ++k) {
      const int id = d.prologue_ops[k];
      const problem::Op& op = s_.ops[static_cast<size_t>(id)];
      std::optional<Error> err;
      auto operand = [&](size_t i) -> ExprPtr {
        const auto& in = op.inputs.at(i);
        if (in.is_tensor()) {
          if (auto it = locals.find(in.tensor); it != locals.end()) return it->second;
          err = make_error(ErrorCode::internal, s_.label() + ": op " + std::to_string(id) +
                                                    ": a prologue op reads '" + in.tensor + "' (a lowering bug)");
          return ex_const(0);
        }
        return ex_const(in.scalar.value_or(0));
      };
      ExprPtr e = lower_expr_op(op, operand);
      if (err) return *err;
      if (k + 1 == d.prologue_ops.size()) {
        last = e;
        break;
      }
      EpilogueStmt st;
      st.kind = EpilogueStmt::Kind::let;
      st.name = let_name("p" + std::to_string(k));
      st.value = e;
      out.stmts.push_back(st);
      locals[op.outputs.at(0)] = ex_local(st.name);
    }
    EpilogueStmt store;
    store.kind = EpilogueStmt::Kind::store;
    store.name = input;
    store.value = last;
    out.stmts.push_back(store);
    return out;
  }

  Result<dsl::Stage> stage(const Draft& d) {
    dsl::Stage st;
    st.name = "s" + std::to_string(stages_.size());
    extra_outputs_.clear();
    if (d.kind == DraftKind::convert) {
      dsl::ElementwiseStage e;
      EpilogueStmt store;
      store.kind = EpilogueStmt::Kind::store;
      store.name = use(d.dst);
      store.value = ex_load(use(d.src), dsl::LoadMode::full);
      e.body.stmts = {store};
      st.outputs = {store.name};
      written_.push_back(d.dst);
      st.body = e;
      return st;
    }
    BlockCtx ctx = lower_block_ctx(s_, d);
    std::string stored = stored_of(d);
    if (d.kind == DraftKind::gemm || d.kind == DraftKind::elementwise ||
        (d.kind == DraftKind::rowwise && dsl::dsl_rowwise_keeps_shape(d.op)))
      fix_shape(stored, ctx.shape);
    int anchor_id = d.anchor >= 0 ? d.anchor : d.ops.front();
    const problem::Op& anchor = s_.ops[static_cast<size_t>(anchor_id)];
    auto tensor_in = [&](size_t i) {
      if (i == 0 && !d.prologue_ops.empty()) return use(d.prologue_src);  // read before the prologue
      return use(s_.resolve(anchor.inputs.at(i).tensor).base);
    };
    ExprPtr v0 = ex_acc();
    if (d.kind == DraftKind::gemm) {
      const GemmPlan& g = d.gemm;
      dsl::GemmStage gs;
      gs.a = dsl::Operand{use(g.a), g.a_t, {}};
      gs.b = dsl::Operand{use(g.b), g.b_t, {}};
      gs.m = g.m;
      gs.n = g.n;
      gs.k = g.k;
      gs.batch = g.batch;
      gs.knobs.precision = g.precision;
      if (!g.bias.empty()) {
        auto b = load(g.bias, ctx, d.anchor);
        if (!b) return b.error();
        v0 = ex_bin(dsl::BinOp::add, v0, *b);
      }
      if (!g.c.empty()) {
        if (g.alpha != 1) v0 = ex_bin(dsl::BinOp::mul, ex_const(g.alpha), v0);
        auto c = load(g.c, ctx, d.anchor);
        if (!c) return c.error();
        ExprPtr ce = g.beta != 1 ? ex_bin(dsl::BinOp::mul, ex_const(g.beta), *c) : *c;
        if (g.beta != 0) v0 = ex_bin(dsl::BinOp::add, v0, ce);
      }
      auto ep = block(d, ctx, v0, stored);
      if (!ep) return ep.error();
      gs.epilogue = std::move(*ep);
      st.body = std::move(gs);
    } else if (d.kind == DraftKind::rowwise) {
      dsl::RowwiseStage r;
      r.op = d.op;
      r.input = tensor_in(0);
      r.cols = ctx.cols;
      r.rows = ctx.rows;
      if (d.op == "layer_norm" || d.op == "rms_norm" || d.op == "group_norm") {
        // PyTorch: layer_norm and group_norm eps 1e-5; rms_norm eps None = torch.finfo(float32).eps.
        const bool group = d.op == "group_norm";
        double def = d.op == "rms_norm" ? 1.1920928955078125e-07 : 1e-5;
        r.attrs["eps"] = attr_number(anchor, "eps", def);
        int64_t per = ctx.cols;  // one weight per column; group_norm: per channel
        if (group) {
          r.attrs["groups"] = attr_number(anchor, "num_groups", 1);
          per = lower_decl_shape(s_, s_.resolve(anchor.inputs.at(0).tensor).base).at(1);
        }
        for (size_t i = 1; i < anchor.inputs.size() && i < 3; ++i) {
          if (!anchor.inputs[i].is_tensor()) continue;
          std::string b = s_.resolve(anchor.inputs[i].tensor).base;
          fix_shape(b, {per});
          (i == 1 ? r.weight : r.bias) = use(b);
          r.extra.push_back(use(b));
        }
      }
      if (d.op == "cosine_similarity" || d.op == "triplet_margin") {
        for (size_t i = 1; i < static_cast<size_t>(dsl::dsl_rowwise_inputs(d.op)); ++i)
          r.operands.push_back(tensor_in(i));
        r.attrs["eps"] = attr_number(anchor, "eps", d.op == "cosine_similarity" ? 1e-8 : 1e-6);
        if (d.op == "triplet_margin") r.attrs["margin"] = attr_number(anchor, "margin", 1);
      }
      if (d.op == "l1_normalize" || d.op == "l2_normalize") r.attrs["eps"] = 0;  // x / norm(x) (pass_simt_stages)
      else if (anchor.op == "norm") v0 = norm_prologue(anchor, r.input, r.prologue);
      if (!d.prologue_ops.empty()) {
        auto pro = prologue_block(d, r.input);
        if (!pro) return pro.error();
        r.prologue = std::move(*pro);
      }
      auto ep = block(d, ctx, v0, stored);
      if (!ep) return ep.error();
      if (d.op == "argmax" || d.op == "argmin") {
        // indices take no epilogue: only the plain store of the index is expressible
        const bool plain = ep->stmts.size() == 1 && ep->stmts[0].kind == dsl::EpilogueStmt::Kind::store &&
                           ep->stmts[0].value && ep->stmts[0].value->kind == dsl::Expr::Kind::acc;
        if (!plain)
          return make_error(ErrorCode::unsupported,
                            s_.label() + ": op " + std::to_string(d.anchor) + " (" + d.op +
                                "): work on the indices after " + d.op + " is not expressible; a rowwise " + d.op +
                                " stage writes the indices as they are");
      } else {
        r.epilogue = std::move(*ep);
      }
      st.body = std::move(r);
    } else if (d.kind == DraftKind::reduce) {
      dsl::ReduceStage r;
      r.op = d.op;
      bool loss = s_.cls[static_cast<size_t>(d.anchor)] == OpClass::loss;
      for (size_t i = 0; i < (loss ? 2u : 1u); ++i) r.inputs.push_back(tensor_in(i));
      int rank = static_cast<int>(s_.need(anchor.inputs.at(0).tensor).shape.size());
      if (loss) {
        for (int i = 0; i < rank; ++i) r.dims.push_back(i);
        r.reduction = attr_string(anchor, "reduction", "mean");
        if (d.op == "huber") r.attrs["delta"] = attr_number(anchor, "delta", 1);
        if (d.op == "smooth_l1") r.attrs["beta"] = attr_number(anchor, "beta", 1);
      } else {
        auto dims = attr_dims(anchor, rank);
        if (dims) r.dims = *dims;
        else for (int i = 0; i < rank; ++i) r.dims.push_back(i);
        if (anchor.op == "norm") v0 = norm_prologue(anchor, r.inputs[0], r.prologue);
      }
      if (!d.prologue_ops.empty()) {
        auto pro = prologue_block(d, r.inputs[0]);
        if (!pro) return pro.error();
        r.prologue = std::move(*pro);
      }
      if (draft_writes_indices(d)) {
        // the values and indices are written as they are (no epilogue; nothing fuses into them)
        use(stored);
        if (!d.indices.empty()) extra_outputs_.push_back(s_.resolve(d.indices).base);
      } else {
        auto ep = block(d, ctx, v0, stored);
        if (!ep) return ep.error();
        r.epilogue = std::move(*ep);
      }
      st.body = std::move(r);
    } else if (d.kind == DraftKind::attention) {
      dsl::AttentionStage a;
      a.q = tensor_in(0);
      a.k = tensor_in(1);
      a.v = tensor_in(2);
      a.causal = attr_bool(anchor, "is_causal", false);
      a.scale = attr_number(anchor, "scale", 0);
      use(stored);
      st.body = std::move(a);
    } else if (d.kind == DraftKind::scan) {
      dsl::ScanStage r;
      r.op = d.op;
      r.input = tensor_in(0);
      int rank = static_cast<int>(s_.need(anchor.inputs.at(0).tensor).shape.size());
      auto dims = attr_dims(anchor, rank);
      r.dim = dims && !dims->empty() ? (*dims)[0] : rank - 1;
      r.exclusive = attr_bool(anchor, "exclusive", false);
      r.reverse = attr_bool(anchor, "reverse", false);
      if (anchor.inputs.size() > 1 && anchor.inputs[1].is_tensor()) r.mask = tensor_in(1);  // pass_expand_ops
      use(stored);
      st.body = std::move(r);
    } else {
      dsl::ElementwiseStage e;
      auto ep = block(d, ctx, nullptr, stored);
      if (!ep) return ep.error();
      e.body = std::move(*ep);
      st.body = std::move(e);
    }
    st.outputs.push_back(dsl_name(stored));
    written_.push_back(stored);
    for (const auto& x : extra_outputs_) {
      st.outputs.push_back(dsl_name(x));
      written_.push_back(x);
    }
    return st;
  }

  Status declare(const std::string& base, dsl::TensorRole role) {
    const problem::Tensor& t = s_.need(base);
    auto dt = dsl_dtype(t.dtype);
    if (auto it = s_.decl_dtype.find(base); it != s_.decl_dtype.end()) dt = it->second;
    if (!dt)
      return make_error(ErrorCode::unsupported, s_.label() + ": tensor '" + base + "' is " +
                                                    problem::dtype_name(t.dtype) + ", which the language has no dtype for");
    dsl::Tensor d;
    d.name = dsl_name(base);
    d.role = role;
    d.dtype = *dt;
    d.shape = lower_decl_shape(s_, base);
    if (d.shape.empty()) d.shape = {1};  // a 0-d tensor is declared [1] (one element either way)
    if (role == dsl::TensorRole::param) d.binding = t.state_dict.empty() ? base : t.state_dict;
    prog_.tensors.push_back(std::move(d));
    return ok_status();
  }

  Status declarations() {
    std::set<std::string> done;
    auto add = [&](const std::string& base, dsl::TensorRole r) -> Status {
      if (!done.insert(base).second) return ok_status();
      return declare(base, r);
    };
    for (const auto& n : s_.problem.inputs)
      if (Status st = add(s_.resolve(n).base, dsl::TensorRole::in); !st) return st;
    for (const auto& t : s_.tensors)
      if ((t.kind == problem::TensorKind::parameter || t.kind == problem::TensorKind::buffer) && touched_.count(t.name))
        if (Status st = add(t.name, dsl::TensorRole::param); !st) return st;
    for (const auto& n : s_.problem.outputs)
      if (Status st = add(s_.resolve(n).base, dsl::TensorRole::out); !st) return st;
    for (const auto& n : written_)
      if (Status st = add(n, dsl::TensorRole::tmp); !st) return st;
    for (const auto& n : touched_)
      if (!done.count(n))
        return make_error(ErrorCode::internal, s_.label() + ": tensor '" + n +
                                                   "' is read by a stage but neither an input, a parameter nor written");
    return ok_status();
  }

  // tf32 reads A and B only K-major with 16-byte aligned rows; where the rules reject it the
  // stage falls back to f32x3, which reads any layout (and is fp32-faithful).
  Status precision_fallback() {
    for (size_t i = 0; i < prog_.stages.size(); ++i) {
      auto* g = std::get_if<dsl::GemmStage>(&prog_.stages[i].body);
      if (!g) continue;
      const dsl::Tensor* out = prog_.find_tensor(prog_.stages[i].outputs[0]);
      auto v = dsl::gemm_rules_check(prog_, *g, *out);
      if (!v.empty() && g->knobs.precision == dsl::Precision::tf32) {
        s_.notes.push_back("stage " + prog_.stages[i].name + ": tf32 is not possible (" + v[0].rule + ": " +
                           v[0].message + "); it uses f32x3");
        g->knobs.precision = dsl::Precision::f32x3;
        v = dsl::gemm_rules_check(prog_, *g, *out);
      }
      if (!v.empty())
        return make_error(ErrorCode::unsupported, s_.label() + ": the GEMM of stage " + prog_.stages[i].name +
                                                      " breaks the rule " + v[0].rule + ": " + v[0].message,
                          v[0].hint);
    }
    return ok_status();
  }
};

}  // namespace

Result<LoweredProgram> pass_emit(LowerState& s) {
  Emitter e(s);
  return e.run();
}

}  // namespace ucut::lower
