// pass_precision: the GEMM math of each gemm draft under the policy (EVAL-CONTRACT §3):
//   f16/bf16 data         -> that dtype, under every policy;
//   f32 data, exact       -> f32x3 (3xTF32, fp32-faithful);
//   f32 data, tf32        -> tf32 (pass_emit falls back to f32x3 where tf32's layout or
//                            alignment rules fail, e.g. an [K, N] B);
//   f32 data, bf16        -> bf16 through conversion stages (elementwise copies of A and B into
//                            bf16 tmp tensors) when the GEMM time saved by the BF16 rate exceeds
//                            the conversions' DRAM time plus launches; otherwise as tf32.
// Runs after pass_split_stores. Golden tests: tests/golden/lower/linear_bias_gelu.json (tf32),
// bf16_convert.json, matmul_transposed.json (f32x3 fallback).
#include <map>

#include "lower/lower_expr.h"
#include "lower/passes.h"
#include "sol/hardware.h"

namespace ucut::lower {

namespace {

// One extra kernel launch inside a kernel library (stream-ordered, no sync): a few µs on H100/H200.
constexpr double kLaunchSeconds = 3e-6;

// bf16 operands are read by TMA in 16-byte units: 8 elements of the contiguous extent.
constexpr int64_t kBf16TmaElems = 8;

// Bytes a conversion moves: read f32, write bf16.
constexpr int64_t kConvertBytesPerElem = 4 + 2;

bool worth_bf16(const LowerState& s, const Draft& d, const sol::HwSpec& hw, std::string& why) {
  const GemmPlan& g = d.gemm;
  double flops = 2.0 * static_cast<double>(g.batch * g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  double saved = flops / hw.tf32 - flops / hw.bf16;
  double bytes = 0;
  int launches = 0;
  for (const auto& t : {g.a, g.b}) {
    bytes += static_cast<double>(s.need(t).numel() * kConvertBytesPerElem);
    ++launches;
    if (g.a == g.b) break;
  }
  double cost = bytes / hw.mem_bw + launches * kLaunchSeconds;
  auto a_contig = g.a_t ? g.m : g.k, b_contig = g.b_t ? g.k : g.n;
  if (a_contig % kBf16TmaElems != 0 || b_contig % kBf16TmaElems != 0) {
    why = "bf16 operands need contiguous extents that are multiples of 8";
    return false;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "BF16 saves %.1f us of GEMM time, the conversions cost %.1f us", saved * 1e6,
                cost * 1e6);
  why = buf;
  return saved > cost;
}

}  // namespace

Status pass_precision(LowerState& s) {
  auto hw = sol::hw_lookup(s.options.gpu);
  if (!hw) return hw.error();
  std::map<std::string, std::string> converted;  // f32 tensor -> its bf16 copy
  for (size_t j = 0; j < s.drafts.size(); ++j) {
    if (s.drafts[j].kind != DraftKind::gemm) continue;
    GemmPlan& g = s.drafts[j].gemm;
    problem::DType data = s.need(g.a).dtype;
    if (data == problem::DType::f16) { g.precision = dsl::Precision::f16; continue; }
    if (data == problem::DType::bf16) { g.precision = dsl::Precision::bf16; continue; }
    switch (s.options.policy) {
      case sol::Policy::exact: g.precision = dsl::Precision::f32x3; continue;
      case sol::Policy::tf32: g.precision = dsl::Precision::tf32; continue;
      case sol::Policy::bf16: break;
    }
    std::string why;
    int anchor = s.drafts[j].anchor;
    if (!worth_bf16(s, s.drafts[j], *hw, why)) {
      g.precision = dsl::Precision::tf32;
      s.notes.push_back(s.op_label(anchor) + ": kept tf32 under the bf16 policy (" + why + ")");
      continue;
    }
    g.precision = dsl::Precision::bf16;
    s.notes.push_back(s.op_label(anchor) + ": converts its operands to bf16 (" + why + ")");
    std::vector<Draft> pre;
    for (std::string* t : {&g.a, &g.b}) {
      auto it = converted.find(*t);
      if (it == converted.end()) {
        std::string dst = s.add_tensor(*t + "_bf16", problem::DType::bf16, lower_decl_shape(s, *t));
        Draft c;
        c.kind = DraftKind::convert;
        c.src = *t;
        c.dst = dst;
        pre.push_back(c);
        it = converted.emplace(*t, dst).first;
      }
      *t = it->second;
    }
    s.drafts.insert(s.drafts.begin() + static_cast<std::ptrdiff_t>(j), pre.begin(), pre.end());
    j += pre.size();
  }
  return ok_status();
}

}  // namespace ucut::lower
