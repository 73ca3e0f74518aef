#include "codegen/functors.h"

#include <cmath>
#include <cstdio>

#include "support/diagnostics.h"

namespace ucut::codegen {
namespace {

struct FnInfo {
  const char* name;
  int arity;
  int nparams;
};

FnInfo fn_info(dsl::Fn fn) {
  switch (fn) {
#define UCUT_FN(id, name, arity, nparams, defaults, formula) \
  case dsl::Fn::id: return FnInfo{name, arity, nparams};
#include "dsl/functions.def"
#undef UCUT_FN
  }
  return FnInfo{"?", 1, 0};
}

// The body of each function in float math. A switch without `default` makes the compiler
// (-Wswitch -Werror) reject a functions.def entry that has no body here.
std::string fn_body(dsl::Fn fn) {
  using dsl::Fn;
  switch (fn) {
    case Fn::neg: return "return -x;";
    case Fn::abs: return "return fabsf(x);";
    case Fn::exp: return "return expf(x);";
    case Fn::log: return "return logf(x);";
    case Fn::sqrt: return "return sqrtf(x);";
    case Fn::rsqrt: return "return rsqrtf(x);";
    case Fn::relu: return "return x > 0.f ? x : 0.f;";
    case Fn::leaky_relu: return "return x >= 0.f ? x : p0 * x;";
    case Fn::gelu: return "return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));";
    case Fn::gelu_tanh:
      return "return 0.5f * x * (1.f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));";
    case Fn::silu: return "return x / (1.f + expf(-x));";
    case Fn::sigmoid: return "return 1.f / (1.f + expf(-x));";
    case Fn::tanh: return "return tanhf(x);";
    case Fn::hardtanh: return "return fminf(fmaxf(x, p0), p1);";
    case Fn::clamp: return "return fminf(fmaxf(x, p0), p1);";
    case Fn::hardswish: return "return x * fminf(fmaxf(x + 3.f, 0.f), 6.f) * (1.f / 6.f);";
    case Fn::hardsigmoid: return "return fminf(fmaxf(x + 3.f, 0.f), 6.f) * (1.f / 6.f);";
    case Fn::mish:
      return "float sp = x > 20.f ? x : log1pf(expf(x)); return x * tanhf(sp);";
    case Fn::softplus:
      return "return p0 * x > p1 ? x : log1pf(expf(p0 * x)) / p0;";
    case Fn::elu: return "return x > 0.f ? x : p0 * expm1f(x);";
    case Fn::selu:
      return "return 1.0507009873554805f * (x > 0.f ? x : 1.6732632423543772f * expm1f(x));";
    case Fn::softsign: return "return x / (1.f + fabsf(x));";
    case Fn::tf32:
      return "unsigned r; asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x)); return __uint_as_float(r);";
    case Fn::tf32_trunc:
      return "return isfinite(x) ? __uint_as_float(__float_as_uint(x) & 0xffffe000u) : x;";
    case Fn::round_bf16:
      return "unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x)); "
             "return __uint_as_float(static_cast<unsigned>(h) << 16);";
    case Fn::round_f16:
      return "unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x)); float r; "
             "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(r) : \"h\"(h)); return r;";
    case Fn::min: return "return fminf(x, y);";
    case Fn::max: return "return fmaxf(x, y);";
    case Fn::lt: return "return x < y ? 1.f : 0.f;";
    case Fn::le: return "return x <= y ? 1.f : 0.f;";
    case Fn::gt: return "return x > y ? 1.f : 0.f;";
    case Fn::ge: return "return x >= y ? 1.f : 0.f;";
    case Fn::eq: return "return x == y ? 1.f : 0.f;";
    case Fn::ne: return "return x != y ? 1.f : 0.f;";
    case Fn::where: return "return x != 0.f ? y : z;";
  }
  return "";
}

// The `math fast` bodies: the same formulas through the SFU approximations. Error bounds (CUDA
// Programming Guide, intrinsic functions; PTX ISA): __expf 2 + 1.2|x| ulp, __logf 2^-21.4
// absolute on [0.5, 2] else 3 ulp, tanh.approx 2^-11 relative, sqrt.approx ~1 ulp,
// __fdividef 2 ulp (0 for a divisor above 2^126). Empty: no distinct fast form.
std::string fn_fast_body(dsl::Fn fn) {
  using dsl::Fn;
  switch (fn) {
    case Fn::exp: return "return __expf(x);";
    case Fn::log: return "return __logf(x);";
    case Fn::sqrt: return "return ucut_sqrt_approx(x);";
    case Fn::gelu_tanh:
      return "return 0.5f * x * (1.f + ucut_tanh_approx(0.79788456080286536f * (x + 0.044715f * x * x * x)));";
    case Fn::silu: return "return __fdividef(x, 1.f + __expf(-x));";
    case Fn::sigmoid: return "return __fdividef(1.f, 1.f + __expf(-x));";
    case Fn::tanh: return "return ucut_tanh_approx(x);";
    case Fn::mish:
      return "float sp = x > 20.f ? x : __logf(1.f + __expf(x)); return x * ucut_tanh_approx(sp);";
    case Fn::softplus:
      return "return p0 * x > p1 ? x : __logf(1.f + __expf(p0 * x)) / p0;";
    case Fn::elu: return "return x > 0.f ? x : p0 * (__expf(x) - 1.f);";
    case Fn::selu:
      return "return 1.0507009873554805f * (x > 0.f ? x : 1.6732632423543772f * (__expf(x) - 1.f));";
    case Fn::softsign: return "return __fdividef(x, 1.f + fabsf(x));";
    default: return "";
  }
}

// The roundings to a 16-bit type are emitted only into code that calls them (rounding_source):
// the block every unit holds stays the same, and so do the stored units' keys.
bool is_rounding(dsl::Fn fn) { return fn == dsl::Fn::round_bf16 || fn == dsl::Fn::round_f16; }

std::string build_rounding_source() {
  std::string s = "#ifndef UCUT_ROUNDING_DEFINED\n#define UCUT_ROUNDING_DEFINED\n"
                  "// roundings to a 16-bit type, as PyTorch rounds an f16/bf16 result (generated by ucutlass)\n";
  for (dsl::Fn fn : {dsl::Fn::round_bf16, dsl::Fn::round_f16})
    s += std::string("static __device__ __forceinline__ float ucut_fn_") + fn_info(fn).name + "(float x) { " +
         fn_body(fn) + " }\n";
  return s + "#endif  // UCUT_ROUNDING_DEFINED\n";
}

std::string build_source() {
  std::string s =
      "#ifndef UCUT_FUNCTORS_DEFINED\n#define UCUT_FUNCTORS_DEFINED\n"
      "// epilogue functions of dsl/functions.def (generated by ucutlass; do not edit)\n";
  auto emit = [&](dsl::Fn fn, const char* prefix, const std::string& body) {
    FnInfo info = fn_info(fn);
    std::string sig = "static __device__ __forceinline__ float " + std::string(prefix) +
                      info.name + "(float x";
    if (info.arity >= 2) sig += ", float y";
    if (info.arity >= 3) sig += ", float z";
    for (int i = 0; i < info.nparams; ++i) sig += ", float p" + std::to_string(i);
    sig += ")";
    s += sig + " { " + body + " }\n";
  };
#define UCUT_FN(id, name, arity, nparams, defaults, formula) \
  if (!is_rounding(dsl::Fn::id)) emit(dsl::Fn::id, "ucut_fn_", fn_body(dsl::Fn::id));
#include "dsl/functions.def"
#undef UCUT_FN
  s += "// `math fast` forms: the same formulas through hardware approximations\n"
       "static __device__ __forceinline__ float ucut_tanh_approx(float x) {\n"
       "  float y; asm(\"tanh.approx.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; }\n"
       "static __device__ __forceinline__ float ucut_sqrt_approx(float x) {\n"
       "  float y; asm(\"sqrt.approx.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; }\n";
#define UCUT_FN(id, name, arity, nparams, defaults, formula) \
  if (!fn_fast_body(dsl::Fn::id).empty()) emit(dsl::Fn::id, "ucut_fast_", fn_fast_body(dsl::Fn::id));
#include "dsl/functions.def"
#undef UCUT_FN
  s += "#endif  // UCUT_FUNCTORS_DEFINED\n";
  return s;
}

}  // namespace

const std::string& codegen_functors_source() {
  static const std::string source = build_source();
  return source;
}

const std::string& codegen_rounding_source() {
  static const std::string source = build_rounding_source();
  return source;
}

std::string codegen_float_literal(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  s += "f";
  if (v < 0) s = "(" + s + ")";
  return s;
}

bool codegen_fn_has_fast(dsl::Fn fn) { return !fn_fast_body(fn).empty(); }

std::string codegen_fn_call(dsl::Fn fn, const std::vector<std::string>& args,
                            const std::vector<double>& params, bool fast) {
  FnInfo info = fn_info(fn);
  UCUT_CHECK(static_cast<int>(args.size()) == info.arity, "operand count of a function call");
  std::string s = std::string(fast && codegen_fn_has_fast(fn) ? "ucut_fast_" : "ucut_fn_") + info.name + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  for (int i = 0; i < info.nparams; ++i)
    s += ", " + codegen_float_literal(i < static_cast<int>(params.size()) ? params[i] : 0.0);
  return s + ")";
}

}  // namespace ucut::codegen
