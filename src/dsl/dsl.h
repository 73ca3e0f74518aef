// The public API of the μCUTLASS language front end: source text in, a checked Program (see
// program.h) or diagnostics out; a canonical printer (what `ucutlass fmt` writes) and a stable
// program identity (the SHA-256 of the canonical text). Everything else in src/dsl (lexer, parser,
// AST, checker) is an implementation detail behind these four functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "support/diagnostics.h"

namespace ucut::dsl {

struct CheckResult {
  std::optional<Program> program;        // set iff there are no error diagnostics
  std::vector<Diagnostic> diagnostics;   // errors (and warnings), in source order
};

// Lexes, parses and checks one program. Never throws and never aborts on user input: every
// problem with the text becomes a Diagnostic with a span and (where one exists) a hint.
// The program's name is the `name` line if present, else the file stem of src.path.
CheckResult dsl_compile(const SourceFile& src);

// The canonical text of a checked program (what `ucutlass fmt` prints): fixed keyword order,
// every knob written (auto where unset), one declaration per line. Invariant:
// dsl_compile({path, dsl_print(p)}).program prints to the same text again.
std::string dsl_print(const Program& p);

// 64 lowercase hex characters: SHA-256 of dsl_print(p). Two programs with the same hash compile
// to the same kernels; it keys caches, memory records and file names.
std::string dsl_hash(const Program& p);

// The function reference table (Markdown) generated from functions.def, as written into
// docs/language.md; a test checks the document holds exactly this text.
std::string dsl_function_table_markdown();

}  // namespace ucut::dsl
