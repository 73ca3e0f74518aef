// The lexer: source text to tokens. Newlines are whitespace (statements and knobs are separated
// by their own syntax), `#` starts a comment to the end of the line, `128x256x32` is one `dims`
// token so tile and cluster shapes need no special grammar.
#pragma once

#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace ucut::dsl {

enum class Tok { ident, number, dims, string, punct, eof };

struct Token {
  Tok kind = Tok::eof;
  std::string text;  // ident/number/dims: as written; string: contents without quotes; punct: the char
  Span span;
};

// Fills `out` with the tokens (ending with one eof token). On a lexical error returns false and
// fills `error`; `out` then holds the tokens before the error.
bool dsl_lex(const std::string& text, std::vector<Token>& out, Diagnostic& error);

}  // namespace ucut::dsl
