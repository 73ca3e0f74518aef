// The language's entry for conv stages: a convolution forward pass on channels-last tensors with
// the gemm stage's epilogue (checker: check_conv.cpp; rules: conv_rules.h). The interpreter is the
// reference semantics: a direct loop in double precision over every output element and tap.
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"

namespace ucut::dsl {

namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> k = {"precision", "tile", "cluster", "stages", "math"};
  return k;
}

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void print(std::string& out, const Stage& s) {
  const auto& c = std::get<ConvStage>(s.body);
  std::vector<int64_t> pad = c.pad_lo;
  if (c.pad_hi != c.pad_lo) pad.insert(pad.end(), c.pad_hi.begin(), c.pad_hi.end());
  out += s.outputs[0] + " = conv(" + c.x + ", " + c.w + ", stride=" + list_str(c.stride) + ", padding=" +
         list_str(pad) + ", dilation=" + list_str(c.dilation) + ") {\n";
  const auto& k = c.knobs;
  out += "  precision " + std::string(dsl_precision_str(k.precision)) + "\n";
  out += "  tile " + (k.tile ? std::to_string(k.tile->m) + "x" + std::to_string(k.tile->n) + "x" + std::to_string(k.tile->k) : "auto") + "\n";
  out += "  cluster " + (k.cluster ? std::to_string(k.cluster->m) + "x" + std::to_string(k.cluster->n) : "auto") + "\n";
  out += "  stages " + (k.stages ? std::to_string(*k.stages) : std::string("auto")) + "\n";
  out += "  math " + std::string(dsl_math_str(k.math)) + "\n";
  dsl_print_block(out, "epilogue", c.epilogue);
}

// y[n, o..., k] = epi(sum over taps f... and channels c of x[n, o*stride + f*dilation - pad_lo, c] * w[k, f..., c]),
// taps outside the input reading zero.
Status interpret(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& scalars) {
  const auto& c = std::get<ConvStage>(st.body);
  auto xi = ts.find(c.x), wi = ts.find(c.w);
  if (xi == ts.end() || wi == ts.end())
    return make_error(ErrorCode::invalid_input, "conv stage '" + st.name + "': its input or filter has no data");
  const std::vector<double>& x = xi->second;
  const std::vector<double>& w = wi->second;
  const size_t r = static_cast<size_t>(c.rank);
  // sizes padded to three spatial dims (leading ones of size 1)
  int64_t in[3] = {1, 1, 1}, f[3] = {1, 1, 1}, o[3] = {1, 1, 1}, sd[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, lo[3] = {0, 0, 0};
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    in[j] = c.in_size[i], f[j] = c.filter[i], o[j] = c.out_size[i];
    sd[j] = c.stride[i], dl[j] = c.dilation[i], lo[j] = c.pad_lo[i];
  }
  const int64_t C = c.channels, K = c.out_channels;
  std::vector<double> y(static_cast<size_t>(c.m * K));
  std::map<std::string, const std::vector<double>*> loads;
  for (const auto& [name, v] : ts) loads[name] = &v;
  int64_t row = 0;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o0 = 0; o0 < o[0]; ++o0)
      for (int64_t o1 = 0; o1 < o[1]; ++o1)
        for (int64_t o2 = 0; o2 < o[2]; ++o2, ++row)
          for (int64_t k = 0; k < K; ++k) {
            double acc = 0;
            for (int64_t f0 = 0; f0 < f[0]; ++f0) {
              const int64_t i0 = o0 * sd[0] + f0 * dl[0] - lo[0];
              if (i0 < 0 || i0 >= in[0]) continue;
              for (int64_t f1 = 0; f1 < f[1]; ++f1) {
                const int64_t i1 = o1 * sd[1] + f1 * dl[1] - lo[1];
                if (i1 < 0 || i1 >= in[1]) continue;
                for (int64_t f2 = 0; f2 < f[2]; ++f2) {
                  const int64_t i2 = o2 * sd[2] + f2 * dl[2] - lo[2];
                  if (i2 < 0 || i2 >= in[2]) continue;
                  const size_t xo = static_cast<size_t>((((n * in[0] + i0) * in[1] + i1) * in[2] + i2) * C);
                  const size_t wo = static_cast<size_t>((((k * f[0] + f0) * f[1] + f1) * f[2] + f2) * C);
                  for (int64_t ch = 0; ch < C; ++ch) acc += x[xo + static_cast<size_t>(ch)] * w[wo + static_cast<size_t>(ch)];
                }
              }
            }
            const size_t at = static_cast<size_t>(row * K + k);
            InterpLoad load = [&](const Expr& e) -> Result<double> {
              auto it = loads.find(e.name);
              if (e.kind != Expr::Kind::load || it == loads.end())
                return make_error(ErrorCode::invalid_input, "conv epilogue: '" + e.name + "' has no data");
              const size_t idx = e.mode == LoadMode::col ? static_cast<size_t>(k) : at;
              if (idx >= it->second->size()) return make_error(ErrorCode::invalid_input, "conv epilogue: '" + e.name + "' is too short");
              return (*it->second)[idx];
            };
            auto v = interp_epilogue(p, c.epilogue, acc, load, scalars);
            if (!v) return v.error();
            y[at] = *v;
          }
  ts[st.outputs[0]] = std::move(y);
  return ok_status();
}

}  // namespace

extern const DslStageKind dsl_kind_conv = {
    StageKind::conv, knobs, true,
    &detail::Checker::check_conv, print, interpret, dsl_no_plan,
};

}  // namespace ucut::dsl
