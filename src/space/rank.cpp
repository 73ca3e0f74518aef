// space_rank: an analytic time per candidate, so the search compiles the likely winners first.
// GEMM:  t = max(t_main, t_mem) + t_epilogue_exposed + t_fixup, with
//   t_main = (useful FLOPs / tile_eff) / (peak(precision) * mainloop_eff * wave_eff)
//   tile_eff     = useful / padded MACs (irregular M, N, K waste part of the edge tiles; on SM90
//                  the scheduler's grid pads to whole clusters and swizzle groups, sm90_grid)
//   wave_eff     = work units / (waves * SMs usable with this cluster size); stream-K balances
//                  K iterations instead of tiles
//   mainloop_eff = tile-shape reuse factor * pipeline-depth factor * multicast factor
//   t_mem        = the stage's minimum DRAM bytes / bandwidth (its roofline's memory side)
// SIMT: t = bytes / (bandwidth * access_eff * occupancy) + one launch.
// Each kind's entry (space/kinds/) names its model; space_rank looks the stage's kind up.
// The constants below are modelling choices, each explained; they order candidates, they do not
// predict microseconds, and no test asserts on their absolute values.
#include <algorithm>
#include <cmath>
#include <variant>

#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"
#include "space/space.h"
#include "space/stage_facts.h"

namespace ucut::space {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Operand reuse of a tm x tn tile: it loads (tm + tn) * tk operand elements per tm * tn * tk MACs,
// so its intensity is tm*tn/(tm+tn). The efficiency i/(i + kReuseHalf), normalized to the
// 128x256 tile (the fastest measured bf16 tile, cutlass-build.md: 683 TFLOP/s at 4096^3), gives
// 128x128 ~0.92 and 64x64 ~0.69, the order the CUTLASS profiler reports on H100.
constexpr double kReuseHalf = 32.0;
double tile_shape_factor(int tm, int tn) {
  auto f = [](double i) { return i / (i + kReuseHalf); };
  double ref = f(128.0 * 256.0 / (128.0 + 256.0));
  return std::min(1.0, f(static_cast<double>(tm) * tn / (tm + tn)) / ref);
}

// Pipeline depth: 4+ stages hide TMA/cp.async latency fully; 3 mostly; 2 leaves bubbles.
double pipeline_factor(int stages) {
  if (stages >= 4) return 1.0;
  if (stages == 3) return 0.95;
  return 0.85;
}

// TMA multicast: each doubling of the cluster halves one operand's L2->SM traffic; worth a few
// percent of mainloop throughput once L2 bandwidth, not math, is the limiter.
constexpr double kMulticastGainPerDoubling = 0.02;

// Share of the epilogue (output store, source and vector loads, arithmetic) that overlaps the
// next tile's mainloop: the persistent cooperative kernel overlaps the TMA store only; pingpong
// runs one warpgroup's epilogue under the other's mainloop; the sm80 fp32-faithful kernels apply
// the epilogue in a separate SIMT kernel after the GEMM (none hidden, and the output is re-read).
constexpr double kCoopEpilogueHidden = 0.5;
constexpr double kPingpongEpilogueHidden = 0.8;

// Stream-K's fix-up of partial tiles costs a little on every SM it splits work for.
constexpr double kStreamKEfficiency = 0.97;

}  // namespace

// The SM90 tile schedulers' grid (CUTLASS 4.2, tile_scheduler_params.h): the tile counts are
// rounded up to whole clusters, the swizzle is cut to what the smaller dimension allows (8 from 6
// clusters' tiles, 4 from 3, 2 from 2, else 1), and both counts are rounded up again to swizzle x
// cluster. The padded tiles are not skipped: each runs the mainloop on operands TMA fills with
// zeros. Run DE's kb1_matmul_3d_tensor (16384 x 768, 3 tiles of 256 along N in a 1x2 cluster):
// swizzle 4 and 8 pad 3 to 8 and took 1.78 ms, swizzle 1 pads it to 4 and took 0.98 ms; a 128x128
// tile (6 along N) took 1.98 ms at swizzle 8 (16) against 0.76 ms at 1 (6): the ratios of the
// padded grids.
Sm90Grid sm90_grid(int64_t tiles_m, int64_t tiles_n, int cluster_m, int cluster_n, int swizzle) {
  auto round_up = [](int64_t a, int64_t b) { return ceil_div(a, b) * b; };
  const int64_t bm = round_up(tiles_m, cluster_m), bn = round_up(tiles_n, cluster_n);
  const int64_t least = std::min(bm, bn);
  const int w = swizzle >= 8 && least >= 6 ? 8 : swizzle >= 4 && least >= 3 ? 4 : swizzle >= 2 && least >= 2 ? 2 : 1;
  return {round_up(bm, static_cast<int64_t>(w) * cluster_m), round_up(bn, static_cast<int64_t>(w) * cluster_n), w};
}

namespace {

// Swizzle and raster only change L2 hit rates: tie-breakers of a fraction of a percent.
constexpr double kSwizzleGain = 0.005;

// One more kernel launch in the library's stream (SIMT stages, split-K reduction).
constexpr double kLaunchSeconds = 2e-6;
// TF32 through mma.sync (the SM80 kernel) on Hopper: the warp-level MMA issues at about half
// wgmma's rate (an estimate until measured; docs/benchmarks.md).
constexpr double kMmaSyncTf32Fraction = 0.5;
// One operation of a torch stage: the library's call back into Python, the operation's dispatch
// and its kernel launch (an estimate; the host's measurement is what counts).
constexpr double kTorchOpSeconds = 30e-6;

// 3xTF32 on wgmma (split operands, three TF32 GEMMs: codegen/split_gemm.cpp) measured 1.24x its
// estimate (median over 32 problems' best f32x3s kernels in runs DE-DH, H100: 1.10-1.48, 2.18 on
// a chain of 17 small Linears) where mma.sync's one-kernel 3xTF32 measured 1.04x (13 problems):
// its passes run slower than bandwidth over bytes says. Without the correction the two rungs'
// estimates sat within the opening's margin on batched GEMMs where f32x3 ran 1.45x faster
// (kb1_bmm 3.8 against 5.6 ms, kb1_einsum_4d 6.6 against 9.6 ms, kb1_sdpa 17.2 against 24.9 ms).
constexpr double kSplitGemmCalibration = 1.2;
// f32x3w splits each k-tile in shared memory between the TMA load and the wgmmas (two barriers of
// the consumer warpgroups a k-tile, 32 KB of small parts written per 128 x 128 x 32 tile beside
// the wgmmas' own reads) and drains its wgmmas every kF32x3wPromoteKTiles tiles to promote the
// big sum: it ran at 60% of a third of TF32's peak, 1.34-1.36x the SM80 3xTF32 kernel on the H100
// (run DW: 4096^3 at 98.5 TFLOP/s against 73.1, 128 x 32768 x 32768 at 99.3 against 73.9; 88.3
// against 71.9 on that Linear's weights). 1.5 put the estimates within 5% of those times. Its
// register-sourced form (A split in registers, only B's small parts written; the library's since
// run DX) ran 4096^3 at 106.0 TFLOP/s and 2048 x 4096 x 8192 at 106.9 (A K-major; 104.2 and 104.8
// with A M-major): 1.4.
constexpr double kInKernelSplitCalibration = 1.4;
// Where B is [K, N] beside a transposed A the split also transposes B's tiles (scalar shared-memory
// writes of its big and small parts): run DX ran it at 33.7-34.5 TFLOP/s, a third of the K-major
// form's. (B [K, N] beside a K-major A is the transposed product, A M-major: the 1.4 above.)
constexpr double kTransposingInKernelSplitCalibration = 4.3;
// A split stage of f32x3s/f32x3k whose operand is not K-major transposes it through shared memory
// (elementwise_permute, 32 x 32 tiles): run DV's per-stage profile of kb1_sdpa timed V's split
// (a [1024, 512, 1024] fp32 operand, 2.1 GB read, its three parts 6.4 GB written) at 6.73 ms on the
// H100, 38% of the memory bandwidth, where the K-major split of the other operand ran at it.
constexpr double kTransposingSplitEfficiency = 0.4;

// The split stages of an f32x3s/f32x3k/bf16x3 GEMM: each operand read once (4 bytes an element) and
// its parts written (`written` bytes an element: 8 for f32x3s's two, 12 for f32x3k's three, 6 for
// bf16x3's three bf16 ones), at the
// memory bandwidth where the operand is K-major and at kTransposingSplitEfficiency of it where not.
double split_stage_seconds(const dsl::Program& p, const dsl::GemmStage& g, const sol::HwSpec& hw, int written) {
  auto one = [&](const dsl::Operand& o, bool k_major) {
    const dsl::Tensor* t = p.find_tensor(o.tensor);
    if (!t) return 0.0;
    const double bytes = static_cast<double>(t->numel()) * (4 + written);
    return bytes / (hw.mem_bw * (k_major ? 1.0 : kTransposingSplitEfficiency));
  };
  return one(g.a, dsl::gemm_a_k_major(g)) + one(g.b, dsl::gemm_b_k_major(g));
}

double precision_peak(const sol::HwSpec& hw, dsl::Precision p) {
  switch (p) {
    case dsl::Precision::f16:
    case dsl::Precision::bf16: return hw.bf16;
    case dsl::Precision::tf32: return hw.tf32;
    case dsl::Precision::tf32m: return hw.tf32 * kMmaSyncTf32Fraction;
    case dsl::Precision::f32x3s:
    case dsl::Precision::f32x3k:
    case dsl::Precision::f32x3w: return hw.tf32 / 3;
    // three bf16 products per product on bf16 wgmma (codegen/split_gemm.cpp)
    case dsl::Precision::bf16x3: return hw.bf16 / 3;
    // three TF32 MMAs per product (docs/eval-contract.md) on mma.sync: the SM80 kernel, at
    // mma.sync's rate (run BN: the estimate at wgmma's rate was 2.0-2.4x under every measurement)
    case dsl::Precision::f32x3: return hw.tf32 * kMmaSyncTf32Fraction / 3.0;
    case dsl::Precision::f32:
    case dsl::Precision::auto_: return hw.fp32_simt;
  }
  return hw.fp32_simt;
}

// The gemv schedules stream A once with scalar streaming loads, 16 or 32 in flight per thread:
// groups of 16 in 32-row blocks moved 8192 x 262144 at 0.91 of the H200's listed memory
// bandwidth (run AY: 1.957 ms, cuBLAS's GEMV 2.083); groups of 32 in 16-row blocks were at
// cuBLAS's speed or faster. Rows x chunks are its blocks, 2048 threads resident per SM; the
// partials of more than one chunk are written and read back by the reduce kernel.
constexpr double kGemvMemEfficiency = 0.9;
constexpr int kGemvThreadsPerSm = 2048;

RankedConfig rank_gemv(const dsl::GemmStage& g, const dsl::GemmKnobs& k, const GemmFacts& f, const StageConfig& c,
                          const sol::HwSpec& hw) {
  RankedConfig r;
  r.config = c;
  const int splits = k.split_k.value_or(1);
  const double useful = 2.0 * f.m * f.k;
  const double out_bytes = static_cast<double>(f.m) * f.out_bytes;
  const double t_mem = (static_cast<double>(f.ab_elems) * 4 + out_bytes + f.epi_read_bytes) / hw.mem_bw;
  r.t_sol = std::max(useful / hw.fp32_simt, t_mem);
  const int rows = dsl::gemm_gemv_rows_per_block(k.schedule);
  const int64_t blocks = ceil_div(g.m, rows) * splits;
  const double resident = static_cast<double>(hw.sms) * kGemvThreadsPerSm / (rows * 16);
  r.wave_eff = std::min(1.0, static_cast<double>(blocks) / resident);
  r.mainloop_eff = kGemvMemEfficiency;
  double t_fix = splits > 1 ? static_cast<double>(splits) * f.m * 4 * 2 / hw.mem_bw + kLaunchSeconds : 0.0;
  if (f.epi_ops > 0) r.epilogue_s = (out_bytes * 2 + f.epi_read_bytes) / hw.mem_bw + kLaunchSeconds;
  r.t_est = std::max(useful / hw.fp32_simt, t_mem / (r.mainloop_eff * r.wave_eff)) + t_fix + r.epilogue_s;
  return r;
}

RankedConfig rank_gemm(const dsl::Program& p, const dsl::Stage& st, const dsl::GemmStage& g0,
                          const StageConfig& c, const sol::HwSpec& hw) {
  RankedConfig r;
  r.config = c;
  dsl::GemmStage g = g0;
  g.knobs = c.gemm;
  const dsl::Tensor* out = p.find_tensor(st.outputs.at(0));
  dsl::GemmKnobs k = dsl::gemm_resolve_auto(p, g, *out);
  GemmFacts f = gemm_facts(p, g);
  f.out_bytes = dsl::dtype_bytes(out->dtype);
  if (dsl::is_gemv(k.schedule)) return rank_gemv(g, k, f, c, hw);
  // the unit's own M and N: f32x3w computes the transposed product where B is [K, N] beside a
  // K-major A (its tiles, cluster and raster are over N, M)
  if (dsl::gemm_unit_transposed(g, k)) std::swap(f.m, f.n);
  int tm = k.tile->m, tn = k.tile->n, tk = k.tile->k;
  int64_t mt = ceil_div(f.m, tm), nt = ceil_div(f.n, tn), kt = ceil_div(f.k, tk);
  double useful = 2.0 * f.m * f.n * f.k * f.batch;
  r.tile_eff = static_cast<double>(f.m) * f.n * f.k / (static_cast<double>(mt * tm) * (nt * tn) * (kt * tk));
  double peak = precision_peak(hw, k.precision);
  int op_bytes = dsl::dtype_bytes(dsl::gemm_operand_dtype(k.precision));
  double out_bytes = static_cast<double>(f.m) * f.n * f.batch * f.out_bytes;
  double min_bytes = static_cast<double>(f.ab_elems) * op_bytes + out_bytes + f.epi_read_bytes;
  double t_mem = min_bytes / hw.mem_bw;
  r.t_sol = std::max(useful / peak, t_mem);

  bool sm90 = dsl::gemm_family(k.precision) == dsl::GemmFamily::sm90;
  int cs = sm90 ? k.cluster->m * k.cluster->n : 1;
  int64_t usable = (hw.sms / cs) * cs;
  int64_t tiles = mt * nt * f.batch;
  if (sm90) {  // the scheduler's padded grid: its extra tiles cost as much as real ones
    const Sm90Grid grid = sm90_grid(mt, nt, k.cluster->m, k.cluster->n, k.swizzle.value_or(1));
    r.tile_eff *= static_cast<double>(mt * nt) / static_cast<double>(grid.tiles_m * grid.tiles_n);
    tiles = grid.tiles_m * grid.tiles_n * f.batch;
  }
  int sk = k.split_k.value_or(1);
  double t_fix = 0;
  if (sm90 && k.scheduler == dsl::TileScheduler::stream_k && sk == 1) {
    int64_t iters = tiles * kt;
    r.wave_eff = static_cast<double>(iters) / static_cast<double>(ceil_div(iters, usable) * usable);
    r.wave_eff *= kStreamKEfficiency;
    if (tiles % usable != 0)  // partial tiles: each SM may write and re-read one fp32 partial tile
      t_fix = static_cast<double>(std::min<int64_t>(tiles, usable)) * tm * tn * 4 * 2 / hw.mem_bw;
  } else {
    int64_t units = tiles * sk;
    r.wave_eff = static_cast<double>(units) / static_cast<double>(ceil_div(units, usable) * usable);
    if (sk > 1)  // partial sums: (sk - 1) fp32 copies of the output written and read back
      t_fix = (sk - 1) * static_cast<double>(f.m) * f.n * f.batch * 4 * 2 / hw.mem_bw + kLaunchSeconds;
  }
  double multicast = 1.0 + kMulticastGainPerDoubling * std::log2(static_cast<double>(cs));
  r.mainloop_eff = tile_shape_factor(tm, tn) * pipeline_factor(k.stages.value_or(2)) * multicast;
  double t_main = useful / r.tile_eff / (peak * r.mainloop_eff * r.wave_eff);

  double epi_bytes = out_bytes + static_cast<double>(f.epi_read_bytes);
  double epi_raw = epi_bytes / hw.mem_bw + static_cast<double>(f.epi_ops) * f.m * f.n * f.batch / hw.fp32_simt;
  double hidden = !sm90 ? 0.0 : k.schedule == dsl::Schedule::pingpong ? kPingpongEpilogueHidden : kCoopEpilogueHidden;
  if (!sm90 && f.epi_ops > 0) epi_raw += out_bytes * 2 / hw.mem_bw + kLaunchSeconds;  // separate SIMT pass
  r.epilogue_s = epi_raw * (1.0 - hidden);
  // f32x3s with a residual: the GEMM stores acc + cross products in fp32 and an elementwise kernel
  // reads them back after it (codegen/split_gemm.cpp), hidden behind nothing
  if (k.precision == dsl::Precision::f32x3s && f.full_load)
    r.epilogue_s += static_cast<double>(f.m) * f.n * f.batch * 4 * 2 / hw.mem_bw + kLaunchSeconds;

  double l2 = 1.0;
  // The requested swizzle, as before the padded grid was counted: where CUTLASS cuts it (a grid
  // one or two tiles wide) its L2 tie-break stays, so memory-bound openings measured at 80-85% of
  // their bound (run DE's kb2_linear_swish_scale, kb3_mlp_shallow_wide) keep their tile.
  const int w = k.swizzle.value_or(1);
  if (w > 1) l2 *= tiles > usable ? 1.0 - kSwizzleGain * std::log2(w) : 1.0 + kSwizzleGain * std::log2(w) / 5;
  // Raster along the longer tile dimension keeps the shorter operand's tiles in L2 longer.
  bool along_long = k.raster == dsl::Raster::along_m ? mt >= nt : nt > mt;
  if (!along_long) l2 *= 1.0 + kSwizzleGain / 5;
  double t_body = std::max(t_main, t_mem);
  if (k.precision == dsl::Precision::f32x3s) {
    // The split stages and the three GEMMs (codegen/split_gemm.cpp), each its own kernel: the
    // splits read A and B once and write two TF32 parts of each (4 + 8 bytes per element); every
    // GEMM reads its two parts (4 bytes each) and the three run in turn, each a third of the
    // MMAs, p1 = Ab Bs written, p2 = As Bb + p1 read and written, the last GEMM reading p2 as its
    // source: 16 bytes per output element beyond the output. Where K is short these passes, not
    // the MMAs, are the time (run BN: K = 32 and 64 measured 4.6-5.7x the estimate without them).
    const double mn = static_cast<double>(f.m) * f.n * f.batch;
    const double parts = static_cast<double>(f.ab_elems) * 4;
    const double t_split = split_stage_seconds(p, g, hw, 8) + 2 * kLaunchSeconds;
    const double g1 = (parts + mn * 4) / hw.mem_bw, g2 = (parts + mn * 8) / hw.mem_bw;
    const double g3 = (parts + mn * 4 + out_bytes + static_cast<double>(f.epi_read_bytes)) / hw.mem_bw;
    t_body = t_split + std::max(t_main / 3, g1) + std::max(t_main / 3, g2) + std::max(t_main / 3, g3) +
             2 * kLaunchSeconds;
  }
  if (k.precision == dsl::Precision::f32x3k || k.precision == dsl::Precision::bf16x3) {
    // The split stages (codegen/split_gemm.cpp) read each operand once and write its three parts
    // (4 + 12 bytes per element; bf16x3's parts are bf16: 4 + 6), a transposing one at its measured
    // rate (split_stage_seconds). The GEMM itself reads the parts, three parts an operand element,
    // and writes the output once; bf16x3's at bf16 wgmma's rate (precision_peak).
    const int parts = 3 * dsl::dtype_bytes(dsl::gemm_mma_dtype(k.precision));
    const double t_split = split_stage_seconds(p, g, hw, parts) + 2 * kLaunchSeconds;
    const double t_mem3 = (static_cast<double>(f.ab_elems) * parts + out_bytes + f.epi_read_bytes) / hw.mem_bw;
    t_body = t_split + std::max(t_main, t_mem3);
  }
  // never under the stage's own roofline: the multicast and swizzle gains are orderings, not
  // speed beyond the bound (a 128x256 tile in a cluster of 2 came out 0.5% under it)
  const double calibration = k.precision == dsl::Precision::f32x3s   ? kSplitGemmCalibration
                             : k.precision == dsl::Precision::f32x3w
                                 ? (dsl::gemm_f32x3w_transposes_b(g) ? kTransposingInKernelSplitCalibration
                                                                     : kInKernelSplitCalibration)
                                 : 1.0;
  r.t_est = std::max((t_body + r.epilogue_s + t_fix) * l2 * calibration, r.t_sol);
  return r;
}

// Memory transactions: 16-byte accesses reach full bandwidth; narrower ones issue more
// instructions per byte and fall short (the usual vectorized-copy measurements on H100).
double access_eff(int bytes) {
  if (bytes >= 16) return 1.0;
  if (bytes >= 8) return 0.9;
  if (bytes >= 4) return 0.75;
  return 0.6;
}

// Elementwise streams on the H200 are the exception (docs/benchmarks.md, runs T and U): 1 GiB
// fp32 activations ran 0.508 ms with 8-byte accesses, 0.507-0.518 with 4-byte ones and
// 0.523-0.530 with 16-byte ones.
double elementwise_access_eff(int bytes) {
  if (bytes >= 16) return 0.97;
  if (bytes >= 8) return 1.0;
  if (bytes >= 4) return 0.95;
  return 0.6;
}

// Resident threads per SM on sm_90 (2048): a grid below one full wave leaves SMs idle.
constexpr int kThreadsPerSm = 2048;

// The attention kernels: 16-bit, about 54% of the dense bf16 rate with Hopper's kernel
// (runtime/attention_sm90.cuh, 384 threads; run AZ), 22% with mma.sync's 64-row blocks and 21% with
// its 128-row ones (runtime/attention.cuh; H200, causal 8 x 32 x 4096 x 128; run AR); f32, about
// 33% of the 3xTF32 rate (a third of TF32's; 16 x 32 x 1024 x 128, run AT).
}  // namespace

RankedConfig space_rank_attention(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                                  const sol::HwSpec& hw) {
  const auto& a = std::get<dsl::AttentionStage>(st.body);
  RankedConfig r;
  r.config = c;
  const SimtFacts f = simt_facts(p, st);  // its bytes: q, k, v read and the output written once
  const dsl::Tensor* q = p.find_tensor(a.q);
  const dsl::DType dtype = q ? q->dtype : dsl::DType::f32;
  const bool f32 = dtype == dsl::DType::f32;  // f32 data: 3xTF32, a third of the TF32 rate
  const double t_math = static_cast<double>(dsl::dsl_attention_flops(a)) / (f32 ? hw.tf32 / 3 : hw.bf16);
  r.t_sol = std::max(t_math, static_cast<double>(f.bytes) / hw.mem_bw);
  const int threads = c.simt.threads.value_or(dsl::dsl_attention_default_threads(dtype));
  r.mainloop_eff = f32 ? 0.33 : threads == dsl::kAttentionHopperThreads ? 0.54 : threads == 256 ? 0.21 : 0.22;
  const int64_t blocks = ceil_div(a.lq, dsl::dsl_attention_rows(threads)) * a.batch;
  r.wave_eff = std::min(1.0, static_cast<double>(blocks) / hw.sms);
  r.tile_eff = 1;
  r.t_est = r.t_sol / (r.mainloop_eff * r.wave_eff) + kLaunchSeconds;
  return r;
}

double space_access_eff(int bytes) { return access_eff(bytes); }

RankedConfig space_rank_torch(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                              const sol::HwSpec& hw) {
  const auto& t = std::get<dsl::TorchStage>(st.body);
  RankedConfig r;
  r.config = c;
  SimtFacts f = simt_facts(p, st);
  // PyTorch's own kernels, one launch and a Python call per operation, and the copy of each
  // result into the stage's output: its traffic about twice over.
  r.mainloop_eff = 0.5;
  r.wave_eff = r.tile_eff = 1;
  r.t_sol = static_cast<double>(f.bytes) / hw.mem_bw;
  r.t_est = r.t_sol / r.mainloop_eff + kTorchOpSeconds * static_cast<double>(t.ops.size());
  return r;
}

namespace {

// A streamed full-row op moves its row three times (two reads, one write) where the bound counts
// two: 2/3 of the bandwidth at best.
constexpr double kStreamedRowPasses = 2.0 / 3.0;

// Whether a rowwise stage's configuration streams its rows from memory twice (passes 2) rather
// than caching each block's part in registers: the code generator's plan (dsl/simt_plan.h).
bool rowwise_streams(const dsl::Stage& st, const StageConfig& c, int elem_bytes) {
  const auto* r = std::get_if<dsl::RowwiseStage>(&st.body);
  if (!r) return false;
  const auto plan = dsl::simt_plan_rowwise(r->rows, r->cols, elem_bytes, c.simt, dsl::dsl_rowwise_inputs(r->op) == 1);
  return plan && !plan->cached;
}

}  // namespace

RankedConfig space_rank_simt(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                             const sol::HwSpec& hw) {
  RankedConfig r;
  r.config = c;
  SimtFacts f = simt_facts(p, st);
  int th = c.simt.threads.value_or(256), vw = c.simt.vector_width.value_or(1);
  // order torch: a warp reads 32 consecutive elements, the transactions of 16-byte vectors
  if (c.simt.order == dsl::ScanOrder::torch) vw = std::max(1, 16 / std::max(1, f.elem_bytes));
  double eff = f.kind == "elementwise" ? elementwise_access_eff(vw * f.elem_bytes) : access_eff(vw * f.elem_bytes);
  int64_t per_block;
  if (f.rows_kind) {
    int rpb = c.simt.rows_per_block.value_or(1);
    // a block's columns (a column reduction's cluster splits its reduced rows instead)
    const int split = f.kind == "rowwise" ? std::max(1, c.simt.cluster.value_or(1)) : 1;
    const int64_t part = ceil_div(f.row_len, split);  // the longest part (a cluster's last may be shorter)
    int64_t lanes = rpb * ceil_div(part, vw);
    r.tile_eff = std::min(1.0, static_cast<double>(lanes) / th);
    eff *= std::sqrt(std::max(r.tile_eff, 0.25));
    // A row reduction (one value a row out) reads its row once however it runs: a cluster only
    // adds its register cache and cross-block reduction (run DG, H100, kb1_l1_norm's mean of |x|
    // over 32 Ki rows of 65,535 f32: the streamed block-per-row kernel about 2.8 ms, clusters of
    // 4 and 8 about 5.6-7.7 ms), and a long row streamed is not cached, so no SM is held by it.
    // Otherwise a block caching more than 64 KB of its row is the only one on its SM: nothing
    // overlaps its reductions (H200, 32 Ki f32 log_softmax rows in 1024-thread blocks: 77% of copy
    // bandwidth; 64 KB rows: 94%; docs/benchmarks.md). A cluster's cached parts move best in
    // small blocks with many vectors a thread: 512 threads x 4 vectors 70% against 128 x 16 85%
    // (H200, run H); 1024 x 16 66% against 128 x 64 86% (H100, run DG, kb1_l2_norm).
    // The streaming rule is measured only with scalar loads (odd rows); with 16-byte vectors a row
    // reduction kept its 1024-thread cluster's edge (run DJ, H200: kb1_hinge_loss and
    // kb1_mse_loss, 32 Ki rows of 32 Ki f32, streamed one block a row at 65% and 87% of their
    // bound, where 1024 x cl2 had run 77% and 93-95% on the H100 in runs DD-DH), so those keep
    // the cache rule alone.
    const bool row_reduction = f.kind == "rowwise" && f.per_row_outputs;
    if (row_reduction && vw == 1) {
      if (split > 1) eff *= 0.5;
    } else {
      if (part * f.elem_bytes > 64 * 1024) eff *= 0.8;
      if (split > 1 && th >= 512 && !row_reduction) eff *= 0.8;
    }
    // A full-row op (softmax, a norm) whose block cannot cache its part of the row in registers
    // streams it twice: its statistics, then the row again to write it (simt_plan_rowwise's
    // `cached`): three passes over memory where the bound counts two, once the rows in flight
    // (one a block, a block an SM) outgrow half the L2 so the second read misses it. Run DY
    // (H100, kb-v01): kb1_softmax, kb1_log_softmax (393216-wide rows) and kb1_instancenorm
    // (262144) streamed at 59-60% of their bound, where the estimate without this said 80%.
    if (f.kind == "rowwise" && !row_reduction && rowwise_streams(st, c, f.elem_bytes) &&
        static_cast<double>(hw.sms) * static_cast<double>(part * f.elem_bytes) > hw.l2_bytes / 2)
      eff *= kStreamedRowPasses;
    // a row kernel (rowwise stages, the cross-entropy reduce) whose block has under two vectors a
    // thread is mostly block reductions and launches: kb1_cross_entropy (32 Ki rows of 4096 f32)
    // ran 0.79x eager in 1024-thread blocks and 2.94x in a smaller block (runs BD, BL)
    const auto* red = std::get_if<dsl::ReduceStage>(&st.body);
    if (f.kind == "rowwise" || (red && red->op == "cross_entropy")) {
      const double per_thread = static_cast<double>(lanes) / th;
      if (per_thread < 2) eff *= std::sqrt(per_thread / 2);
    }
    per_block = rpb * part;
  } else {
    per_block = static_cast<int64_t>(th) * vw * 4;  // about 4 vectors per thread
    // elementwise blocks of 128 threads (H200 fp32 activations, 8-byte accesses: 0.508 ms at
    // 128 threads, 0.517-0.519 at 256-1024; run U)
    if (f.kind == "elementwise" && th > 128) eff *= 0.98;
  }
  int64_t blocks = ceil_div(std::max<int64_t>(f.total, 1), std::max<int64_t>(per_block, 1));
  int64_t slots = static_cast<int64_t>(hw.sms) * std::max(1, kThreadsPerSm / th);
  r.wave_eff = std::min(1.0, static_cast<double>(blocks) / static_cast<double>(std::min<int64_t>(slots, hw.sms * 4)));
  r.wave_eff = std::max(r.wave_eff, 0.05);
  r.t_sol = static_cast<double>(f.bytes) / hw.mem_bw;
  space_simt_set_eff(r, eff);
  return r;
}

void space_simt_set_eff(RankedConfig& r, double eff) {
  r.mainloop_eff = eff;
  r.t_est = r.t_sol / (eff * std::min(1.0, r.wave_eff * 2)) + kLaunchSeconds;
}

RankedConfig space_rank_gemm(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                             const sol::HwSpec& hw) {
  return rank_gemm(p, st, std::get<dsl::GemmStage>(st.body), c, hw);
}

std::vector<RankedConfig> space_rank(const dsl::Program& p, const std::vector<StageConfig>& cands,
                                        const sol::HwSpec& hw) {
  std::vector<RankedConfig> out;
  out.reserve(cands.size());
  for (const auto& c : cands) {
    const dsl::Stage& st = p.stages.at(static_cast<size_t>(c.stage));
    out.push_back(space_stage_kind(dsl::dsl_stage_kind_of(st)).rank(p, st, c, hw));
  }
  std::stable_sort(out.begin(), out.end(), [](const RankedConfig& a, const RankedConfig& b) {
    if (a.config.rung != b.config.rung) return a.config.rung < b.config.rung;
    if (a.t_est != b.t_est) return a.t_est < b.t_est;
    return a.config.name < b.config.name;
  });
  return out;
}

}  // namespace ucut::space
