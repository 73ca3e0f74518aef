// conv stages' rules and resolver (see conv_rules.h).
#include "dsl/conv_rules.h"

#include <algorithm>

#include "dsl/names.h"

namespace ucut::dsl {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

const char* axis_name(int rank, size_t i) {
  static const char* const names[3][3] = {{"W", "", ""}, {"H", "W", ""}, {"D", "H", "W"}};
  return names[rank - 1][i];
}

}  // namespace

int conv_pad_limit(int rank) { return rank == 1 ? 65536 : rank == 2 ? 256 : 16; }
int conv_reach_limit(int rank) { return (1 << (16 / rank)) - 1; }
int conv_corner_limit(int rank) { return 1 << (16 / rank - 1); }

DType conv_operand_dtype(Precision p, DType data) {
  switch (p) {
    case Precision::f16: return DType::f16;
    case Precision::bf16: return DType::bf16;
    case Precision::tf32: return DType::f32;
    default: return data;
  }
}

std::vector<int> conv_tile_k_choices(DType operand) {
  const int b = dtype_bytes(operand);
  return {32 / b, 64 / b, 128 / b};
}

GemmKnobs conv_resolve_auto(const Program& p, const ConvStage& s, const Tensor& out) {
  GemmKnobs k = s.knobs;
  const Tensor* x = p.find_tensor(s.x);
  const DType data = x ? x->dtype : DType::f32;
  if (k.precision == Precision::auto_)
    k.precision = data == DType::bf16 ? Precision::bf16 : data == DType::f16 ? Precision::f16 : Precision::tf32;
  const DType op = conv_operand_dtype(k.precision, data);
  if (!k.tile) {
    // tile K: the channels of one filter tap that one k-block loads; a small C wastes the rest
    // of a 128-byte row on zeros, so it takes the smallest row that holds C.
    int tk = 128 / dtype_bytes(op);
    for (int c : conv_tile_k_choices(op))
      if (c >= s.channels) {
        tk = c;
        break;
      }
    k.tile = TileShape{128, s.out_channels <= 64 ? 64 : 128, tk};
  }
  if (!k.cluster) k.cluster = ClusterShape{1, 1};
  if (k.math == MathMode::auto_)
    k.math = (out.dtype == DType::f16 || out.dtype == DType::bf16) ? MathMode::fast : MathMode::precise;
  return k;
}

std::vector<RuleViolation> conv_rules_check(const Program& p, const ConvStage& s, const Tensor& out) {
  std::vector<RuleViolation> v;
  const Tensor* x = p.find_tensor(s.x);
  if (!x) return v;
  const GemmKnobs k = conv_resolve_auto(p, s, out);
  if (k.precision != Precision::tf32 && k.precision != Precision::bf16 && k.precision != Precision::f16) {
    v.push_back({"conv_precision", "precision",
                 std::string("the sm90 conv kernel runs tf32, bf16 or f16, not ") + dsl_precision_str(k.precision) +
                     " (CUTLASS 4.2 has no 3xTF32 or FP32 SIMT convolution for sm90)",
                 "use precision tf32 on f32 data, or convert x and w to bf16 in the layout stage"});
    return v;
  }
  const DType op = conv_operand_dtype(k.precision, x->dtype);
  const int a_in = conv_align(op), a_out = conv_align(out.dtype);
  if (s.channels % a_in != 0)
    v.push_back({"conv_align_c", "x",
                 "C = " + str(s.channels) + " input channels is not a multiple of " + str(a_in) +
                     " (TMA im2col moves 16-byte channel rows of " + dsl_dtype_str(op) + ")",
                 "zero-pad the channels of x and w to " + str((s.channels + a_in - 1) / a_in * a_in) +
                     " in the layout stage (the padded taps add zeros)"});
  if (s.out_channels % a_in != 0)
    v.push_back({"conv_align_k", "w",
                 "K = " + str(s.out_channels) + " output channels is not a multiple of " + str(a_in) +
                     " (the filter's rows are 16-byte TMA rows)",
                 "zero-pad the filter to " + str((s.out_channels + a_in - 1) / a_in * a_in) +
                     " output channels and drop the extra ones after the conv"});
  else if (s.out_channels % a_out != 0)
    v.push_back({"conv_align_out", "out",
                 "K = " + str(s.out_channels) + " output channels is not a multiple of " + str(a_out) +
                     " (16-byte rows of the " + dsl_dtype_str(out.dtype) + " output)",
                 "write an f32 output, or pad the output channels"});
  const int pad_limit = conv_pad_limit(s.rank), reach_limit = conv_reach_limit(s.rank),
            corner = conv_corner_limit(s.rank);
  for (size_t i = 0; i < static_cast<size_t>(s.rank); ++i) {
    const std::string ax = axis_name(s.rank, i);
    if (s.pad_lo[i] > pad_limit || s.pad_hi[i] > pad_limit) {
      v.push_back({"conv_im2col_padding", "padding",
                   "padding (" + str(s.pad_lo[i]) + ", " + str(s.pad_hi[i]) + ") along " + ax + " exceeds " +
                       str(pad_limit) + ", the TMA im2col limit of a " + str(s.rank) + "-D conv",
                   "pad x explicitly in the layout stage and give the conv less padding"});
      continue;
    }
    const int64_t reach = (s.filter[i] - 1) * s.dilation[i];
    if (reach >= reach_limit) {
      v.push_back({"conv_im2col_reach", "dilation",
                   "the filter reaches (k - 1) * dilation = " + str(reach) + " along " + ax +
                       ", not below " + str(reach_limit) + " (TMA im2col offsets of a " + str(s.rank) + "-D conv)",
                   "run this conv in a torch stage, or split the filter into taps of smaller reach"});
      continue;
    }
    const int64_t lower = -s.pad_lo[i], upper = s.pad_hi[i] - reach;
    if (lower < -corner || lower > corner - 1 || upper < -corner || upper > corner - 1)
      v.push_back({"conv_im2col_corners", "padding",
                   "the im2col box corners (" + str(lower) + ", " + str(upper) + ") along " + ax + " are outside [" +
                       str(-corner) + ", " + str(corner - 1) + "]",
                   "pad x explicitly in the layout stage and give the conv less padding"});
  }
  if (s.m > (int64_t(1) << 31) - 1)
    v.push_back({"conv_pixels", "out",
                 "N * P * Q = " + str(s.m) + " output pixels exceeds 2^31 - 1, what CUTLASS's conv indexes",
                 "split the batch over several conv stages"});
  const TileShape t = *k.tile;
  if (t.m != 64 && t.m != 128)
    v.push_back({"conv_tile_m", "tile", "tile M = " + str(t.m) + ": the sm90 conv kernel has one MMA warpgroup, so tile M is 64 or 128",
                 "write tile 128x" + str(t.n) + "x" + str(t.k)});
  if (t.n < 8 || t.n > 256 || t.n % 8 != 0)
    v.push_back({"conv_tile_n", "tile", "tile N = " + str(t.n) + " is not a multiple of 8 from 8 to 256",
                 "use 64 or 128"});
  const auto ks = conv_tile_k_choices(op);
  if (std::find(ks.begin(), ks.end(), t.k) == ks.end())
    v.push_back({"conv_tile_k", "tile",
                 "tile K = " + str(t.k) + " is not " + str(ks[0]) + ", " + str(ks[1]) + " or " + str(ks[2]) +
                     " (32, 64 or 128 bytes of " + dsl_dtype_str(op) + " channels per filter tap)",
                 "use " + str(ks[2]) + ", or " + str(ks[0]) + " when C is small"});
  const ClusterShape c = *k.cluster;
  if (c.n != 1 || (c.m != 1 && c.m != 2))
    v.push_back({"conv_cluster", "cluster", "cluster " + str(c.m) + "x" + str(c.n) + " is not 1x1 or 2x1 (the conv multicasts the filter along M only)",
                 "use cluster 1x1 or 2x1"});
  if (!v.empty()) return v;
  bool has_source = false;
  DType source = out.dtype;
  int col_vectors = 0;
  for (const auto& st : s.epilogue.stmts) {
    std::vector<const Expr*> todo{st.value.get()};
    while (!todo.empty()) {
      const Expr* e = todo.back();
      todo.pop_back();
      if (e->kind == Expr::Kind::load && e->mode == LoadMode::full) {
        has_source = true;
        if (const Tensor* r = p.find_tensor(e->name)) source = r->dtype;
      }
      if (e->kind == Expr::Kind::load && e->mode == LoadMode::col) ++col_vectors;
      for (const auto& a : e->args) todo.push_back(a.get());
    }
  }
  GemmKnobs sk = k;
  sk.precision = op == DType::f32 ? Precision::tf32 : k.precision;
  const int epi = gemm_sm90_epilogue_smem(sk, out.dtype, has_source, source, col_vectors);
  const int stage_bytes = gemm_sm90_stage_bytes(sk);
  const int stages = k.stages.value_or(2);
  if (stages < 2 || stages * stage_bytes + epi > kSm90SmemBytes)
    v.push_back({"conv_fits_smem", k.stages ? "stages" : "tile",
                 str(stages) + " stage(s) of " + str(stage_bytes) + " bytes and the epilogue's " + str(epi) +
                     " do not fit the " + str(kSm90SmemBytes) + " bytes of shared memory" +
                     (stages < 2 ? " (the pipeline needs 2 stages)" : ""),
                 k.stages ? "use fewer stages or a smaller tile, or stages auto" : "use a smaller tile"});
  return v;
}

std::string conv_config_name(const GemmKnobs& k, bool stages_auto, int rank) {
  std::string n = "conv" + str(rank) + "d_" + precision_name(k.precision);
  if (k.tile) n += "_t" + str(k.tile->m) + "x" + str(k.tile->n) + "x" + str(k.tile->k);
  if (k.cluster) n += "_c" + str(k.cluster->m) + "x" + str(k.cluster->n);
  n += stages_auto || !k.stages ? std::string("_sA") : "_s" + str(*k.stages);
  if (k.math == MathMode::fast) n += "_mf";
  return n;
}

}  // namespace ucut::dsl
