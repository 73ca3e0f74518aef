// pass_emit: drafts to a dsl::Program: DSL names for the problem's tensors, the declarations
// (every problem input and output, in ABI order, then the params and tmps the stages touch),
// one stage per draft with its epilogue/body statements (a conv draft: a conv stage at the data's
// precision, f32 as tf32), the tf32 -> f32x3 fallback where
// gemm_rules_check rejects tf32 (K-major and alignment rules), then dsl_print and a re-check
// through dsl_compile: the text is what the user gets, the re-checked program what callers use.
// Runs last. Golden tests: every tests/golden/lower/*.ucut.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
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
    // the position vectors GEMM epilogues read, written first
    stages_.insert(stages_.begin(), position_stages_.begin(), position_stages_.end());
    for (size_t i = 0; i < stages_.size(); ++i) stages_[i].name = "s" + std::to_string(i);
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
  std::map<int64_t, std::string> position_;   // length -> the vector 0 .. length-1 (f32)
  std::vector<dsl::Stage> position_stages_;   // the stages writing them

  // The f32 vector of positions 0 .. len-1, written by an elementwise stage (`p = col`).
  std::string position_vector(int64_t len) {
    auto it = position_.find(len);
    if (it != position_.end()) return it->second;
    const std::string t = s_.add_tensor("position_" + std::to_string(len), problem::DType::f32, {len});
    position_[len] = t;
    dsl::Stage st;
    dsl::ElementwiseStage e;
    EpilogueStmt store;
    store.kind = EpilogueStmt::Kind::store;
    store.name = use(t);
    store.value = ex_index(dsl::LoadMode::col);
    e.body.stmts = {store};
    st.outputs = {store.name};
    st.body = e;
    written_.push_back(t);
    position_stages_.push_back(std::move(st));
    return t;
  }

  // `e` with `row` / `col` read from the position vectors of an [m, n] GEMM (exact below 2^24).
  ExprPtr positions(const ExprPtr& e, int64_t m, int64_t n) {
    if (!e) return e;
    if (e->kind == dsl::Expr::Kind::index)
      return e->mode == dsl::LoadMode::row ? ex_load(dsl_name(position_vector(m)), dsl::LoadMode::row)
                                           : ex_load(dsl_name(position_vector(n)), dsl::LoadMode::col);
    bool changed = false;
    std::vector<ExprPtr> args;
    for (const auto& a : e->args) {
      args.push_back(positions(a, m, n));
      changed = changed || args.back() != a;
    }
    if (!changed) return e;
    dsl::Expr c = *e;
    c.args = std::move(args);
    return std::make_shared<const dsl::Expr>(std::move(c));
  }

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
    if (p->view) {  // a broadcast operand in the block's shape: a view of its tensor, declared once
      const Strided& v = *p->view;
      std::string name;
      for (const auto& [n, w] : s_.strided)
        if (w.base == v.base && w.shape == v.shape && w.strides == v.strides && w.offset == v.offset) name = n;
      if (name.empty()) {
        name = s_.add_tensor(v.base + "_b", s_.need(v.base).dtype, v.shape);
        s_.strided[name] = v;
        s_.views[name] = View{v.base, false};
      }
      use(v.base);
      return ex_load(use(name), dsl::LoadMode::full);
    }
    if (auto it = s_.strided.find(p->tensor); it != s_.strided.end()) use(it->second.base);  // a view's tensor
    else if (p->decl != lower_decl_shape(s_, p->tensor)) s_.decl_shape[p->tensor] = p->decl;
    dsl::LoadMode m = p->kind == LoadPlan::Kind::row ? dsl::LoadMode::row
                      : p->kind == LoadPlan::Kind::col ? dsl::LoadMode::col
                                                        : dsl::LoadMode::full;
    return ex_load(use(p->tensor), m);
  }

  // A value PyTorch rounds: the result of one of the problem's own ops (not a tensor a rewrite
  // made up: a decomposed op's parts stay f32, as PyTorch's op computes them inside) held in f16
  // or bf16. PyTorch rounds every such result before the next op reads it; a block computes in
  // f32, so it rounds there too, or a more accurate fused chain would fail the reference's own
  // rounding on large values (the rescaled trial of a bf16 MLP: 6% of elements 1.5% off).
  std::optional<dsl::Fn> torch_rounding(const std::string& base) const {
    const problem::Tensor* t = s_.problem.find_tensor(base);
    if (t == nullptr) return std::nullopt;
    if (t->dtype == problem::DType::bf16) return dsl::Fn::round_bf16;
    if (t->dtype == problem::DType::f16) return dsl::Fn::round_f16;
    return std::nullopt;
  }
  ExprPtr as_torch_rounds(const std::string& base, ExprPtr e) {
    const auto fn = torch_rounding(base);
    return fn ? ex_fn(*fn, {std::move(e)}) : e;
  }

  // The store of `stored` from `e`: a rounding to the stored tensor's own dtype is the store's.
  ExprPtr unround_for_store(const std::string& stored, ExprPtr e) {
    const auto fn = torch_rounding(stored);
    const bool same = fn && e->kind == dsl::Expr::Kind::unary && e->fn == *fn && e->args.size() == 1;
    return same ? e->args[0] : e;
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
      if (d.ops.empty() && d.reductions.empty()) locals[vb] = v0;
      else if (plain) locals[vb] = as_torch_rounds(vb, v0);
      else bind(vb, as_torch_rounds(vb, v0));
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
      const std::string out = s_.resolve(op.outputs.at(0)).base;
      bind(out, as_torch_rounds(out, e));
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
      store.value = unround_for_store(stored, stmts.back().value);
      stmts.pop_back();
    } else {
      store.value = unround_for_store(stored, locals.count(stored) ? locals[stored] : v0);
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
    // other tensors a rowwise prologue reads (pass_simt_stages' absorb_prologue checked them)
    const BlockCtx ctx = lower_prologue_ctx(lower_decl_shape(s_, d.prologue_src));
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
          if (k == 0 && s_.resolve(in.tensor).base == d.prologue_src) return ex_acc();  // a view of the source
          if (d.kind == DraftKind::rowwise) {
            auto l = load(in.tensor, ctx, id);
            if (l) return *l;
            err = l.error();
            return ex_const(0);
          }
          err = make_error(ErrorCode::internal, s_.label() + ": op " + std::to_string(id) +
                                                    ": a prologue op reads '" + in.tensor + "' (a lowering bug)");
          return ex_const(0);
        }
        return ex_const(in.scalar.value_or(0));
      };
      ExprPtr e = lower_expr_op(op, operand);
      if (err) return *err;
      if (k + 1 == d.prologue_ops.size()) {
        last = e;  // stored as the input's dtype: the store rounds
        break;
      }
      e = as_torch_rounds(s_.resolve(op.outputs.at(0)).base, e);
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

  // A keyword argument of a torch operation from the op's JSON attribute; nullopt for a value
  // the language cannot write (a nested list, a non-integer list, a string that is not a word).
  static std::optional<dsl::TorchOp::Attr> torch_attr(const nlohmann::json& v) {
    dsl::TorchOp::Attr a;
    if (v.is_null()) {
      a.kind = dsl::TorchOp::Attr::Kind::word;
      a.word = "none";
    } else if (v.is_boolean()) {
      a.kind = dsl::TorchOp::Attr::Kind::word;
      a.word = v.get<bool>() ? "true" : "false";
    } else if (v.is_number()) {
      a.number = v.get<double>();
    } else if (v.is_string()) {
      const std::string w = v.get<std::string>();
      if (w == "inf" || w == "-inf" || w == "nan") {  // problem.json's non-finite numbers
        a.number = w == "nan" ? std::nan("") : (w == "inf" ? 1 : -1) * std::numeric_limits<double>::infinity();
        return a;
      }
      if (w.empty() || std::isdigit(static_cast<unsigned char>(w[0]))) return std::nullopt;
      for (char c : w)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return std::nullopt;
      a.kind = dsl::TorchOp::Attr::Kind::word;
      a.word = w;
    } else if (v.is_array()) {
      a.kind = dsl::TorchOp::Attr::Kind::list;
      for (const auto& x : v) {
        if (!x.is_number_integer()) return std::nullopt;
        a.list.push_back(x.get<int64_t>());
      }
    } else {
      return std::nullopt;
    }
    return a;
  }

  // A torch stage: the op as the problem wrote it, its operands rebuilt from the stored tensors
  // (a reshape or a transposed view the lowering aliased becomes a local `reshape`/`transpose`
  // first), every result a stage output.
  Result<dsl::Stage> torch_stage(const Draft& d, dsl::Stage st) {
    const problem::Op& op = s_.ops[static_cast<size_t>(d.anchor)];
    dsl::TorchStage t;
    auto local = [&](const std::string& stem, const std::string& name, std::map<std::string, dsl::TorchOp::Attr> attrs,
                     std::vector<dsl::TorchOp::Operand> ins) {
      dsl::TorchOp l;
      l.op = name;
      l.outputs = {let_name(stem)};
      l.output_is_local = {true};
      l.inputs = std::move(ins);
      l.attrs = std::move(attrs);
      t.ops.push_back(l);
      return l.outputs[0];
    };
    auto list_attr = [](std::vector<int64_t> v) {
      dsl::TorchOp::Attr a;
      a.kind = dsl::TorchOp::Attr::Kind::list;
      a.list = std::move(v);
      return a;
    };
    auto num_attr = [](double v) {
      dsl::TorchOp::Attr a;
      a.number = v;
      return a;
    };
    dsl::TorchOp main;
    main.op = op.op;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const auto& in = op.inputs[i];
      dsl::TorchOp::Operand o;
      if (in.is_absent()) {
        o.absent = true;
      } else if (!in.is_tensor()) {
        o.number = *in.scalar;
      } else {
        const View v = s_.resolve(in.tensor);
        const problem::Tensor& base = s_.need(v.base);
        const std::vector<int64_t> want = s_.need(in.tensor).shape;  // what the op reads
        if (base.kind == problem::TensorKind::constant) {
          if (!base.value)
            return s_.unsupported(d.anchor, "reads the constant '" + in.tensor + "', whose value is not a single number");
          auto dt = dsl_dtype(base.dtype);
          if (!dt) return s_.unsupported(d.anchor, "reads a constant of a dtype the language has no name for");
          dsl::TorchOp::Attr w;
          w.kind = dsl::TorchOp::Attr::Kind::word;
          w.word = dsl::dsl_dtype_str(*dt);
          o.tensor = local(dsl_name(v.base) + "_c", "full",
                           {{"shape", list_attr(base.shape)}, {"value", num_attr(*base.value)}, {"dtype", w}}, {});
        } else {
          std::string name = use(v.base);
          const std::vector<int64_t> decl = lower_decl_shape(s_, v.base);
          const size_t r = want.size();
          if (v.transposed && r >= 2) {
            std::vector<int64_t> swapped = want;
            std::swap(swapped[r - 1], swapped[r - 2]);
            if (decl != swapped) name = local(name + "_v", "reshape", {{"shape", list_attr(swapped)}}, {{name, 0, false}});
            name = local(name + "_t", "transpose",
                         {{"dim0", num_attr(static_cast<double>(r - 2))}, {"dim1", num_attr(static_cast<double>(r - 1))}},
                         {{name, 0, false}});
          } else if (decl != want) {
            name = local(name + "_v", "reshape", {{"shape", list_attr(want)}}, {{name, 0, false}});
          }
          o.tensor = name;
          if (std::find(t.reads.begin(), t.reads.end(), o.tensor) == t.reads.end() && !v.transposed && decl == want)
            t.reads.push_back(o.tensor);
        }
      }
      main.inputs.push_back(o);
    }
    for (auto it = op.attrs.begin(); it != op.attrs.end(); ++it) {
      auto a = torch_attr(*it);
      if (!a) return s_.unsupported(d.anchor, "its attribute '" + it.key() + "' has no form in a torch stage");
      main.attrs[it.key()] = *a;
    }
    for (const auto& o : op.outputs) {
      const std::string base = s_.resolve(o).base;
      main.outputs.push_back(dsl_name(base));
      main.output_is_local.push_back(false);
      st.outputs.push_back(dsl_name(base));
      written_.push_back(base);
    }
    t.ops.push_back(std::move(main));
    st.body = std::move(t);
    return st;
  }

  // A torch stage stores its results by element count, so their declared shape is free: a
  // shape-keeping rowwise stage reading one declares it as its own output is declared (the shape a
  // later GEMM's batch fold gave that output), or the two would disagree.
  void adopt_torch_input_shape(const Draft& d) {
    if (d.kind != DraftKind::rowwise || !dsl::dsl_rowwise_keeps_shape(d.op) || d.value.empty() || d.anchor < 0) return;
    const problem::Op& anchor = s_.ops[static_cast<size_t>(d.anchor)];
    if (anchor.inputs.empty() || !anchor.inputs[0].is_tensor()) return;
    const std::string in = s_.resolve(anchor.inputs[0].tensor).base;
    const int p = s_.producer(in);
    if (p < 0 || s_.drafts[static_cast<size_t>(p)].kind != DraftKind::torch) return;
    const auto want = lower_decl_shape(s_, s_.resolve(d.value).base);
    const auto have = lower_decl_shape(s_, in);
    auto count = [](const std::vector<int64_t>& v) {
      int64_t n = 1;
      for (auto x : v) n *= x;
      return n;
    };
    if (want != have && count(want) == count(have) && !want.empty() && !have.empty() && want.back() == have.back())
      s_.decl_shape[in] = want;
  }

  Result<dsl::Stage> stage(const Draft& d) {
    dsl::Stage st;
    st.name = "s" + std::to_string(stages_.size());
    extra_outputs_.clear();
    if (d.kind == DraftKind::torch) return torch_stage(d, std::move(st));
    adopt_torch_input_shape(d);
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
    if (d.kind == DraftKind::gemm || d.kind == DraftKind::elementwise || d.kind == DraftKind::window ||
        (d.kind == DraftKind::rowwise && dsl::dsl_rowwise_keeps_shape(d.op)))
      fix_shape(stored, ctx.shape);
    int anchor_id = d.anchor >= 0 ? d.anchor : d.ops.front();
    const problem::Op& anchor = s_.ops[static_cast<size_t>(anchor_id)];
    // an integer-list attribute of the anchor (conv and window settings)
    auto ints = [&](const char* key) { return anchor.attrs.at(key).get<std::vector<int64_t>>(); };
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
      // a GEMM epilogue has no element position: `row` and `col` (a causal mask fused after the
      // scores) read vectors of the positions, 0 .. M-1 and 0 .. N-1, that a first stage writes
      for (auto& stmt : ep->stmts) stmt.value = positions(stmt.value, g.m, g.n);
      gs.epilogue = std::move(*ep);
      st.body = std::move(gs);
    } else if (d.kind == DraftKind::conv) {
      dsl::ConvStage cs;
      cs.x = tensor_in(0);
      cs.w = tensor_in(1);
      cs.rank = static_cast<int>(ints("stride").size());
      cs.stride = ints("stride");
      cs.pad_lo = ints("padding");
      cs.pad_hi = anchor.attrs.contains("padding_hi") ? ints("padding_hi") : cs.pad_lo;  // a transposed conv's
      cs.dilation = ints("dilation");
      // the data's precision: f32 runs TF32 (the sm90 conv has no fp32-faithful math)
      const problem::DType data = s_.need(s_.resolve(anchor.inputs[0].tensor).base).dtype;
      cs.knobs.precision = data == problem::DType::bf16  ? dsl::Precision::bf16
                           : data == problem::DType::f16 ? dsl::Precision::f16
                                                         : dsl::Precision::tf32;
      if (anchor.inputs.size() > 2) {  // the conv's bias: one value per output channel
        auto b = load(anchor.inputs[2].tensor, ctx, d.anchor);
        if (!b) return b.error();
        v0 = ex_bin(dsl::BinOp::add, v0, *b);
      }
      auto ep = block(d, ctx, v0, stored);
      if (!ep) return ep.error();
      cs.epilogue = std::move(*ep);
      st.body = std::move(cs);
    } else if (d.kind == DraftKind::window) {
      // pooling or a depthwise conv on the NCHW tensors as stored (pass_simt_stages, pass_match_conv)
      dsl::WindowStage w;
      w.x = tensor_in(0);
      if (anchor.op == "depthwise_conv") {
        w.op = "sum";
        w.weight = tensor_in(1);
        if (anchor.inputs.size() > 2 && anchor.inputs[2].is_tensor()) {  // the conv's bias, in the stage
          const std::string b = s_.resolve(anchor.inputs[2].tensor).base;
          fix_shape(b, {s_.need(anchor.outputs.at(0)).shape.at(1)});
          w.bias = use(b);
        }
        w.dilation = ints("dilation");
      } else if (anchor.op == "adaptive_avg_pool") {
        w.op = "adaptive_avg";
      } else {
        w.op = anchor.op == "max_pool" ? "max" : "avg";
        w.window = ints("kernel_size");
        w.dilation = anchor.attrs.contains("dilation") ? ints("dilation") : std::vector<int64_t>(w.window.size(), 1);
        w.ceil_mode = attr_bool(anchor, "ceil_mode", false);
        w.count_include_pad = attr_bool(anchor, "count_include_pad", true);
        w.divisor = static_cast<int64_t>(attr_number(anchor, "divisor_override", 0));
      }
      if (w.op != "adaptive_avg") {
        w.stride = ints("stride");
        w.pad_lo = ints("padding");
        w.pad_hi = w.pad_lo;
      }
      auto ep = block(d, ctx, v0, stored);
      if (!ep) return ep.error();
      w.epilogue = std::move(*ep);
      st.body = std::move(w);
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
    for (const auto& n : written_) {
      // a slice (a strided transposed conv's phase, pass_match_conv): its tensor is the tmp, the
      // slice a view of it, declared with the views below
      if (auto it = s_.strided.find(n); it != s_.strided.end()) {
        if (Status st = add(it->second.base, dsl::TensorRole::tmp); !st) return st;
        touched_.insert(n);
        continue;
      }
      if (Status st = add(n, dsl::TensorRole::tmp); !st) return st;
    }
    for (const auto& n : touched_) {  // views, after the tensors they read
      auto it = s_.strided.find(n);
      if (it == s_.strided.end() || !done.insert(n).second) continue;
      if (!done.count(it->second.base))
        return make_error(ErrorCode::internal, s_.label() + ": view '" + n + "' reads '" + it->second.base +
                                                   "', which is not declared");
      const dsl::Tensor* b = prog_.find_tensor(dsl_name(it->second.base));
      if (!b) return make_error(ErrorCode::internal, s_.label() + ": the tensor of view '" + n + "' is missing");
      dsl::Tensor d;
      d.name = dsl_name(n);
      d.role = dsl::TensorRole::view;
      d.dtype = b->dtype;
      d.shape = it->second.shape;
      d.view_of = b->name;
      d.view_strides = it->second.strides;
      d.view_offset = it->second.offset;
      prog_.tensors.push_back(std::move(d));
    }
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
        // TF32 on mma.sync (tf32m) reads any layout at the same accuracy; else 3xTF32 (f32x3).
        const std::string why = v[0].rule + ": " + v[0].message;
        g->knobs.precision = dsl::Precision::tf32m;
        v = dsl::gemm_rules_check(prog_, *g, *out);
        if (!v.empty()) {
          g->knobs.precision = dsl::Precision::f32x3;
          v = dsl::gemm_rules_check(prog_, *g, *out);
        }
        s_.notes.push_back("stage " + prog_.stages[i].name + ": tf32 on wgmma is not possible (" + why + "); it uses " +
                           dsl::dsl_precision_str(g->knobs.precision) +
                           (g->knobs.precision == dsl::Precision::tf32m ? " (TF32 on mma.sync, any layout)" : ""));
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
