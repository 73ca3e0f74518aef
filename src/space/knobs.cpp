#include "space/knobs.h"

#include "support/diagnostics.h"

namespace ucut::space {

const std::vector<KnobInfo>& space_knobs() {
  static const std::vector<KnobInfo> table = {
      {Knob::precision, "p", "precision", KnobFamily::gemm, "GEMM math: f16, bf16, tf32, f32x3 (3xTF32), f32 (SIMT)"},
      {Knob::tile, "t", "tile", KnobFamily::gemm, "threadblock tile M x N x K"},
      {Knob::cluster, "c", "cluster", KnobFamily::gemm, "thread block cluster M x N (TMA multicast)"},
      {Knob::stages, "s", "stages", KnobFamily::gemm, "mainloop pipeline stages (auto: as many as fit)"},
      {Knob::schedule, "sch", "schedule", KnobFamily::gemm,
       "kernel: cooperative or pingpong (CUTLASS), gemv16 or gemv32 (a one-column fp32 GEMM)"},
      {Knob::scheduler, "ts", "scheduler", KnobFamily::gemm, "tile scheduler: persistent or stream_k"},
      {Knob::split_k, "k", "split_k", KnobFamily::gemm, "K splits (stream-K scheduler's split-K mode; gemv: K chunks)"},
      {Knob::raster, "r", "raster", KnobFamily::gemm, "order tiles are visited: along_m or along_n"},
      {Knob::swizzle, "w", "swizzle", KnobFamily::gemm, "tile swizzle width for L2 locality: 1, 2, 4, 8"},
      {Knob::threads, "th", "threads", KnobFamily::simt, "threads per block"},
      {Knob::rows_per_block, "rpb", "rows_per_block", KnobFamily::simt, "rows one block handles"},
      {Knob::vector_width, "v", "vector_width", KnobFamily::simt, "elements per vector access"},
  };
  return table;
}

const KnobInfo& space_knob(Knob k) {
  for (const auto& i : space_knobs())
    if (i.id == k) return i;
  UCUT_CHECK(false, "knob missing from the table");
  return space_knobs().front();
}

std::optional<Knob> space_knob_parse(const std::string& dsl_name) {
  for (const auto& i : space_knobs())
    if (dsl_name == i.dsl) return i.id;
  return std::nullopt;
}

}  // namespace ucut::space
