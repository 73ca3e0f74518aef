// User diagnostics with source spans, rendered as
//   file:line:col: error: message
//     <source line>
//     <caret>
//   hint: the fix
// and internal checks (UCUT_CHECK) for our own bugs. The two are never mixed: a diagnostic is
// about the user's input, an internal check failure is a ucutlass bug and aborts with file:line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ucut {

struct SourcePos {
  int line = 1;  // 1-based
  int col = 1;   // 1-based, in bytes
};

struct Span {
  SourcePos begin;
  int length = 1;  // caret width on the begin line
};

enum class Severity { error, warning, note };

struct Diagnostic {
  Severity severity = Severity::error;
  Span span;
  std::string message;
  std::string hint;  // "did you mean 'tile'?", "use 'tile 128x128x64'", ... may be empty
};

// A source file held in memory, so diagnostics can quote lines.
struct SourceFile {
  std::string path;  // as the user named it
  std::string text;
  std::string_view line(int line_no) const;  // without the newline; empty past the end
};

// Renders one diagnostic in the format above (no colour; stable for golden tests).
std::string diag_render(const SourceFile& file, const Diagnostic& d);
std::string diag_render_all(const SourceFile& file, const std::vector<Diagnostic>& ds);

// The byte offset of the first byte of `text` that is not part of well-formed UTF-8 (overlong
// forms, surrogates and code points past U+10FFFF included), or npos when all of it is.
size_t diag_first_invalid_utf8(std::string_view text);
// The 1-based line and column (in bytes) of byte `offset` of `text`.
SourcePos diag_position(std::string_view text, size_t offset);

// "did you mean" support: the candidate closest to `word` by edit distance, or "" when nothing is
// close enough (distance > max(1, |word|/3)).
std::string diag_closest(std::string_view word, const std::vector<std::string>& candidates);
int diag_edit_distance(std::string_view a, std::string_view b);

[[noreturn]] void internal_check_failed(const char* cond, const char* file, int line,
                                        const std::string& detail);

}  // namespace ucut

// Internal invariant: a failure is a ucutlass bug, never a user error.
#define UCUT_CHECK(cond, detail)                                                  \
  do {                                                                            \
    if (!(cond)) ::ucut::internal_check_failed(#cond, __FILE__, __LINE__, detail); \
  } while (0)
