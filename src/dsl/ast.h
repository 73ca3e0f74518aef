// The parser's AST: the program as written, with a span on every name and value so the checker
// can point at the exact place of a mistake. Deliberately loose (knob values are raw tokens, calls
// are not yet resolved to functions or stage kinds); the checker turns it into a Program
// (program.h), which is the only structure later passes see.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace ucut::dsl {

struct AstName {
  std::string text;
  Span span;
};

struct AstExpr;
using AstExprPtr = std::unique_ptr<AstExpr>;

struct AstExpr {
  enum class Kind {
    number,  // 2.5
    name,    // acc, alpha, r, h
    index,   // b[col], b[row]    (name, index = row/col word)
    call,    // f(args...)
    neg,     // -x
    binary,  // x op y; op in "+-*/"
  };
  Kind kind = Kind::number;
  double value = 0;   // number
  std::string text;   // number: as written; name/index/call: the name
  AstName index;      // index: the word inside [ ]
  char op = '+';      // binary
  std::vector<AstExprPtr> args;
  Span span;          // the whole expression's first token (names: the name)
};

// `let h = e`, `y = e`
struct AstStmt {
  bool is_let = false;
  AstName target;
  AstExprPtr value;
  Span span;
};

struct AstBlock {
  AstName keyword;  // epilogue / prologue / body
  std::vector<AstStmt> stmts;
};

// `tile 128x256x32`, `precision tf32`, `stages auto`
struct AstKnob {
  AstName name;
  enum class Kind { word, number, dims } kind = Kind::word;
  std::string text;            // as written
  std::vector<int64_t> dims;   // dims: 128x256x32 -> {128,256,32}; number: one entry if integral
  double number = 0;
  bool integral = false;
  Span value_span;
};

// An argument of a stage call: `x`, `W.T`, `dims=[0, 1]`, `eps=1e-5`, `mask=m`, `(a, b.T)`.
struct AstArg {
  std::optional<AstName> key;  // keyword arguments
  enum class Kind { name, number, list, pair } kind = Kind::name;
  AstName name;                // name (the tensor or word)
  // number: also `inf`, `-inf`, `nan` (torch stages' attributes and scalar operands)
  bool transposed = false;     // name.T
  double number = 0;           // number
  std::string number_text;
  std::vector<int64_t> list;   // list of integers
  std::vector<AstArg> pair;    // grouped GEMM (a, b)
  Span span;
};

// One statement of a torch stage: `[let] y = op(x, 2, dim=1)` or `(a, b) = split(t, ...)`.
struct AstTorchStmt {
  bool is_let = false;
  std::vector<AstName> targets;
  AstName op;
  std::vector<AstArg> args;      // positional (tensor names, numbers) then keyword arguments
  Span span;
};

struct AstStage {
  std::vector<AstName> outputs;
  bool tuple_outputs = false;
  AstName kind;                  // gemm, grouped_gemm, rowwise, reduce, scan, elementwise
  std::optional<AstName> op;     // rowwise/reduce/scan: the operation name
  std::vector<AstArg> args;
  std::vector<AstKnob> knobs;
  std::vector<AstBlock> blocks;
  std::vector<AstTorchStmt> torch_stmts;  // kind `torch`: the block's statements
  Span span;
};

struct AstDecl {
  AstName role;  // in / param / out / tmp
  AstName name;
  AstName dtype;
  std::vector<int64_t> shape;
  std::vector<Span> dim_spans;
  Span shape_span;
  std::optional<AstName> binding;  // the string, without quotes
  // view: `= BASE strides [..] offset N`
  std::optional<AstName> view_base;
  std::vector<int64_t> view_strides;
  int64_t view_offset = 0;
  Span view_span;
};

struct AstScalar {
  AstName name;
  double value = 0;
  Span value_span;
};

struct AstProgram {
  int version = 0;
  Span version_span;
  std::optional<AstName> name;
  std::vector<AstDecl> decls;
  std::vector<AstScalar> scalars;
  std::vector<AstStage> stages;
};

}  // namespace ucut::dsl
