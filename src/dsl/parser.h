// The parser: tokens to AST (ast.h) by recursive descent over the grammar in docs/language.md.
// It stops at the first syntax error (one precise message beats a cascade); names, kinds, knob
// values and shapes are left to the checker.
#pragma once

#include <string>

#include "dsl/ast.h"
#include "support/result.h"

namespace ucut::dsl {

struct ParseResult {
  AstProgram program;
  std::optional<Diagnostic> error;  // set on the first lexical or syntax error
};

ParseResult dsl_parse(const std::string& text);

}  // namespace ucut::dsl
