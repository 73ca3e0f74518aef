// Fuzz target for the front end: any bytes through dsl_compile must give a program or
// diagnostics, never a crash or an internal-check failure; a program that checks must have every
// tensor's size in bounds and print to text that checks again and prints identically (the
// canonical printer round-trips).
//
// Two builds: with libFuzzer (option UCUTLASS_FUZZ, clang: -fsanitize=fuzzer) this file provides
// LLVMFuzzerTestOneInput only; with UCUT_FUZZ_DRIVER defined it also has a main() that mutates
// the example programs at random for a time budget (CTest: dsl_fuzz_driver, ~20 s).
#include <cstddef>
#include <cstdint>
#include <string>

#include "dsl/dsl.h"

static void fuzz_one(const std::string& text) {
  using namespace ucut;
  auto r = dsl::dsl_compile(SourceFile{"fuzz.ucut", text});
  if (r.program) {
    UCUT_CHECK(r.diagnostics.empty() || r.diagnostics[0].severity != Severity::error, "program with errors");
    for (const auto& t : r.program->tensors)
      UCUT_CHECK(t.numel() > 0 && t.numel() <= dsl::kMaxElements, "tensor '" + t.name + "' passed with a bad size");
    std::string once = dsl::dsl_print(*r.program);
    auto r2 = dsl::dsl_compile(SourceFile{"fuzz.ucut", once});
    UCUT_CHECK(r2.program.has_value(), "canonical text does not check:\n" + once +
                                           diag_render_all({"fuzz.ucut", once}, r2.diagnostics));
    UCUT_CHECK(dsl::dsl_print(*r2.program) == once, "canonical print is not idempotent:\n" + once);
  } else {
    UCUT_CHECK(!r.diagnostics.empty(), "rejected without a diagnostic:\n" + text);
    for (const auto& d : r.diagnostics) {
      UCUT_CHECK(d.span.begin.line >= 1 && d.span.begin.col >= 1, "bad span");
      UCUT_CHECK(!d.message.empty(), "empty message");
      (void)diag_render({"fuzz.ucut", text}, d);
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_one(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}

#ifdef UCUT_FUZZ_DRIVER
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

// Mutations that keep inputs near the grammar: token-level swaps and edits find more checker
// paths than random bytes; shape edits put huge sizes where the size arithmetic runs, and
// malformed UTF-8 sequences test the front end's first check.
static const char* kWords[] = {"ucut", "in", "param", "out", "tmp", "scalar", "stage", "gemm", "grouped_gemm",
                               "rowwise", "reduce", "scan", "elementwise", "epilogue", "prologue", "body",
                               "let", "acc", "row", "col", "auto", ".T", "tile", "cluster", "precision",
                               "tf32", "bf16", "f16", "f32", "i64", "bool", "128x128x64", "2x1", "0", "-1",
                               "1e309", "99999999999999999999", "[", "]", "(", ")", "{", "}", ",", "=", ":",
                               "+", "-", "*", "/", ";", "#", "\"", "relu", "gelu", "clamp", "rowmax",
                               "colsum", "softmax", "layer_norm", "sum", "mse", "cross_entropy", "cumsum",
                               "dims=[0]", "eps=0", "mask=m", "\xff", "\n", "x", "y", "W", "b",
                               "\xc0\xaf", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "μ"};

// Sizes near the limits: 2^31, 2^32 (+1), 2^40 (+1, the largest dimension and tensor), 2^62, 2^63 - 1,
// 2^64. Products of two of them overflow 64 bits; the checker must say so, never wrap or divide
// by zero.
static const char* kHugeSizes[] = {"2147483648",          "4294967296",          "4294967297",
                                   "1099511627776",       "1099511627777",       "4611686018427387904",
                                   "9223372036854775807", "18446744073709551616", "65536",
                                   "1",                   "3"};

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 20.0;
  unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1u;
  std::vector<std::string> corpus;
  std::string root = std::string(UCUTLASS_SOURCE_DIR);
  for (const char* dir : {"/examples", "/tests/golden/dsl/ok", "/tests/golden/dsl/errors"}) {
    if (!std::filesystem::exists(root + dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(root + dir)) {
      if (e.path().extension() != ".ucut") continue;
      std::ifstream f(e.path());
      std::stringstream s;
      s << f.rdbuf();
      corpus.push_back(s.str());
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "no seed programs found under %s\n", root.c_str());
    return 1;
  }
  for (const auto& c : corpus) fuzz_one(c);
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  auto start = std::chrono::steady_clock::now();
  long runs = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    std::string s = corpus[pick(corpus.size())];
    int edits = 1 + static_cast<int>(pick(4));
    for (int e = 0; e < edits; ++e) {
      size_t pos = pick(s.size() + 1);
      switch (pick(8)) {
        case 0: s.insert(pos, kWords[pick(sizeof kWords / sizeof *kWords)]); break;
        case 1: if (pos < s.size()) s.erase(pos, 1 + pick(8)); break;
        case 2: if (pos < s.size()) s[pos] = static_cast<char>(rng()); break;
        case 3: {  // splice a piece of another program
          const std::string& o = corpus[pick(corpus.size())];
          size_t a = pick(o.size()), n = pick(80);
          s.insert(pos, o.substr(a, n));
          break;
        }
        case 4: {  // replace a number
          size_t d = s.find_first_of("0123456789", pos);
          if (d != std::string::npos) s.replace(d, 1, std::to_string(static_cast<int>(rng() % 5000) - 100));
          break;
        }
        case 6: {  // a dimension of a shape becomes a huge size
          size_t open = s.find('[', pos);
          if (open == std::string::npos) open = s.find('[');
          if (open == std::string::npos) break;
          size_t d = s.find_first_of("0123456789", open);
          size_t close = s.find(']', open);
          if (d == std::string::npos || close == std::string::npos || d > close) break;
          size_t end = s.find_first_not_of("0123456789", d);
          s.replace(d, end - d, kHugeSizes[pick(sizeof kHugeSizes / sizeof *kHugeSizes)]);
          break;
        }
        case 7: {  // a shape gains a dimension
          size_t close = s.find(']', pos);
          if (close == std::string::npos) close = s.find(']');
          if (close != std::string::npos)
            s.insert(close, std::string(", ") + kHugeSizes[pick(sizeof kHugeSizes / sizeof *kHugeSizes)]);
          break;
        }
        default: {  // duplicate a line
          size_t a = s.rfind('\n', pos), b = s.find('\n', pos);
          if (a != std::string::npos && b != std::string::npos) s.insert(b, s.substr(a, b - a));
          break;
        }
      }
    }
    fuzz_one(s);
    ++runs;
  }
  std::printf("dsl_fuzz_driver: %ld mutated programs, seed %u, no crash\n", runs, seed);
  return runs > 0 ? 0 : 1;
}
#endif
