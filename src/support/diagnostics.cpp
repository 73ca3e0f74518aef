#include "support/diagnostics.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace ucut {

std::string_view SourceFile::line(int line_no) const {
  std::string_view t = text;
  int current = 1;
  size_t start = 0;
  while (current < line_no) {
    size_t nl = t.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
    ++current;
  }
  if (start > t.size()) return {};
  size_t end = t.find('\n', start);
  if (end == std::string_view::npos) end = t.size();
  std::string_view l = t.substr(start, end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

static const char* severity_name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

std::string diag_render(const SourceFile& file, const Diagnostic& d) {
  std::string out = file.path + ":" + std::to_string(d.span.begin.line) + ":" +
                    std::to_string(d.span.begin.col) + ": " + severity_name(d.severity) + ": " +
                    d.message + "\n";
  std::string_view src = file.line(d.span.begin.line);
  if (!src.empty()) {
    out += "  ";
    out += src;
    out += "\n  ";
    // Tabs in the source keep their width under the caret.
    for (int i = 1; i < d.span.begin.col && i - 1 < static_cast<int>(src.size()); ++i)
      out += src[static_cast<size_t>(i - 1)] == '\t' ? '\t' : ' ';
    out += '^';
    for (int i = 1; i < d.span.length; ++i) out += '~';
    out += "\n";
  }
  if (!d.hint.empty()) out += "hint: " + d.hint + "\n";
  return out;
}

std::string diag_render_all(const SourceFile& file, const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += diag_render(file, d);
  return out;
}

size_t diag_first_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // The sequence length and the range of its second byte (which rules out overlong forms,
    // surrogates and code points past U+10FFFF), per Unicode's table of well-formed sequences.
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) len = 2;
    else if (b == 0xe0) len = 3, lo = 0xa0;
    else if (b == 0xed) len = 3, hi = 0x9f;
    else if (b >= 0xe1 && b <= 0xef) len = 3;
    else if (b == 0xf0) len = 4, lo = 0x90;
    else if (b >= 0xf1 && b <= 0xf3) len = 4;
    else if (b == 0xf4) len = 4, hi = 0x8f;
    else return i;
    if (i + len > text.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xbf)) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

SourcePos diag_position(std::string_view text, size_t offset) {
  SourcePos p;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.col = 1;
    } else {
      ++p.col;
    }
  }
  return p;
}

int diag_edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string diag_closest(std::string_view word, const std::vector<std::string>& candidates) {
  int limit = std::max(1, static_cast<int>(word.size()) / 3);
  std::string best;
  int best_d = limit + 1;
  for (const auto& c : candidates) {
    int d = diag_edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

void internal_check_failed(const char* cond, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr,
               "ucutlass internal error: %s:%d: check failed: %s%s%s\n"
               "This is a bug in ucutlass, not in your input; please report it.\n",
               file, line, cond, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

}  // namespace ucut
