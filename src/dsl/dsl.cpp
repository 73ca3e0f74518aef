// dsl_compile: the front end's pipeline, in order: UTF-8 check, lex + parse (parser.cpp), check
// (checker.cpp).
#include "dsl/dsl.h"

#include <cctype>
#include <cstdio>

#include "dsl/checker.h"
#include "dsl/parser.h"

namespace ucut::dsl {

namespace {
// The file stem as a program name: letters, digits and '_' only, not starting with a digit.
std::string stem_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find('.');
  if (dot != std::string::npos) base = base.substr(0, dot);
  std::string out;
  for (char c : base) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty()) return "program";
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out = "p_" + out;
  return out;
}
}  // namespace

CheckResult dsl_compile(const SourceFile& src) {
  CheckResult r;
  // Bytes that are not UTF-8 (even in a comment) would reach every JSON and terminal that quotes
  // the source: refuse them first, at their place.
  if (size_t bad = diag_first_invalid_utf8(src.text); bad != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(src.text[bad]));
    r.diagnostics.push_back({Severity::error, Span{diag_position(src.text, bad), 1},
                             std::string("the file is not valid UTF-8 (byte ") + byte + ")",
                             "save it as UTF-8; outside comments μCUTLASS source is ASCII"});
    return r;
  }
  ParseResult p = dsl_parse(src.text);
  if (p.error) {
    r.diagnostics.push_back(*p.error);
    return r;
  }
  r.program = dsl_check(p.program, stem_name(src.path), r.diagnostics);
  return r;
}

}  // namespace ucut::dsl
