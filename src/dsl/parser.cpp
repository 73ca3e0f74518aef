#include "dsl/parser.h"

#include <algorithm>
#include <limits>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "dsl/lexer.h"
#include "dsl/program.h"

namespace ucut::dsl {

namespace {

// Thrown only inside this file to unwind to dsl_parse, which turns it into the result's error.
struct SyntaxError {
  Diagnostic d;
};

constexpr int kMaxDepth = 100;   // expression nesting; deeper input is rejected, not recursed into
constexpr int kMaxNodes = 2000;  // nodes per statement: bounds the depth of left-leaning chains
                                 // (a*b*c*...) that later passes walk recursively

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  AstProgram program() {
    AstProgram p;
    expect_word("ucut", "a program starts with the header 'ucut 1'", "add 'ucut 1' as the first line");
    const Token& v = peek();
    if (v.kind != Tok::number) fail(v, "expected the language version after 'ucut'", "write 'ucut 1'");
    p.version_span = v.span;
    p.version = static_cast<int>(integer(next(), 1000));
    while (peek().kind != Tok::eof) {
      const Token& k = peek();
      if (k.kind != Tok::ident)
        fail(k, "expected a declaration or a stage, found " + describe(k),
             "lines start with in, param, out, tmp, view, scalar, name or stage");
      if (k.text == "name") {
        next();
        if (p.name) fail(k, "the program name is given twice", "keep one 'name' line");
        p.name = ident("a program name after 'name'");
      } else if (k.text == "in" || k.text == "param" || k.text == "out" || k.text == "tmp" || k.text == "view") {
        p.decls.push_back(decl());
      } else if (k.text == "scalar") {
        next();
        AstScalar s;
        s.name = ident("a scalar name");
        expect_punct('=', "give the scalar a default value: 'scalar alpha = 0.5'");
        s.value_span = peek().span;
        s.value = signed_number("a number");
        p.scalars.push_back(std::move(s));
      } else if (k.text == "stage") {
        p.stages.push_back(stage());
      } else {
        static const std::vector<std::string> words = {"in", "param", "out", "tmp", "view", "scalar", "name", "stage"};
        std::string g = diag_closest(k.text, words);
        fail(k, "unknown declaration '" + k.text + "'",
             g.empty() ? "lines start with in, param, out, tmp, view, scalar, name or stage"
                       : "did you mean '" + g + "'?");
      }
    }
    return p;
  }

 private:
  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;
  int nodes_ = 0;
  void count_node() {
    if (++nodes_ > kMaxNodes) fail(peek(), "expression too long", "split it with 'let' statements");
  }

  const Token& peek(size_t k = 0) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = t_[pos_];
    if (pos_ + 1 < t_.size()) ++pos_;
    return t;
  }
  bool is_punct(char c, size_t k = 0) const {
    return peek(k).kind == Tok::punct && peek(k).text[0] == c;
  }
  bool is_word(const char* w, size_t k = 0) const { return peek(k).kind == Tok::ident && peek(k).text == w; }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::eof: return "the end of the file";
      case Tok::string: return "the string \"" + t.text + "\"";
      case Tok::punct: return "'" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] static void fail(const Token& t, std::string msg, std::string hint) {
    throw SyntaxError{Diagnostic{Severity::error, t.span, std::move(msg), std::move(hint)}};
  }
  void expect_word(const char* w, const std::string& what, const std::string& hint) {
    if (!is_word(w)) fail(peek(), "expected '" + std::string(w) + "': " + what + ", found " + describe(peek()), hint);
    next();
  }
  void expect_punct(char c, const std::string& hint) {
    if (!is_punct(c)) fail(peek(), "expected '" + std::string(1, c) + "', found " + describe(peek()), hint);
    next();
  }
  AstName ident(const std::string& what) {
    const Token& t = peek();
    if (t.kind != Tok::ident) fail(t, "expected " + what + ", found " + describe(t), "names are letters, digits and '_'");
    next();
    return AstName{t.text, t.span};
  }
  static int64_t integer(const Token& t, int64_t max) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size())
      fail(t, "expected a whole number, found " + describe(t), "write an integer such as 128");
    if (v > max) fail(t, "the number " + t.text + " is too large (at most " + std::to_string(max) + ")", "use a smaller value");
    return v;
  }
  static double number_value(const Token& t) {
    double v = std::strtod(t.text.c_str(), nullptr);
    if (!std::isfinite(v)) fail(t, "the number " + t.text + " is out of range", "use a finite value");
    return v;
  }
  double signed_number(const std::string& what) {
    bool neg = false;
    if (is_punct('-')) {
      next();
      neg = true;
    }
    const Token& t = peek();
    if (t.kind != Tok::number) fail(t, "expected " + what + ", found " + describe(t), "write a number such as 0.5");
    next();
    double v = number_value(t);
    return neg ? -v : v;
  }

  AstDecl decl() {
    AstDecl d;
    d.role = ident("in, param, out, tmp or view");
    d.name = ident("a tensor name after '" + d.role.text + "'");
    expect_punct(':', "write the type after a colon: '" + d.name.text + " : f32[1024, 1024]'");
    d.dtype = ident("a dtype (f16, bf16, f32, i32, i64, u8, bool)");
    d.shape_span = peek().span;
    expect_punct('[', "write the shape in brackets: '" + d.dtype.text + "[1024, 1024]'");
    if (!is_punct(']')) {
      for (;;) {
        const Token& t = peek();
        if (t.kind != Tok::number) fail(t, "expected a dimension size, found " + describe(t), "dimensions are positive integers: [1024, 4096]");
        d.dim_spans.push_back(t.span);
        d.shape.push_back(integer(next(), kMaxElements));
        if (is_punct(',')) {
          next();
          continue;
        }
        break;
      }
    }
    expect_punct(']', "separate dimensions with ',' and close the shape with ']'");
    if (d.role.text == "view") {
      // view v : f32[..] = BASE strides [s0, ..] offset N
      d.view_span = peek().span;
      expect_punct('=', "a view names its tensor: 'view " + d.name.text + " : ..[..] = x strides [..] offset 0'");
      d.view_base = ident("the viewed tensor's name");
      const Token& kw = peek();
      if (kw.kind != Tok::ident || kw.text != "strides")
        fail(kw, "expected 'strides' after the viewed tensor, found " + describe(kw), "write 'strides [s0, s1, ..]'");
      next();
      expect_punct('[', "write the strides in brackets: 'strides [4096, 1]'");
      if (!is_punct(']'))
        for (;;) {
          const bool neg = is_punct('-');  // a negative stride walks the tensor backwards (a flip)
          if (neg) next();
          const Token& t = peek();
          if (t.kind != Tok::number) fail(t, "expected a stride, found " + describe(t), "strides are integers");
          d.view_strides.push_back((neg ? -1 : 1) * integer(next(), kMaxElements));
          if (!is_punct(',')) break;
          next();
        }
      expect_punct(']', "separate strides with ',' and close them with ']'");
      const Token& off = peek();
      if (off.kind == Tok::ident && off.text == "offset") {
        next();
        const Token& n = peek();
        if (n.kind != Tok::number) fail(n, "expected an element offset, found " + describe(n), "write 'offset 0'");
        d.view_offset = integer(next(), kMaxElements);
      }
      return d;
    }
    if (is_punct('=')) {
      next();
      const Token& s = peek();
      if (s.kind != Tok::string) fail(s, "expected a quoted state_dict key after '=', found " + describe(s), "write param W : f32[..] = \"linear.weight\"");
      next();
      d.binding = AstName{s.text, s.span};
    }
    return d;
  }

  AstArg arg() {
    AstArg a;
    a.span = peek().span;
    if (is_punct('(')) {
      next();
      a.kind = AstArg::Kind::pair;
      a.pair.push_back(arg());
      expect_punct(',', "a group is written (A, B)");
      a.pair.push_back(arg());
      expect_punct(')', "a group is written (A, B)");
      return a;
    }
    if (peek().kind == Tok::ident && is_punct('=', 1)) {
      a.key = ident("an argument name");
      next();
      a.span = peek().span;
    }
    if (is_punct('[')) {
      next();
      a.kind = AstArg::Kind::list;
      if (!is_punct(']')) {
        for (;;) {
          bool neg = false;
          if (is_punct('-')) {
            next();
            neg = true;
          }
          const Token& t = peek();
          if (t.kind != Tok::number) fail(t, "expected an integer, found " + describe(t), "write dims=[0, 1]");
          // dims=[..] holds dimension indices (the checkers bound them by the rank); a torch
          // stage's shape=[..] and sizes=[..] hold extents, at most the largest dimension
          int64_t v = integer(next(), int64_t(1) << 40);
          a.list.push_back(neg ? -v : v);
          if (!is_punct(',')) break;
          next();
        }
      }
      expect_punct(']', "close the list with ']'");
      return a;
    }
    if ((is_word("inf") || is_word("nan")) || (is_punct('-') && (is_word("inf", 1) || is_word("nan", 1)))) {
      a.kind = AstArg::Kind::number;
      const bool neg = is_punct('-');
      if (neg) next();
      const bool nan = is_word("nan");
      a.number_text = (neg ? "-" : "") + next().text;
      a.number = nan ? std::numeric_limits<double>::quiet_NaN()
                     : (neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
      return a;
    }
    if (is_punct('-') || peek().kind == Tok::number) {
      a.kind = AstArg::Kind::number;
      a.number_text = (is_punct('-') ? "-" : "") + peek(is_punct('-') ? 1 : 0).text;
      a.number = signed_number("a number");
      return a;
    }
    a.kind = AstArg::Kind::name;
    a.name = ident("a tensor name or value");
    if (is_punct('.')) {
      next();
      const Token& t = peek();
      if (!(t.kind == Tok::ident && t.text == "T"))
        fail(t, "expected 'T' after '.', found " + describe(t), "'.T' is the only suffix: it transposes a GEMM operand");
      next();
      a.transposed = true;
    }
    return a;
  }

  AstStage stage() {
    AstStage s;
    s.span = next().span;  // 'stage'
    if (is_punct('(')) {
      next();
      s.tuple_outputs = true;
      for (;;) {
        s.outputs.push_back(ident("an output tensor name"));
        if (!is_punct(',')) break;
        next();
      }
      expect_punct(')', "close the output list with ')'");
    } else {
      s.outputs.push_back(ident("the stage's output tensor"));
    }
    expect_punct('=', "a stage is written 'stage y = gemm(x, W.T) { ... }'");
    s.kind = ident("a stage kind (gemm, grouped_gemm, rowwise, reduce, scan, elementwise, attention)");
    static const std::vector<std::string> top = {"in", "param", "out", "tmp", "view", "scalar", "name", "stage"};
    if (peek().kind == Tok::ident &&
        std::find(top.begin(), top.end(), peek().text) == top.end())
      s.op = ident("an operation name");
    if (is_punct('(')) {
      next();
      if (!is_punct(')')) {
        for (;;) {
          s.args.push_back(arg());
          if (!is_punct(',')) break;
          next();
        }
      }
      expect_punct(')', "separate arguments with ',' and close them with ')'");
    }
    if (s.kind.text == "torch" && !s.op && s.args.empty() && is_punct('{')) {
      torch_block(s);
      return s;
    }
    if (is_punct('{')) {
      next();
      while (!is_punct('}')) {
        const Token& k = peek();
        if (k.kind == Tok::eof) fail(k, "unexpected end of the file inside a stage", "close the stage with '}'");
        if (k.kind != Tok::ident) fail(k, "expected a knob name or 'epilogue', found " + describe(k), "inside a stage write knobs such as 'tile 128x128x64' and an 'epilogue { ... }' block");
        if ((k.text == "epilogue" || k.text == "prologue" || k.text == "body") && is_punct('{', 1)) {
          s.blocks.push_back(block());
          continue;
        }
        AstKnob kn;
        kn.name = ident("a knob name");
        const Token& v = peek();
        kn.value_span = v.span;
        kn.text = v.text;
        if (v.kind == Tok::ident) {
          kn.kind = AstKnob::Kind::word;
        } else if (v.kind == Tok::number) {
          kn.kind = AstKnob::Kind::number;
          kn.number = number_value(v);
          int64_t iv = 0;
          auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), iv);
          kn.integral = ec == std::errc() && p == v.text.data() + v.text.size();
          if (kn.integral) kn.dims.push_back(iv);
        } else if (v.kind == Tok::dims) {
          kn.kind = AstKnob::Kind::dims;
          size_t st = 0;
          while (st <= v.text.size()) {
            size_t x = v.text.find('x', st);
            if (x == std::string::npos) x = v.text.size();
            Token part{Tok::number, v.text.substr(st, x - st), v.span};
            kn.dims.push_back(integer(part, 1 << 20));
            st = x + 1;
          }
        } else {
          fail(v, "expected a value for the knob '" + kn.name.text + "', found " + describe(v),
               "every knob takes one value, e.g. '" + kn.name.text + " auto'");
        }
        next();
        s.knobs.push_back(std::move(kn));
      }
      next();
    }
    return s;
  }

  // `torch { [let] y = op(args) ... }`: PyTorch operations the host runs (docs/language.md).
  void torch_block(AstStage& s) {
    next();  // '{'
    while (!is_punct('}')) {
      if (is_punct(';')) {
        next();
        continue;
      }
      const Token& k = peek();
      if (k.kind == Tok::eof) fail(k, "unexpected end of the file inside a torch stage", "close the stage with '}'");
      AstTorchStmt st;
      st.span = k.span;
      if (is_word("let")) {
        next();
        st.is_let = true;
      }
      if (is_punct('(')) {
        next();
        for (;;) {
          st.targets.push_back(ident("a name"));
          if (!is_punct(',')) break;
          next();
        }
        expect_punct(')', "close the list of names with ')'");
      } else {
        if (peek().kind != Tok::ident)
          fail(peek(), "expected a statement ('name = op(args)'), found " + describe(peek()),
               "write for example 'y = masked_fill(s, m, -inf)'");
        st.targets.push_back(ident("a name"));
      }
      expect_punct('=', "a torch statement is 'name = op(args)'");
      st.op = ident("a PyTorch operation name");
      expect_punct('(', "a torch statement calls an operation: 'name = op(args)'");
      if (!is_punct(')')) {
        for (;;) {
          st.args.push_back(arg());
          if (!is_punct(',')) break;
          next();
        }
      }
      expect_punct(')', "separate arguments with ',' and close them with ')'");
      s.torch_stmts.push_back(std::move(st));
    }
    next();
  }

  AstBlock block() {
    AstBlock b;
    b.keyword = ident("a block name");
    expect_punct('{', "");
    while (!is_punct('}')) {
      if (is_punct(';')) {
        next();
        continue;
      }
      const Token& k = peek();
      if (k.kind == Tok::eof) fail(k, "unexpected end of the file inside '" + b.keyword.text + "'", "close the block with '}'");
      AstStmt st;
      st.span = k.span;
      if (is_word("let")) {
        next();
        st.is_let = true;
      }
      if (peek().kind != Tok::ident)
        fail(peek(), "expected a statement ('let name = expr' or 'output = expr'), found " + describe(peek()),
             "write for example 'y = relu(acc)'");
      st.target = ident("a name");
      expect_punct('=', "a statement is 'name = expression'");
      nodes_ = 0;
      st.value = expr();
      b.stmts.push_back(std::move(st));
    }
    next();
    return b;
  }

  AstExprPtr expr() {
    if (++depth_ > kMaxDepth) fail(peek(), "expression nested too deeply", "split it with 'let' statements");
    AstExprPtr l = term();
    while (is_punct('+') || is_punct('-')) {
      count_node();
      auto e = std::make_unique<AstExpr>();
      e->kind = AstExpr::Kind::binary;
      e->span = peek().span;
      e->op = next().text[0];
      e->args.push_back(std::move(l));
      e->args.push_back(term());
      l = std::move(e);
    }
    --depth_;
    return l;
  }
  AstExprPtr term() {
    AstExprPtr l = unary();
    while (is_punct('*') || is_punct('/')) {
      count_node();
      auto e = std::make_unique<AstExpr>();
      e->kind = AstExpr::Kind::binary;
      e->span = peek().span;
      e->op = next().text[0];
      e->args.push_back(std::move(l));
      e->args.push_back(unary());
      l = std::move(e);
    }
    return l;
  }
  AstExprPtr unary() {
    if (is_punct('-')) {
      if (++depth_ > kMaxDepth) fail(peek(), "expression nested too deeply", "split it with 'let' statements");
      count_node();
      auto e = std::make_unique<AstExpr>();
      e->kind = AstExpr::Kind::neg;
      e->span = next().span;
      e->args.push_back(unary());
      --depth_;
      return e;
    }
    return atom();
  }
  AstExprPtr atom() {
    count_node();
    const Token& t = peek();
    auto e = std::make_unique<AstExpr>();
    e->span = t.span;
    if (t.kind == Tok::number) {
      next();
      e->kind = AstExpr::Kind::number;
      e->text = t.text;
      e->value = number_value(t);
      return e;
    }
    if (is_punct('(')) {
      next();
      AstExprPtr inner = expr();
      expect_punct(')', "close the parenthesis");
      return inner;
    }
    if (t.kind != Tok::ident) fail(t, "expected an expression, found " + describe(t), "expressions use acc, numbers, names, + - * / and functions such as relu(x)");
    next();
    e->text = t.text;
    if (is_punct('[')) {
      next();
      e->kind = AstExpr::Kind::index;
      const Token& w = peek();
      if (w.kind != Tok::ident) fail(w, "expected 'row' or 'col' inside '[ ]', found " + describe(w), "write " + t.text + "[row] or " + t.text + "[col]");
      next();
      e->index = AstName{w.text, w.span};
      expect_punct(']', "write " + t.text + "[row] or " + t.text + "[col]");
      return e;
    }
    if (is_punct('(')) {
      next();
      e->kind = AstExpr::Kind::call;
      if (!is_punct(')')) {
        for (;;) {
          e->args.push_back(expr());
          if (!is_punct(',')) break;
          next();
        }
      }
      expect_punct(')', "separate arguments with ',' and close the call with ')'");
      return e;
    }
    e->kind = AstExpr::Kind::name;
    return e;
  }
};

}  // namespace

ParseResult dsl_parse(const std::string& text) {
  ParseResult r;
  std::vector<Token> toks;
  Diagnostic lex_error;
  if (!dsl_lex(text, toks, lex_error)) {
    r.error = lex_error;
    return r;
  }
  try {
    Parser p(std::move(toks));
    r.program = p.program();
  } catch (const SyntaxError& e) {
    r.error = e.d;
  }
  return r;
}

}  // namespace ucut::dsl
