#include "dsl/lexer.h"

#include <cctype>

namespace ucut::dsl {

namespace {
bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool dsl_lex(const std::string& text, std::vector<Token>& out, Diagnostic& error) {
  out.clear();
  size_t i = 0, n = text.size();
  int line = 1, col = 1;
  auto advance = [&](size_t k) {
    for (size_t j = 0; j < k && i < n; ++j, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto fail = [&](int l, int c, int len, std::string msg, std::string hint) {
    error = Diagnostic{Severity::error, Span{{l, c}, len}, std::move(msg), std::move(hint)};
    out.push_back(Token{Tok::eof, "", Span{{line, col}, 1}});
    return false;
  };
  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i < n && text[i] != '\n') advance(1);
      continue;
    }
    Token t;
    t.span.begin = {line, col};
    size_t start = i;
    if (is_ident_start(c)) {
      while (i < n && is_ident_char(text[i])) advance(1);
      t.kind = Tok::ident;
    } else if (is_digit(c)) {
      while (i < n && is_digit(text[i])) advance(1);
      if (i + 1 < n && text[i] == 'x' && is_digit(text[i + 1])) {
        while (i + 1 < n && text[i] == 'x' && is_digit(text[i + 1])) {
          advance(1);
          while (i < n && is_digit(text[i])) advance(1);
        }
        t.kind = Tok::dims;
      } else {
        if (i + 1 < n && text[i] == '.' && is_digit(text[i + 1])) {
          advance(1);
          while (i < n && is_digit(text[i])) advance(1);
        }
        if (i < n && (text[i] == 'e' || text[i] == 'E')) {
          size_t k = i + 1;
          if (k < n && (text[k] == '+' || text[k] == '-')) ++k;
          if (k < n && is_digit(text[k])) {
            advance(k - i);
            while (i < n && is_digit(text[i])) advance(1);
          }
        }
        t.kind = Tok::number;
      }
      if (i < n && is_ident_char(text[i]))
        return fail(line, col, 1, "unexpected '" + std::string(1, text[i]) + "' after the number '" +
                                      text.substr(start, i - start) + "'",
                    "separate the number from the next word with a space");
    } else if (c == '"') {
      advance(1);
      size_t s = i;
      while (i < n && text[i] != '"' && text[i] != '\n') advance(1);
      if (i >= n || text[i] != '"')
        return fail(t.span.begin.line, t.span.begin.col, 1, "unterminated string",
                    "close the string with '\"' on the same line");
      t.text = text.substr(s, i - s);
      advance(1);
      t.kind = Tok::string;
      t.span.length = static_cast<int>(i - start);
      out.push_back(std::move(t));
      continue;
    } else if (std::string_view("()[]{},:=+-*/;.").find(c) != std::string_view::npos) {
      advance(1);
      t.kind = Tok::punct;
    } else {
      unsigned char uc = static_cast<unsigned char>(c);
      std::string shown = uc >= 0x20 && uc < 0x7f ? std::string(1, c) : "\\x" + [&] {
        const char* hex = "0123456789abcdef";
        return std::string{hex[uc >> 4], hex[uc & 15]};
      }();
      return fail(line, col, 1, "unexpected character '" + shown + "'",
                  uc >= 0x80 ? "μCUTLASS source is ASCII; write names with letters, digits and '_'"
                             : "remove it; '#' starts a comment");
    }
    t.text = text.substr(start, i - start);
    t.span.length = static_cast<int>(i - start);
    out.push_back(std::move(t));
  }
  out.push_back(Token{Tok::eof, "", Span{{line, col}, 1}});
  return true;
}

}  // namespace ucut::dsl
