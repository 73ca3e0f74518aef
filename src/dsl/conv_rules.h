// The validity rules of conv stages and their `auto` resolver: what makes a conv stage compile
// with codegen/conv_sm90.cpp against CUTLASS 4.2 for sm_90a and run every shape it is checked
// for. The facts are CUTLASS 4.2's sm90 implicit-GEMM fprop (docs/language.md, "Convolution"):
// one kernel schedule (non-persistent, one MMA warpgroup: tile M 64 or 128), TMA im2col for the
// activation (16-byte channel rows; padding and filter reach within the im2col descriptor's
// 16/rank-bit fields), tiled TMA for the filter, the TMA warp-specialized epilogue.
// The checker reports each RuleViolation at the named knob, the code generator resolves `auto`
// with conv_resolve_auto, and the space keeps the configurations with no violation.
#pragma once

#include <string>
#include <vector>

#include "dsl/gemm_rules.h"
#include "dsl/program.h"

namespace ucut::dsl {

// Elements of one 16-byte TMA row: C, K and the output channels are multiples of this.
inline int conv_align(DType t) { return 16 / dtype_bytes(t); }
// The im2col descriptor's limits per spatial rank (1, 2, 3): padding on either side at most
// 65536 / 256 / 16; the filter's reach (k - 1) * dilation below 2^(16/rank) - 1; the box
// corners -pad_lo and pad_hi - reach within [-2^(16/rank-1), 2^(16/rank-1) - 1].
int conv_pad_limit(int rank);
int conv_reach_limit(int rank);
int conv_corner_limit(int rank);

// The operand dtype of a conv at a precision (tf32: f32; bf16; f16); auto: the data's.
DType conv_operand_dtype(Precision p, DType data);

// Checks a conv stage whose output is `out`, `auto` knobs resolved first. Empty: it compiles
// and CUTLASS's can_implement accepts its shape. Knobs named: precision tile cluster stages x w out
// padding dilation.
std::vector<RuleViolation> conv_rules_check(const Program& program, const ConvStage& stage, const Tensor& out);

// Fills every `auto` knob (explicit ones are kept): precision from the data (f32: tf32), tile
// 128 x (64 when K <= 64, else 128) x (one 128-byte row, less when C is small), cluster 1x1, math
// fast iff the output is 16-bit. Stages stay nullopt (StageCountAutoCarveout) unless given.
GemmKnobs conv_resolve_auto(const Program& program, const ConvStage& stage, const Tensor& out);

// The tile K values a conv takes at an operand dtype: 32, 64 and 128 bytes of channels.
std::vector<int> conv_tile_k_choices(DType operand);

// Canonical configuration name of resolved knobs, e.g. "conv2d_tf32_t128x64x32_c1x1_sA".
std::string conv_config_name(const GemmKnobs& resolved, bool stages_auto, int rank);

}  // namespace ucut::dsl
