// The space's entry for conv stages: the data's precision (f32: tf32, the only sm90 conv on f32
// data) times tile M {64, 128} x tile N {64, 128, 256 when K > 128} x tile K (32, 64, 128 bytes
// of channels) x cluster {1x1, 2x1}, stages auto; the conv rules (dsl/conv_rules.h) validate; the
// ranking is the implicit GEMM's roofline with its padding: t = max(2 M N_pad K_eff / (rate
// wave_eff mainloop_eff), bytes / bandwidth), N_pad = ceil(K / tn) tn, K_eff = taps ceil(C / tk)
// tk (each im2col box covers the channels of one filter tap, so a small C pads every tap), the
// non-persistent tiles ceil(M / tm) ceil(N / tn) over the SMs in waves.
#include <algorithm>
#include <cmath>

#include "dsl/conv_rules.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

const dsl::ConvStage& conv_of(const dsl::Program& p, int si) {
  return std::get<dsl::ConvStage>(p.stages.at(static_cast<size_t>(si)).body);
}

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& s = conv_of(p, si);
  const dsl::Tensor* x = p.find_tensor(s.x);
  if (!x) return make_error(ErrorCode::internal, "conv stage without its input");
  const dsl::Precision prec = x->dtype == dsl::DType::bf16 ? dsl::Precision::bf16
                              : x->dtype == dsl::DType::f16 ? dsl::Precision::f16 : dsl::Precision::tf32;
  const auto& fx = s.knobs;
  std::vector<int> ns = {64, 128};
  if (s.out_channels > 128) ns.push_back(256);
  std::vector<dsl::TileShape> tiles;
  for (int m : {128, 64})
    for (int n : ns)
      for (int k : dsl::conv_tile_k_choices(dsl::conv_operand_dtype(prec, x->dtype))) tiles.push_back({m, n, k});
  std::vector<StageConfig> out;
  for (const auto& t : space_or_fixed<dsl::TileShape>(o.keep_explicit, fx.tile, tiles))
    for (const auto& cl : space_or_fixed<dsl::ClusterShape>(o.keep_explicit, fx.cluster, {{1, 1}, {2, 1}})) {
      StageConfig c;
      c.stage = si;
      c.is_gemm = true;
      c.gemm = fx;
      c.gemm.precision = o.keep_precision && fx.precision != dsl::Precision::auto_ ? fx.precision : prec;
      c.gemm.tile = t;
      c.gemm.cluster = cl;
      if (!o.keep_explicit) c.gemm.stages.reset();
      out.push_back(std::move(c));
    }
  return out;
}

void io(const dsl::Program&, const dsl::Stage&, std::string&, std::vector<std::string>&) {}

std::vector<Violation> validate(const dsl::Program& p, const StageConfig& c, const SpaceOptions&) {
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(c.stage));
  dsl::ConvStage s = std::get<dsl::ConvStage>(st.body);
  s.knobs = c.gemm;
  std::vector<Violation> v;
  const dsl::Tensor* out = p.find_tensor(st.outputs.at(0));
  if (!out) return {{"conv_output", "the conv's output is not declared"}};
  for (const auto& r : dsl::conv_rules_check(p, s, *out)) v.push_back({r.rule, r.message});
  return v;
}

RankedConfig rank(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c, const sol::HwSpec& hw) {
  const auto& s = std::get<dsl::ConvStage>(st.body);
  RankedConfig r;
  r.config = c;
  const dsl::Tensor* x = p.find_tensor(s.x);
  const dsl::Tensor* w = p.find_tensor(s.w);
  const dsl::Tensor* y = p.find_tensor(st.outputs.at(0));
  dsl::ConvStage rs = s;
  rs.knobs = c.gemm;
  const dsl::GemmKnobs k = dsl::conv_resolve_auto(p, rs, *y);
  const double rate = k.precision == dsl::Precision::tf32 ? hw.tf32 : hw.bf16;
  const int tm = k.tile->m, tn = k.tile->n, tk = k.tile->k;
  const double taps = static_cast<double>(s.k / std::max<int64_t>(s.channels, 1));
  const double k_eff = taps * std::ceil(double(s.channels) / tk) * tk;
  const double n_pad = std::ceil(double(s.n) / tn) * tn;
  const double m_pad = std::ceil(double(s.m) / tm) * tm;
  const double tiles = std::ceil(double(s.m) / tm) * std::ceil(double(s.n) / tn);
  const double sms = hw.sms > 0 ? hw.sms : 132;
  const double waves = std::ceil(tiles / sms);
  r.wave_eff = tiles / (waves * sms);
  r.tile_eff = (double(s.m) * double(s.n) * double(s.k)) / (m_pad * n_pad * k_eff);
  // one MMA warpgroup: a 64-row tile runs at most half its SM's tensor rate; a short K-block
  // (32 or 64 bytes) adds a pipeline step per MMA; a 2x1 cluster multicasts the filter
  r.mainloop_eff = (tm == 128 ? 0.8 : 0.5) * (tk * dsl::dtype_bytes(x->dtype == dsl::DType::f32 ? dsl::DType::f32 : x->dtype) >= 128 ? 1.0 : 0.85) *
                   (k.cluster->m == 2 ? 1.03 : 1.0);
  const double flops = 2.0 * m_pad * n_pad * k_eff;
  const double t_mma = flops / (rate * r.wave_eff * r.mainloop_eff);
  double bytes = double(x->numel()) * dsl::dtype_bytes(x->dtype) + double(w->numel()) * dsl::dtype_bytes(w->dtype) +
                 double(y->numel()) * dsl::dtype_bytes(y->dtype);
  std::vector<std::string> loads;
  space_block_loads(s.epilogue, loads);
  for (const auto& n : loads)
    if (const dsl::Tensor* t = p.find_tensor(n)) bytes += double(t->numel()) * dsl::dtype_bytes(t->dtype);
  const double t_mem = bytes / hw.mem_bw;
  r.t_sol = std::max(2.0 * double(s.m) * double(s.n) * double(s.k) / rate, t_mem);
  // the non-persistent kernel does not overlap a tile's epilogue with the next tile's mainloop
  r.epilogue_s = double(y->numel()) * dsl::dtype_bytes(y->dtype) / hw.mem_bw / std::max(waves, 1.0) * 0.25;
  r.t_est = std::max(t_mma, t_mem) + r.epilogue_s;
  return r;
}

std::string name(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c) {
  dsl::ConvStage s = std::get<dsl::ConvStage>(st.body);
  s.knobs = c.gemm;
  const dsl::Tensor* out = p.find_tensor(st.outputs.at(0));
  return dsl::conv_config_name(dsl::conv_resolve_auto(p, s, *out), !c.gemm.stages.has_value(), s.rank);
}

}  // namespace

extern const SpaceStageKind space_kind_conv = {
    dsl::StageKind::conv, false, enumerate, io, validate, rank, space_apply_knobs<dsl::ConvStage>, name,
    space_no_reduction_reads,
};

}  // namespace ucut::space
