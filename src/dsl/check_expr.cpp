// Epilogue, prologue and body blocks: statements, expressions, loads and their shapes.
#include <algorithm>
#include <limits>
#include <optional>

#include "dsl/checker.h"
#include "dsl/names.h"

namespace ucut::dsl::detail {

namespace {
ExprPtr make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }
}  // namespace

bool Checker::check_load_shape(const Tensor& t, LoadMode mode, const BlockRules& rules, Span at) {
  auto is_vec = [&](int64_t len) {
    return t.shape == std::vector<int64_t>{len} ||
           (rules.batch > 1 && t.shape == std::vector<int64_t>{rules.batch, len});
  };
  if (t.role == TensorRole::view && mode != LoadMode::full) {
    error(at, "'" + t.name + "' is a view; views are read whole, at the element", "write '" + t.name + "'");
    return false;
  }
  if (mode != LoadMode::full && !rules.allow_vectors) {
    error(at, "row and column reads are not available in " + rules.what,
          "read whole tensors of the output's shape by name");
    return false;
  }
  if (!dsl_dtype_is_float(t.dtype)) {
    error(at, "'" + t.name + "' is " + dsl_dtype_str(t.dtype) + ", but expressions read f16, bf16 or f32 tensors",
          "convert it in the PyTorch program, or read it through a stage that takes that dtype");
    return false;
  }
  // one value per row may also be laid out as the rows' own dims (a rowwise reduction's output)
  const bool row_dims = rules.shape.size() > 1 &&
                        t.shape == std::vector<int64_t>(rules.shape.begin(), rules.shape.end() - 1);
  if (mode == LoadMode::row && !is_vec(rules.rows) && !row_dims) {
    std::string hint = "declare '" + t.name + "' with shape [" + std::to_string(rules.rows) + "]";
    if (is_vec(rules.cols)) hint = "'" + t.name + "' has one value per column: write " + t.name + "[col]";
    error(at, t.name + "[row] reads one value per row, so '" + t.name + "' must have shape [" +
                  std::to_string(rules.rows) + "], but it is " + tensor_str(t), hint);
    return false;
  }
  if (mode == LoadMode::col && !is_vec(rules.cols)) {
    std::string hint = "declare '" + t.name + "' with shape [" + std::to_string(rules.cols) + "]";
    if (is_vec(rules.rows)) hint = "'" + t.name + "' has one value per row: write " + t.name + "[row]";
    error(at, t.name + "[col] reads one value per column, so '" + t.name + "' must have shape [" +
                  std::to_string(rules.cols) + "], but it is " + tensor_str(t), hint);
    return false;
  }
  if (mode == LoadMode::full) {
    bool good = t.shape == rules.shape;
    // a view of the output's element count is read in the output's element order (a reshape)
    if (!good && rules.broadcast && t.role == TensorRole::view && t.numel() == checked_product(rules.shape).value_or(-1))
      good = true;
    if (!good && rules.broadcast && t.shape.size() <= rules.shape.size()) {
      good = true;
      size_t off = rules.shape.size() - t.shape.size();
      for (size_t i = 0; i < t.shape.size(); ++i)
        good = good && (t.shape[i] == 1 || t.shape[i] == rules.shape[off + i]);
    }
    if (!good) {
      std::string hint = rules.broadcast ? "its shape must broadcast to " + shape_str(rules.shape)
                                         : "a full read needs the same shape " + shape_str(rules.shape);
      if (!rules.broadcast && t.shape == std::vector<int64_t>{rules.cols})
        hint = "'" + t.name + "' is one value per column: write " + t.name + "[col]";
      else if (!rules.broadcast && t.shape == std::vector<int64_t>{rules.rows})
        hint = "'" + t.name + "' is one value per row: write " + t.name + "[row]";
      error(at, "'" + t.name + "' is " + shape_str(t.shape) + " but " + rules.what + " computes " +
                    shape_str(rules.shape), hint);
      return false;
    }
  }
  return true;
}

ExprPtr Checker::expr(const AstExpr& e, const BlockRules& rules, const std::set<std::string>& lets,
                      std::vector<TensorUse>& reads, bool& ok) {
  Expr x;
  x.span = e.span;
  auto fail = [&](Span at, std::string msg, std::string hint) -> ExprPtr {
    if (ok) error(at, std::move(msg), std::move(hint));
    ok = false;
    return nullptr;
  };
  switch (e.kind) {
    case AstExpr::Kind::number:
      x.kind = Expr::Kind::constant;
      x.value = e.value;
      return make(std::move(x));
    case AstExpr::Kind::neg: {
      if (e.args[0]->kind == AstExpr::Kind::number) {
        x.kind = Expr::Kind::constant;
        x.value = -e.args[0]->value;
        return make(std::move(x));
      }
      ExprPtr a = expr(*e.args[0], rules, lets, reads, ok);
      if (!a) return nullptr;
      if (a->kind == Expr::Kind::constant) {  // -inf
        x.kind = Expr::Kind::constant;
        x.value = -a->value;
        return make(std::move(x));
      }
      x.kind = Expr::Kind::unary;
      x.fn = Fn::neg;
      x.args.push_back(a);
      return make(std::move(x));
    }
    case AstExpr::Kind::binary: {
      ExprPtr a = expr(*e.args[0], rules, lets, reads, ok);
      if (!a) return nullptr;
      ExprPtr b = expr(*e.args[1], rules, lets, reads, ok);
      if (!b) return nullptr;
      x.kind = Expr::Kind::binary;
      x.op = e.op == '+' ? BinOp::add : e.op == '-' ? BinOp::sub : e.op == '*' ? BinOp::mul : BinOp::div;
      x.args = {a, b};
      return make(std::move(x));
    }
    case AstExpr::Kind::name: {
      const std::string& n = e.text;
      if (n == "acc") {
        if (!rules.allow_acc)
          return fail(e.span, "'acc' has no value in " + rules.what,
                      "read the tensors by name, e.g. 'y = relu(x)'");
        x.kind = Expr::Kind::acc;
        return make(std::move(x));
      }
      if (n == "inf") {
        x.kind = Expr::Kind::constant;
        x.value = std::numeric_limits<double>::infinity();
        return make(std::move(x));
      }
      if (lets.count(n)) {
        x.kind = Expr::Kind::local;
        x.name = n;
        return make(std::move(x));
      }
      for (const auto& s : prog_.scalars)
        if (s.name == n) {
          x.kind = Expr::Kind::scalar;
          x.name = n;
          return make(std::move(x));
        }
      if (const Tensor* t = tensor(n)) {
        if (!rules.allow_loads)
          return fail(e.span, rules.what + " cannot read tensors",
                      "use acc, scalars and constants only; add an elementwise stage for the rest");
        if (!check_load_shape(*t, LoadMode::full, rules, e.span)) {
          ok = false;
          return nullptr;
        }
        reads.push_back({n, e.span});
        x.kind = Expr::Kind::load;
        x.name = n;
        x.mode = LoadMode::full;
        return make(std::move(x));
      }
      if (n == "row" || n == "col") {
        if (!rules.allow_index)
          return fail(e.span, "'" + n + "' (the element's " + (n == "row" ? "row" : "column") +
                                  " index) has no value in " + rules.what,
                      rules.index_hint.empty() ? "write v[" + n + "] to read a vector v" : rules.index_hint);
        x.kind = Expr::Kind::index;
        x.mode = n == "row" ? LoadMode::row : LoadMode::col;
        return make(std::move(x));
      }
      std::vector<std::string> cands(lets.begin(), lets.end());
      for (const auto& s : prog_.scalars) cands.push_back(s.name);
      for (const auto& t : prog_.tensors) cands.push_back(t.name);
      if (rules.allow_acc) cands.push_back("acc");
      std::string g = diag_closest(n, cands);
      return fail(e.span, "unknown name '" + n + "'",
                  g.empty() ? "names are acc, lets, scalars and declared tensors" : "did you mean '" + g + "'?");
    }
    case AstExpr::Kind::index: {
      const Tensor* t = tensor(e.text);
      if (!t) {
        std::string g = did_you_mean_tensor(e.text);
        return fail(e.span, "unknown tensor '" + e.text + "'", g.empty() ? "declare it first" : g);
      }
      if (!rules.allow_loads)
        return fail(e.span, rules.what + " cannot read tensors",
                    "use acc, scalars and constants only; add an elementwise stage for the rest");
      if (e.index.text != "row" && e.index.text != "col") {
        std::string g = diag_closest(e.index.text, {"row", "col"});
        return fail(e.index.span, "unknown index '" + e.index.text + "'",
                    g.empty() ? "write " + e.text + "[row] or " + e.text + "[col]" : "did you mean '" + g + "'?");
      }
      LoadMode m = e.index.text == "row" ? LoadMode::row : LoadMode::col;
      if (!check_load_shape(*t, m, rules, e.span)) {
        ok = false;
        return nullptr;
      }
      reads.push_back({e.text, e.span});
      x.kind = Expr::Kind::load;
      x.name = e.text;
      x.mode = m;
      return make(std::move(x));
    }
    case AstExpr::Kind::call: {
      for (const auto& r : dsl_reductions())
        if (e.text == r.name)
          return fail(e.span, std::string(r.name) + " is a reduction, not a function",
                      "write it as its own statement storing into a declared tensor: 'm = " + e.text + "(...)'");
      const FnInfo* f = dsl_function_find(e.text);
      if (!f) {
        std::vector<std::string> names;
        for (const auto& fi : dsl_functions()) names.emplace_back(fi.name);
        std::string g = diag_closest(e.text, names);
        return fail(e.span, "unknown function '" + e.text + "'",
                    g.empty() ? "docs/language.md lists the functions" : "did you mean '" + g + "'?");
      }
      int nargs = static_cast<int>(e.args.size());
      std::string sig = std::string(f->name) + "(" + (f->arity == 3 ? "x, y, z" : f->arity == 2 ? "x, y" : "x");
      for (int i = 0; i < f->nparams; ++i) sig += ", p" + std::to_string(i + 1);
      sig += ")";
      if (nargs < f->arity || nargs > f->arity + f->nparams)
        return fail(e.span, std::string(f->name) + " takes " + std::to_string(f->arity) +
                                (f->nparams ? " operand(s) and up to " + std::to_string(f->nparams) + " constant parameter(s)"
                                            : " operand(s)") + ", found " + std::to_string(nargs) + " argument(s)",
                    "write " + sig);
      x.kind = f->arity >= 2 ? Expr::Kind::call : Expr::Kind::unary;
      x.fn = f->id;
      for (int i = 0; i < f->arity; ++i) {
        ExprPtr a = expr(*e.args[static_cast<size_t>(i)], rules, lets, reads, ok);
        if (!a) return nullptr;
        x.args.push_back(a);
      }
      for (int i = f->arity; i < nargs; ++i) {
        const AstExpr& p = *e.args[static_cast<size_t>(i)];
        auto literal = [](const AstExpr& a) -> std::optional<double> {
          if (a.kind == AstExpr::Kind::number) return a.value;
          if (a.kind == AstExpr::Kind::name && a.text == "inf") return std::numeric_limits<double>::infinity();
          return std::nullopt;
        };
        if (auto v = literal(p)) {
          x.params.push_back(*v);
        } else if (p.kind == AstExpr::Kind::neg && literal(*p.args[0])) {
          x.params.push_back(-*literal(*p.args[0]));
        } else {
          return fail(p.span, "the parameters of " + std::string(f->name) + " must be numbers",
                      "write a literal such as 0.1; for a value computed at run time use arithmetic, e.g. x * alpha");
        }
      }
      if (static_cast<int>(x.params.size()) < f->nparams) {
        std::vector<double> defs;
        std::string d = f->defaults;
        size_t st = 0;
        while (!d.empty() && st <= d.size()) {
          size_t c = d.find(',', st);
          if (c == std::string::npos) c = d.size();
          defs.push_back(std::strtod(d.substr(st, c - st).c_str(), nullptr));
          st = c + 1;
        }
        if (defs.size() != static_cast<size_t>(f->nparams))
          return fail(e.span, std::string(f->name) + " needs all " + std::to_string(f->nparams) + " of its parameters",
                      "write " + sig);
        for (size_t i = x.params.size(); i < defs.size(); ++i) x.params.push_back(defs[i]);
      }
      return make(std::move(x));
    }
  }
  return fail(e.span, "unsupported expression", "");
}

bool Checker::check_block(const AstBlock* block, const BlockRules& rules, Span stage_span, Epilogue& out,
                          std::vector<TensorUse>& reads, std::vector<TensorUse>& extra_outputs) {
  if (!block) {
    if (!rules.allow_acc) {
      error(stage_span, "this stage needs a body computing '" + rules.target + "'",
            "add 'body { " + rules.target + " = ... }'");
      return false;
    }
    EpilogueStmt st;
    st.kind = EpilogueStmt::Kind::store;
    st.name = rules.target;
    Expr acc;
    acc.kind = Expr::Kind::acc;
    acc.span = stage_span;
    st.value = std::make_shared<const Expr>(acc);
    st.span = stage_span;
    out.stmts.push_back(st);
    return true;
  }
  std::set<std::string> lets;
  bool stored = false;
  for (const auto& s : block->stmts) {
    bool ok = true;
    EpilogueStmt st;
    st.span = s.span;
    st.name = s.target.text;
    const std::string& n = s.target.text;
    if (s.is_let) {
      if (dsl_reserved_words().count(n))
        error(s.target.span, "'" + n + "' is a reserved word", "choose another name for the let");
      else if (lets.count(n))
        error(s.target.span, "'" + n + "' is already bound by an earlier let", "lets are bound once: choose a new name");
      else if (tensor(n) || std::any_of(prog_.scalars.begin(), prog_.scalars.end(), [&](const Scalar& c) { return c.name == n; }))
        error(s.target.span, "the let '" + n + "' would hide the tensor or scalar of that name", "choose another name");
      else {
        st.kind = EpilogueStmt::Kind::let;
        st.value = expr(*s.value, rules, lets, reads, ok);
        if (!ok) return false;
        lets.insert(n);
        out.stmts.push_back(st);
        continue;
      }
      return false;
    }
    // A reduction statement: `m = rowmax(h)`.
    const ReductionInfo* red = nullptr;
    if (s.value->kind == AstExpr::Kind::call)
      for (const auto& r : dsl_reductions())
        if (s.value->text == r.name) red = &r;
    if (red) {
      if (!rules.allow_reductions) {
        error(s.value->span, std::string(red->name) + " is not available in " + rules.what,
              "row and column reductions are fused into GEMM epilogues; elsewhere use a reduce or rowwise stage");
        return false;
      }
      if (s.value->args.size() != 1) {
        error(s.value->span, std::string(red->name) + " takes one operand", "write m = " + std::string(red->name) + "(expr)");
        return false;
      }
      const Tensor* t = tensor(n);
      if (!t) {
        std::string g = did_you_mean_tensor(n);
        error(s.target.span, "unknown tensor '" + n + "'",
              g.empty() ? "declare the reduction's result, e.g. 'tmp " + n + " : f32[" +
                              std::to_string(red->axis == ReduceAxis::row ? rules.rows : rules.cols) + "]'"
                        : g);
        return false;
      }
      if (n == rules.target) {
        error(s.target.span, "the stage's main output '" + n + "' cannot hold a reduction",
              "declare a separate out or tmp tensor for the reduction");
        return false;
      }
      if (t->role == TensorRole::in || t->role == TensorRole::param) {
        error(s.target.span, "'" + n + "' is declared '" + dsl_role_str(t->role) + "' and cannot be written",
              "declare it as out or tmp");
        return false;
      }
      int64_t len = red->axis == ReduceAxis::row ? rules.rows : rules.cols;
      bool shape_ok = t->shape == std::vector<int64_t>{len} ||
                      (rules.batch > 1 && t->shape == std::vector<int64_t>{rules.batch, len});
      if (!shape_ok) {
        std::string want = rules.batch > 1 ? "[" + std::to_string(rules.batch) + ", " + std::to_string(len) + "]"
                                           : "[" + std::to_string(len) + "]";
        error(s.target.span, std::string(red->name) + " gives one value per " +
                                 (red->axis == ReduceAxis::row ? "row" : "column") + ", so '" + n +
                                 "' must have shape " + want + ", but it is " + tensor_str(*t),
              "declare '" + n + "' as " + dsl_dtype_str(t->dtype) + want);
        return false;
      }
      if (!dsl_dtype_is_float(t->dtype)) {
        error(s.target.span, "reduction results are f16, bf16 or f32; '" + n + "' is " + dsl_dtype_str(t->dtype),
              "declare '" + n + "' as f32");
        return false;
      }
      for (const auto& e : extra_outputs)
        if (e.name == n) {
          error(s.target.span, "'" + n + "' is already written by this epilogue", "write each reduction to its own tensor");
          return false;
        }
      st.kind = EpilogueStmt::Kind::reduce;
      st.reduce_op = red->op;
      st.reduce_axis = red->axis;
      st.value = expr(*s.value->args[0], rules, lets, reads, ok);
      if (!ok) return false;
      extra_outputs.push_back({n, s.target.span});
      out.stmts.push_back(st);
      continue;
    }
    if (n != rules.target) {
      if (lets.count(n)) {
        error(s.target.span, "'" + n + "' is a let and cannot be assigned again", "bind a new name: 'let " + n + "2 = ...'");
      } else if (tensor(n)) {
        error(s.target.span, rules.what + " stores only to '" + rules.target + "', not '" + n + "'",
              rules.allow_reductions ? "extra outputs hold row/column reductions: '" + n + " = rowsum(...)'"
                                     : "write '" + rules.target + " = ...'");
      } else {
        std::vector<std::string> cands{rules.target};
        for (const auto& t : prog_.tensors) cands.push_back(t.name);
        std::string g = diag_closest(n, cands);
        error(s.target.span, "unknown name '" + n + "'",
              g.empty() ? "store the result with '" + rules.target + " = ...' or bind it with 'let " + n + " = ...'"
                        : "did you mean '" + g + "'?");
      }
      return false;
    }
    if (stored) {
      error(s.target.span, "'" + n + "' is stored twice in " + rules.what,
            "store once; bind intermediate values with 'let'");
      return false;
    }
    stored = true;
    st.kind = EpilogueStmt::Kind::store;
    st.value = expr(*s.value, rules, lets, reads, ok);
    if (!ok) return false;
    out.stmts.push_back(st);
  }
  if (!stored) {
    error(block->keyword.span, rules.what + " never stores '" + rules.target + "'",
          "add '" + rules.target + " = " + (rules.allow_acc ? "acc" : "...") + "'");
    return false;
  }
  return true;
}

}  // namespace ucut::dsl::detail
