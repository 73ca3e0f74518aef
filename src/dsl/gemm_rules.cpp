// GEMM validity rules and the `auto` resolver. Every rule is a named predicate below with the
// reason for each constant; the constants come from CUTLASS 4.2's sm90 builders and kernels
// (cutlass/gemm/collective/builders/sm90_*.inl, cutlass/epilogue/collective/builders/sm90_*.inl,
// sm90_gemm_tma_warpspecialized_{cooperative,pingpong}.hpp) and from the CUTLASS 2.x sm80
// multistage kernels used for the fp32-faithful precisions.
#include "dsl/gemm_rules.h"

#include "dsl/names.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace ucut::dsl {

namespace {

constexpr int kTmaBytes = 16;  // TMA moves 16-byte units: every TMA-read leading dimension and the
                               // per-access vector of A/B must be a multiple of 16 bytes.

std::string str(int64_t v) { return std::to_string(v); }

struct Ctx {
  const Program& p;
  const GemmStage& s;
  const Tensor& out;
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  std::vector<RuleViolation> v;
  void add(std::string rule, std::string knob, std::string msg, std::string hint) {
    v.push_back({std::move(rule), std::move(knob), std::move(msg), std::move(hint)});
  }
};

bool is_float_dtype(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; }

// Contiguous extent (elements) of each operand as laid out in memory.
int64_t a_contig(const GemmStage& s) { return s.a.transposed ? s.m : s.k; }
int64_t b_contig(const GemmStage& s) { return s.b.transposed ? s.k : s.n; }

int accum_regs_per_thread(const GemmKnobs& k) {
  // Cooperative: two consumer warpgroups (256 threads) share one tile; pingpong: one warpgroup
  // (128 threads) owns a tile. fp32 accumulators, one register each.
  int threads = k.schedule == Schedule::cooperative ? 256 : 128;
  return k.tile->m * k.tile->n / threads;
}

// Epilogue facts the smem estimate needs.
struct EpiFacts {
  bool has_source = false;
  DType source = DType::f32;
  int row_vectors = 0, col_vectors = 0, reductions = 0, full_loads = 0;
};

// The vectors the unit's Sm90RowBroadcast stages: the output's v[col] leaves, or its v[row] ones
// where the unit computes the transposed product (gemm_unit_transposed).
int staged_vectors(const EpiFacts& f, const GemmStage& s, const GemmKnobs& k) {
  return gemm_unit_transposed(s, k) ? f.row_vectors : f.col_vectors;
}

void walk(const ExprPtr& e, const Program& p, EpiFacts& f, std::vector<std::string>& seen_full) {
  if (!e) return;
  if (e->kind == Expr::Kind::load) {
    if (e->mode == LoadMode::row) f.row_vectors++;
    if (e->mode == LoadMode::col) f.col_vectors++;
    if (e->mode == LoadMode::full &&
        std::find(seen_full.begin(), seen_full.end(), e->name) == seen_full.end()) {
      seen_full.push_back(e->name);
      f.full_loads++;
      f.has_source = true;
      if (const Tensor* t = p.find_tensor(e->name)) f.source = t->dtype;
    }
  }
  for (const auto& a : e->args) walk(a, p, f, seen_full);
}

EpiFacts epi_facts(const Program& p, const Epilogue& ep) {
  EpiFacts f;
  std::vector<std::string> seen;
  for (const auto& st : ep.stmts) {
    walk(st.value, p, f, seen);
    if (st.kind == EpilogueStmt::Kind::reduce) f.reductions++;
  }
  return f;
}

bool tile_in(const TileShape& t, std::initializer_list<int> ms, std::initializer_list<int> ns,
             std::initializer_list<int> ks) {
  auto in = [](int v, std::initializer_list<int> l) {
    return std::find(l.begin(), l.end(), v) != l.end();
  };
  return in(t.m, ms) && in(t.n, ns) && in(t.k, ks);
}

// ---- sm80 (CUTLASS 2.x) tile table for f32x3 / f32 ----------------------------------------
// The measured fp32-faithful configurations (fp32-faithful-gemm.md): 3xTF32 mma.sync tiles with
// 32x64 warp tiles (64x64 warp tiles spill registers and run at half speed), and the classic
// SIMT fp32 tile. Each row: threadblock M N K, warp M N K.
constexpr Sm80Tile kF32x3Tiles[] = {
    {128, 128, 32, 32, 64, 32}, {128, 128, 16, 32, 64, 16}, {64, 128, 32, 32, 64, 32},
    {128, 64, 32, 32, 64, 32},  {64, 256, 16, 32, 64, 16},  {256, 64, 16, 64, 32, 16}};
// SIMT: 8 warps of 32x64 (8x8 accumulators per thread) on the square tile, 64x64 warp tiles
// (16x8 per thread, CUTLASS's own SIMT SGEMM choice for its largest tiles) on 256x128 / 128x256.
constexpr Sm80Tile kF32SimtTiles[] = {{128, 128, 8, 32, 64, 8}, {64, 128, 8, 32, 64, 8},
                                      {128, 64, 8, 64, 32, 8},  {256, 128, 8, 64, 64, 8},
                                      {128, 256, 8, 64, 64, 8}};

std::string sm80_tile_list(Precision p) {
  std::string s;
  for (const auto& r : gemm_sm80_tiles(p)) {
    if (!s.empty()) s += ", ";
    s += str(r.m) + "x" + str(r.n) + "x" + str(r.k);
  }
  return s;
}

// Largest alignment (elements) in {4,2,1} dividing every contiguous extent: cp.async moves 4, 8
// or 16 bytes, so an fp32 access of `align` elements needs the extent to be a multiple of it.
int sm80_max_align(const GemmStage& s) {
  for (int al : {4, 2, 1})
    if (a_contig(s) % al == 0 && b_contig(s) % al == 0) return al;
  return 1;
}

// Shared memory of a 2.x multistage kernel: `stages` copies of the A and B tiles (fp32).
int sm80_smem(const TileShape& t, int stages) { return stages * (t.m + t.n) * t.k * 4; }

// f32x3w's main loop (runtime/gemm_f32x3w_rs.cuh) holds three accumulators a thread and adds its
// part buffers to the shared memory: tile M 128 (one 64-row wgmma per consumer warpgroup), N 64 or
// 128, K one 128-byte swizzle row of fp32. The first is `auto`'s.
constexpr TileShape kF32x3wTiles[] = {{128, 128, 32}, {128, 64, 32}};

}  // namespace

// ---- facts ---------------------------------------------------------------------------------

std::span<const TileShape> gemm_f32x3w_tiles() { return kF32x3wTiles; }

std::span<const Sm80Tile> gemm_sm80_tiles(Precision p) {
  if (p == Precision::f32x3 || p == Precision::tf32m) return kF32x3Tiles;  // both TF32 mma.sync
  return kF32SimtTiles;
}

const Sm80Tile* gemm_sm80_find(Precision p, const TileShape& t) {
  for (const auto& r : gemm_sm80_tiles(p))
    if (r.m == t.m && r.n == t.n && r.k == t.k) return &r;
  return nullptr;
}

int gemm_f32x3s_split_k(int64_t k) { return k >= 1024 ? 4 : 1; }

// The spellings live in one table (names.cpp), shared with the parser and printer.
const char* precision_name(Precision p) { return dsl_precision_str(p); }
const char* dtype_name(DType t) { return dsl_dtype_str(t); }

GemmFamily gemm_family(Precision p) {
  return (p == Precision::f32x3 || p == Precision::f32 || p == Precision::tf32m) ? GemmFamily::sm80
                                                                                   : GemmFamily::sm90;
}

DType gemm_operand_dtype(Precision p) {
  switch (p) {
    case Precision::f16: return DType::f16;
    case Precision::bf16: return DType::bf16;
    default: return DType::f32;
  }
}

DType gemm_mma_dtype(Precision p) { return p == Precision::bf16x3 ? DType::bf16 : gemm_operand_dtype(p); }

int gemm_sm90_stage_bytes(const GemmKnobs& k) {
  int bytes = dtype_bytes(gemm_mma_dtype(k.precision));
  // One A tile + one B tile, plus the pipeline's full/empty barrier pair rounded up as the
  // builder does (compute_stage_count_or_override adds 32 bytes per stage).
  return (k.tile->m + k.tile->n) * k.tile->k * bytes + 32;
}

int gemm_f32x3w_small_bytes(const GemmStage& s, const GemmKnobs& k) {
  if (k.precision != Precision::f32x3w || !k.tile) return 0;
  const int b_parts = 2 * k.tile->n * k.tile->k * 4 + 1024;  // two tiles and the slack
  return gemm_f32x3w_transposes_b(s) ? 2 * b_parts : b_parts;
}

int gemm_sm90_epilogue_smem(const GemmKnobs& k, DType out, bool has_source, DType source, int staged_vectors) {
  // EpilogueTileAuto: cooperative 128 x min(32, N), pingpong 64 x min(32, N)
  // (sm90_compute_tile_shape_or_override); StagesD = min(EpiTiles, 2) and StagesC up to
  // max(min(EpiTiles, 4), StagesD + 1) (sm90_get_tma_dispatch_policy). We count C and D
  // separately (CUTLASS may share them), so this is an upper bound.
  int em = std::min(k.schedule == Schedule::cooperative ? 128 : 64, k.tile->m);
  int en = std::min(32, k.tile->n);
  int epi_tiles = (k.tile->m / em) * (k.tile->n / en);
  int stages_d = std::min(epi_tiles, 2);
  int stages_c = has_source ? std::max(std::min(epi_tiles, 4), stages_d + 1) : 0;
  int bytes = em * en * (stages_d * dtype_bytes(out) + stages_c * dtype_bytes(source));
  // Sm90RowBroadcast stages one tile row of the vector (tile N elements, up to 4 bytes);
  // column broadcasts and reductions read/write registers only (SharedStorage is empty).
  bytes += staged_vectors * k.tile->n * 4;
  // Epilogue load/store pipeline barriers, tile-scheduler pipeline, tensormaps, CLC response and
  // alignment padding of the kernel's SharedStorage: measured below 1 KiB; 2 KiB keeps margin.
  return bytes + 2048;
}

std::string gemm_config_name(const GemmKnobs& k, bool stages_auto) {
  if (is_gemv(k.schedule))
    return std::string(dsl_schedule_str(k.schedule)) + "_" + precision_name(k.precision) + "_k" +
           str(k.split_k.value_or(kGemvDefaultSplitK)) + (k.math == MathMode::fast ? "_mf" : "");
  std::string n = std::string("gemm_") + precision_name(k.precision);
  if (k.tile) n += "_t" + str(k.tile->m) + "x" + str(k.tile->n) + "x" + str(k.tile->k);
  if (gemm_family(k.precision) == GemmFamily::sm90) {
    if (k.cluster) n += "_c" + str(k.cluster->m) + "x" + str(k.cluster->n);
    n += stages_auto || !k.stages ? std::string("_sA") : "_s" + str(*k.stages);
    n += k.schedule == Schedule::pingpong ? "_pp" : "_coop";
    n += k.scheduler == TileScheduler::stream_k ? "_sk" : "_persist";
    if (k.split_k && *k.split_k > 1) n += "_k" + str(*k.split_k);
    n += k.raster == Raster::along_n ? "_rn" : "_rm";
    n += "_w" + str(k.swizzle.value_or(1));
  } else {
    n += "_s" + str(k.stages.value_or(3));
    if (k.split_k && *k.split_k > 1) n += "_k" + str(*k.split_k);
    n += "_w" + str(k.swizzle.value_or(1));
    n += "_a" + str(k.align.value_or(1));
  }
  if (k.math == MathMode::fast) n += "_mf";
  return n;
}

// ---- the resolver ---------------------------------------------------------------------------

// `math auto` is fast when the matmul is 16-bit and every tensor the stage writes is f16 or
// bf16: their rounding (2^-9 relative for bf16, 2^-12 for f16) dwarfs or matches the hardware
// approximations' error, and the contract judges such outputs at 1e-2. Anything with an fp32
// output stays precise.
static bool math_fast_by_default(const Program& p, const GemmStage& s, Precision prec, const Tensor& out) {
  if (prec != Precision::f16 && prec != Precision::bf16) return false;
  auto is16 = [](DType t) { return t == DType::f16 || t == DType::bf16; };
  if (!is16(out.dtype)) return false;
  for (const auto& st : s.epilogue.stmts) {
    if (st.kind != EpilogueStmt::Kind::reduce) continue;
    const Tensor* t = p.find_tensor(st.name);
    if (!t || !is16(t->dtype)) return false;
  }
  return true;
}

std::optional<GemvShapeRefusal> gemm_gemv_shape_refusal(const GemmStage& s) {
  if (s.n != 1) return GemvShapeRefusal{"out", "computes one output column; this GEMM has N = " + str(s.n)};
  if (s.batch > 1) return GemvShapeRefusal{"out", "runs one matrix; this GEMM has a batch of " + str(s.batch)};
  if (s.a.transposed)
    return GemvShapeRefusal{"a", "reads A's rows along K, and A is written transposed (" + s.a.tensor +
                                     ".T: its K runs down the columns)"};
  return std::nullopt;
}

GemmKnobs gemm_resolve_auto(const Program& p, const GemmStage& s, const Tensor& out) {
  GemmKnobs k = s.knobs;
  const Tensor* a = p.find_tensor(s.a.tensor);
  DType data = a ? a->dtype : DType::f32;
  if (is_gemv(k.schedule)) {
    // FP32 FFMA in cuBLAS's GEMV order; tile, cluster, stages, swizzle and align do not apply
    // (they stay unset), the scheduler and raster take their fixed values.
    if (k.precision == Precision::auto_) k.precision = Precision::f32;
    if (k.math == MathMode::auto_) k.math = MathMode::precise;
    if (!k.split_k) k.split_k = static_cast<int>(std::min<int64_t>(kGemvDefaultSplitK, std::max<int64_t>(1, s.k)));
    if (k.scheduler == TileScheduler::auto_) k.scheduler = TileScheduler::persistent;
    if (k.raster == Raster::auto_) k.raster = Raster::along_m;
    return k;
  }
  if (k.precision == Precision::auto_) {
    // f32 data defaults to the fp32-faithful 3xTF32 path: correctness under atol=rtol=1e-4
    // comes first (plain tf32 fails it on Linear-style problems); the search may pick tf32.
    k.precision = data == DType::f16 ? Precision::f16
                  : data == DType::bf16 ? Precision::bf16
                                        : Precision::f32x3;
  }
  if (k.math == MathMode::auto_)
    k.math = math_fast_by_default(p, s, k.precision, out) ? MathMode::fast : MathMode::precise;
  if (gemm_family(k.precision) == GemmFamily::sm80) {
    const bool tensor_op = k.precision != Precision::f32;  // f32x3, tf32m: TF32 mma.sync
    if (!k.tile) k.tile = tensor_op ? TileShape{128, 128, 32} : TileShape{128, 128, 8};
    if (!k.cluster) k.cluster = ClusterShape{1, 1};
    if (!k.stages) {
      // 3 stages measured fastest for 3xTF32 128x128x32; take the most that fit up to 4 else.
      int st = tensor_op ? 3 : 4;
      while (st > 2 && sm80_smem(*k.tile, st) > kSm90SmemBytes) st--;
      k.stages = st;
    }
    if (k.schedule == Schedule::auto_) k.schedule = Schedule::cooperative;
    if (k.scheduler == TileScheduler::auto_) k.scheduler = TileScheduler::persistent;
    if (k.raster == Raster::auto_) k.raster = Raster::along_m;
    if (!k.split_k) k.split_k = 1;
    if (!k.swizzle) k.swizzle = 1;
    // The f32 SIMT kernel reads one element per access (rule_align_legal); 3xTF32 vectorizes.
    if (!k.align) k.align = k.precision == Precision::f32 ? 1 : sm80_max_align(s);
    return k;
  }
  if (k.precision == Precision::f32x3s) {
    // the big x big GEMM in four K pieces (rule_f32x3s), on stream-K's split-K decomposition
    if (!k.split_k) k.split_k = gemm_f32x3s_split_k(s.k);
    if (k.scheduler == TileScheduler::auto_ && *k.split_k > 1) k.scheduler = TileScheduler::stream_k;
    if (k.schedule == Schedule::auto_) k.schedule = Schedule::cooperative;
  }
  if (k.precision == Precision::f32x3w) {
    // the main loop of runtime/gemm_f32x3w.cuh: two consumer warpgroups (cooperative), one output
    // tile a work unit (persistent), its first tile (rule_f32x3w)
    if (k.schedule == Schedule::auto_) k.schedule = Schedule::cooperative;
    if (k.scheduler == TileScheduler::auto_) k.scheduler = TileScheduler::persistent;
    if (!k.split_k) k.split_k = 1;
    if (!k.tile) k.tile = gemm_f32x3w_tiles().front();
  }
  int bytes = dtype_bytes(gemm_mma_dtype(k.precision));
  if (k.schedule == Schedule::auto_) {
    // Cooperative needs a tile M of 128 or 256; small-M problems run better as pingpong 64xN.
    bool small_m = s.m <= 64 && (!k.tile || k.tile->m == 64);
    k.schedule = (k.tile && k.tile->m == 64) || small_m ? Schedule::pingpong : Schedule::cooperative;
  }
  if (k.scheduler == TileScheduler::auto_)
    k.scheduler = (k.split_k && *k.split_k > 1) ? TileScheduler::stream_k : TileScheduler::persistent;
  if (!k.tile) {
    int tk = 128 / bytes;  // one 128-byte swizzle row of K: 64 for 16-bit, 32 for tf32
    // bf16x3's promoting main loop holds its accumulators twice (rule_tile_legal): N 128 at most
    const bool wide = !gemm_promotes(s, k);
    if (k.schedule == Schedule::pingpong)
      k.tile = TileShape{64, wide && s.n >= 256 && bytes == 2 ? 256 : 128, tk};
    else
      // 128x256 measured best for bf16 4096^3 (683 TFLOP/s); keep 128x128 for narrow N.
      k.tile = TileShape{128, wide && s.n >= 256 ? 256 : 128, tk};
  }
  if (!k.cluster) {
    // Multicasting B across two CTAs along M halves its L2 traffic once there are enough M tiles.
    k.cluster = s.m >= 4 * k.tile->m ? ClusterShape{2, 1} : ClusterShape{1, 1};
  }
  if (k.raster == Raster::auto_) k.raster = Raster::along_m;
  if (!k.split_k) k.split_k = 1;
  if (!k.swizzle) k.swizzle = 1;
  if (!k.align) k.align = kTmaBytes / bytes;
  if (!k.stages) {
    EpiFacts f = epi_facts(p, s.epilogue);
    int epi = gemm_sm90_epilogue_smem(k, out.dtype, f.has_source, f.source, staged_vectors(f, s, k)) +
              gemm_f32x3w_small_bytes(s, k);
    k.stages = std::max(0, (kSm90SmemBytes - epi) / gemm_sm90_stage_bytes(k));
  }
  return k;
}

// ---- the rules -------------------------------------------------------------------------------

namespace {

void rule_operand_dtypes(Ctx& c) {
  if (!c.a || !c.b) return;
  if (!is_float_dtype(c.a->dtype))
    c.add("operand_dtype", "a", "GEMM operand '" + c.a->name + "' has dtype " +
          dtype_name(c.a->dtype) + "; GEMM operands must be f16, bf16 or f32",
          "convert the tensor in an earlier stage");
  if (c.a->dtype != c.b->dtype)
    c.add("operand_dtypes_match", "b", std::string("GEMM operands differ in dtype: A is ") +
          dtype_name(c.a->dtype) + ", B is " + dtype_name(c.b->dtype),
          "both operands of one GEMM must have the same dtype");
  if (!is_float_dtype(c.out.dtype))
    c.add("out_dtype", "out", std::string("GEMM output '") + c.out.name + "' has dtype " +
          dtype_name(c.out.dtype) + "; it must be f16, bf16 or f32", "declare the output f16, bf16 or f32");
}

void rule_precision_matches_dtype(Ctx& c, const GemmKnobs& k) {
  if (!c.a) return;
  DType need = gemm_operand_dtype(k.precision);
  if (c.a->dtype != need)
    c.add("precision_matches_dtype", "precision",
          std::string("precision ") + precision_name(k.precision) + " needs " + dtype_name(need) +
              " operands, but '" + c.a->name + "' is " + dtype_name(c.a->dtype),
          c.a->dtype == DType::f32 ? "f32 data: use precision tf32, tf32m, f32x3 (fp32-faithful) or f32"
          : std::string("use precision ") + dtype_name(c.a->dtype));
}

// wgmma reads 32-bit (tf32) operands from shared memory only K-major; the CUTLASS builder sends
// other layouts to a register-sourced transposing mainloop that we do not generate. (f32x3s and
// f32x3k take any layout: their split stages write the operands' parts K-major,
// codegen/split_gemm.cpp; f32x3w too: its main loop reads A into registers whatever its layout and
// writes B's parts K-major, runtime/gemm_f32x3w_rs.cuh.)
void rule_tf32_k_major(Ctx& c, const GemmKnobs& k) {
  if (k.precision != Precision::tf32) return;
  const std::string pr = precision_name(k.precision);
  const std::string other = "tf32m (TF32 on mma.sync) or f32x3";
  if (!gemm_a_k_major(c.s))
    c.add("tf32_k_major", "a", pr + " wgmma reads A only K-major, but A is written transposed ('" +
          c.s.a.tensor + ".T', M contiguous)",
          "pass A as [M, K] (untransposed), or use precision " + other + ", which take any layout");
  if (!gemm_b_k_major(c.s))
    c.add("tf32_k_major", "b", pr + " wgmma reads B only K-major, but B is [K, N] (N contiguous)",
          "pass B as [N, K] and write '" + c.s.b.tensor + ".T' (as nn.Linear's weight is), or use precision " +
              other);
}

void rule_tma_aligned(Ctx& c, const GemmKnobs& k) {
  if (!c.a || !c.b) return;
  if (gemm_family(k.precision) == GemmFamily::sm80) return;  // cp.async: rule_align_legal
  int ab = dtype_bytes(c.a->dtype);
  auto check = [&](const char* knob, const std::string& what, int64_t extent, int bytes) {
    if (extent * bytes % kTmaBytes != 0)
      c.add("tma_aligned", knob, what + ": its contiguous dimension is " + str(extent) + " elements = " +
            str(extent * bytes) + " bytes, not a multiple of 16 (TMA copies 16-byte units)",
            "pad that dimension to a multiple of " + str(kTmaBytes / bytes) +
            " elements, or use precision f32x3 for f32 data");
  };
  // f32x3s, f32x3k, bf16x3: the GEMMs read the split parts, K-major whatever the operands' layout
  // (f32x3k's and bf16x3's three parts of a row side by side, 3K; bf16x3's 2 bytes each)
  const bool split = gemm_is_split(k.precision);
  const int64_t parts_k = k.precision == Precision::f32x3k || k.precision == Precision::bf16x3 ? 3 * c.s.k : c.s.k;
  if (split) ab = dtype_bytes(gemm_mma_dtype(k.precision));
  check("a", "A '" + c.s.a.tensor + "'" + (split ? "'s split parts" : ""), split ? parts_k : a_contig(c.s), ab);
  check("b", "B '" + c.s.b.tensor + "'" + (split ? "'s split parts" : ""), split ? parts_k : b_contig(c.s), ab);
  check("out", "output '" + c.out.name + "'", c.s.n, dtype_bytes(c.out.dtype));
}

void rule_align_legal(Ctx& c, const GemmKnobs& k) {
  if (!c.a || !k.align) return;
  int al = *k.align;
  if (gemm_family(k.precision) == GemmFamily::sm90) {
    int bytes = dtype_bytes(gemm_mma_dtype(k.precision));
    if (al * bytes != kTmaBytes)
      c.add("align_legal", "align", "align " + str(al) + " is not one 16-byte TMA access of " +
            dtype_name(gemm_mma_dtype(k.precision)), "use align " + str(kTmaBytes / bytes) + " or auto");
    return;
  }
  if (al != 1 && al != 2 && al != 4)
    c.add("align_legal", "align", "align " + str(al) + " is not a cp.async size for f32 (4, 8 or 16 bytes)",
          "use align 1, 2 or 4, or auto");
  else if (k.precision == Precision::f32 && al != 1)
    c.add("align_legal", "align", "the f32 SIMT kernel reads one element per access", "use align 1 or auto");
  else if (a_contig(c.s) % al != 0 || b_contig(c.s) % al != 0)
    c.add("align_legal", "align", "align " + str(al) + " does not divide the contiguous extents of A (" +
          str(a_contig(c.s)) + ") and B (" + str(b_contig(c.s)) + ")",
          "use align " + str(sm80_max_align(c.s)) + " or auto");
}

void rule_tile_legal(Ctx& c, const GemmKnobs& k) {
  const TileShape& t = *k.tile;
  std::string ts = str(t.m) + "x" + str(t.n) + "x" + str(t.k);
  if (gemm_family(k.precision) == GemmFamily::sm80) {
    if (!gemm_sm80_find(k.precision, t))
      c.add("tile_legal", "tile", std::string("tile ") + ts + " is not a " + precision_name(k.precision) +
            " tile", "use one of " + sm80_tile_list(k.precision));
    return;
  }
  // wgmma: M in 64-row warpgroup steps; N a multiple of the 64-element swizzle atom up to
  // wgmma's N limit of 256; K one, two or four 32/64/128-byte swizzle rows (64/128-byte for tf32).
  bool sixteen = dtype_bytes(gemm_mma_dtype(k.precision)) == 2;
  bool ok = sixteen ? tile_in(t, {64, 128, 256}, {64, 128, 256}, {32, 64, 128})
                    : tile_in(t, {64, 128, 256}, {64, 128, 256}, {16, 32, 64});
  if (!ok) {
    c.add("tile_legal", "tile", std::string("tile ") + ts + " is not a legal " + precision_name(k.precision) +
          " wgmma tile", sixteen ? "M and N in {64, 128, 256}, K in {32, 64, 128}"
                                 : "M and N in {64, 128, 256}, K in {16, 32, 64}");
    return;
  }
  // Registers: a consumer thread holds tile_m*tile_n/threads fp32 accumulators; above 128 the
  // kernel spills (255 registers per thread is the hardware limit, and the epilogue needs room).
  // bf16x3's promoting main loop holds them twice (the tensor core's partial sums beside the fp32
  // ones): 64 at most (128 x 256 cooperative used 168 registers and spilled 1.4 KB a thread).
  const bool promoted = gemm_promotes(c.s, k);
  const int limit = promoted ? 64 : 128;
  if (accum_regs_per_thread(k) > limit)
    c.add("accumulator_registers", "tile", std::string("tile ") + ts + " needs " + str(accum_regs_per_thread(k)) +
          " accumulator registers per thread with the " +
          (k.schedule == Schedule::cooperative ? "cooperative" : "pingpong") + " schedule (limit " + str(limit) +
          (promoted ? ": bf16x3 keeps two sets" : "") + ")",
          k.schedule == Schedule::cooperative
              ? (promoted ? "use a tile with M*N <= 16384 (e.g. 128x128)" : "use a tile with M*N <= 32768 (e.g. 128x256)")
              : (promoted ? "use a tile with M*N <= 8192 (e.g. 64x128) or schedule cooperative"
                          : "use a tile with M*N <= 16384 (e.g. 64x256, 128x128) or schedule cooperative"));
}

void rule_schedule_compatible(Ctx& c, const GemmKnobs& k) {
  if (gemm_family(k.precision) == GemmFamily::sm80) {
    if (c.s.knobs.schedule != Schedule::auto_)
      c.add("schedule_compatible", "schedule", std::string("precision ") + precision_name(k.precision) +
            " runs a CUTLASS 2.x kernel that has no warp-specialized schedule", "use schedule auto");
    return;
  }
  // The cooperative kernel splits the tile's M between two 64-row consumer warpgroups and
  // static_asserts tile M >= 128 (sm90_gemm_tma_warpspecialized_cooperative.hpp).
  if (k.schedule == Schedule::cooperative && k.tile->m % 128 != 0)
    c.add("schedule_compatible", c.s.knobs.schedule == Schedule::auto_ ? "tile" : "schedule",
          "the cooperative schedule needs tile M of 128 or 256, tile M is " + str(k.tile->m),
          "use schedule pingpong with tile M 64, or tile M 128");
}

void rule_cluster_legal(Ctx& c, const GemmKnobs& k) {
  const ClusterShape& cl = *k.cluster;
  if (gemm_family(k.precision) == GemmFamily::sm80) {
    if (cl.m != 1 || cl.n != 1)
      c.add("cluster_legal", "cluster", std::string("precision ") + precision_name(k.precision) +
            " runs a CUTLASS 2.x kernel without thread block clusters", "use cluster 1x1 or auto");
    return;
  }
  // TMA multicast needs power-of-two cluster extents; a portable cluster has at most 8 CTAs, and
  // we allow up to 4 so a cluster always fits the SMs of one GPC on H100/H200.
  auto pow2 = [](int v) { return v == 1 || v == 2 || v == 4; };
  if (!pow2(cl.m) || !pow2(cl.n) || cl.m * cl.n > 4)
    c.add("cluster_legal", "cluster", "cluster " + str(cl.m) + "x" + str(cl.n) +
          " is not legal: each extent must be 1, 2 or 4 and the cluster at most 4 CTAs",
          "use cluster 1x1, 2x1, 1x2, 2x2, 4x1 or 1x4");
}

void rule_fits_smem(Ctx& c, const GemmKnobs& k) {
  bool explicit_stages = c.s.knobs.stages.has_value();
  const char* knob = explicit_stages ? "stages" : "tile";
  int st = k.stages.value_or(0);
  if (gemm_family(k.precision) == GemmFamily::sm80) {
    if (st < 2 || st > 6)
      c.add("stages_legal", "stages", "stages " + str(st) + " is outside 2..6 for the multistage kernel",
            "use stages 3 or auto");
    else if (sm80_smem(*k.tile, st) > kSm90SmemBytes)
      c.add("fits_smem", knob, "shared memory: " + str(sm80_smem(*k.tile, st)) + " bytes > " +
            str(kSm90SmemBytes), "use fewer stages");
    return;
  }
  EpiFacts f = epi_facts(c.p, c.s.epilogue);
  const int small = gemm_f32x3w_small_bytes(c.s, k);  // f32x3w's part buffers, beside the epilogue
  int epi = gemm_sm90_epilogue_smem(k, c.out.dtype, f.has_source, f.source, staged_vectors(f, c.s, k)) + small;
  int stage = gemm_sm90_stage_bytes(k);
  int max_st = (kSm90SmemBytes - epi) / stage;
  // The producer/consumer pipeline needs two stages to overlap loads with math; CUTLASS's
  // mainloop static_asserts at least 2.
  if (st < 2 || st > max_st) {
    std::string msg = "shared memory: " + str(st) + " stages x " + str(stage) + " bytes + epilogue " +
                      str(epi - small) + " bytes" +
                      (small ? " + f32x3w's split buffers " + str(small) + " bytes" : std::string());
    if (st >= 2) msg += " = " + str(st * stage + epi) + " > " + str(kSm90SmemBytes) + " (227 KiB)";
    else msg += ": at most " + str(max_st) + " stages fit, the mainloop needs 2";
    c.add("fits_smem", knob, msg,
          max_st >= 2 ? "use stages " + str(max_st) + " or fewer (or auto)"
                      : std::string("use a smaller tile"));
    return;
  }
  if (k.precision != Precision::f32x3s) return;
  // f32x3s: two of the split's three TF32 GEMMs read an fp32 [M, N] source (p2 = As Bb + p1, and
  // the stage's own = Ab Bb + p2: codegen/split_gemm.cpp), each with the stage's tile and an
  // explicit stage count (auto resolves per GEMM). Where their mainloop cannot keep two stages
  // beside that epilogue the library does not generate (runs DE and DG: 21 candidates with K
  // tiles of 64 failed so, a 98 KB stage beside a 100 KB epilogue).
  const int need = explicit_stages ? st : 2;
  for (const DType out : {DType::f32, c.out.dtype}) {
    const bool main = out == c.out.dtype;
    const int epi_src = gemm_sm90_epilogue_smem(k, out, true, DType::f32, main ? staged_vectors(f, c.s, k) : 0);
    if (need * stage + epi_src > kSm90SmemBytes) {
      c.add("fits_smem", knob,
            "shared memory: precision f32x3s's GEMMs that add a partial product (an fp32 source) need " +
                str(need) + " stages x " + str(stage) + " bytes + epilogue " + str(epi_src) + " bytes = " +
                str(need * stage + epi_src) + " > " + str(kSm90SmemBytes) + " (227 KiB)",
            explicit_stages ? std::string("use fewer stages or a smaller tile (or auto)")
                            : std::string("use a smaller tile (K 32)"));
      return;
    }
  }
}

void rule_scheduler(Ctx& c, const GemmKnobs& k) {
  int sk = k.split_k.value_or(1);
  if (sk < 1 || sk > 16)
    c.add("split_k_legal", "split_k", "split_k " + str(sk) + " is outside 1..16", "use split_k 1..16 or auto");
  if (k.swizzle) {
    int w = *k.swizzle;
    if (w != 1 && w != 2 && w != 4 && w != 8)
      c.add("swizzle_legal", "swizzle", "swizzle " + str(w) + " is not 1, 2, 4 or 8", "use swizzle 1, 2, 4 or 8");
  }
  int k_tiles = static_cast<int>((c.s.k + k.tile->k - 1) / k.tile->k);
  if (sk > 1 && sk > k_tiles)
    c.add("split_k_legal", "split_k", "split_k " + str(sk) + " exceeds the " + str(k_tiles) +
          " K tiles of K=" + str(c.s.k), "use split_k " + str(std::max(1, k_tiles)) + " or fewer");
  if (gemm_family(k.precision) == GemmFamily::sm80) {
    if (c.s.knobs.scheduler != TileScheduler::auto_)
      c.add("scheduler_compatible", "scheduler", "the CUTLASS 2.x fp32 kernels have no tile scheduler",
            "use scheduler auto (split_k still works, as serial split-K)");
    if (sk > 1 && c.s.batch > 1)
      c.add("split_k_legal", "split_k", "the CUTLASS 2.x fp32 kernels split K or run batches, not both",
            "use split_k 1 for a batched GEMM");
    if (c.s.knobs.raster != Raster::auto_)
      c.add("raster_compatible", "raster", "the CUTLASS 2.x fp32 kernels raster along M only",
            "use raster auto");
    return;
  }
  // StreamKScheduler (also used for split-K, in its split-K decomposition) is only implemented by
  // the cooperative kernel: the pingpong kernel static_asserts against it.
  if (k.scheduler == TileScheduler::stream_k && k.schedule != Schedule::cooperative)
    c.add("stream_k_needs_cooperative", c.s.knobs.scheduler == TileScheduler::auto_ ? "split_k" : "scheduler",
          "stream-K and split-K need the cooperative schedule (CUTLASS's pingpong kernel has no stream-K)",
          "use schedule cooperative (tile M 128 or 256)");
  if (sk > 1 && k.scheduler == TileScheduler::persistent)
    c.add("split_k_needs_stream_k", "split_k",
          "split_k > 1 runs on the stream-K tile scheduler, but scheduler is persistent",
          "use scheduler stream_k or auto");
}

// Batched GEMM: both operands 3-D [L, ., .], or a 2-D B shared by all batches with an
// untransposed A (the batch is folded into M). Other broadcast operands are not generated.
void rule_batch(Ctx& c) {
  if (c.s.batch <= 1 || !c.a || !c.b) return;
  bool a3 = c.a->shape.size() == 3, b3 = c.b->shape.size() == 3;
  if (a3 && b3) return;
  if (!a3)
    c.add("batch_operands", "a", "A '" + c.a->name + "' is 2-D in a batched GEMM",
          "give A a batch dimension [L, M, K], or swap the roles so the shared operand is B");
  else if (c.s.a.transposed)
    c.add("batch_operands", "a", "a 2-D B is shared across batches only when A is untransposed",
          "pass A as [L, M, K]");
}

void rule_epilogue(Ctx& c, const GemmKnobs& k) {
  EpiFacts f = epi_facts(c.p, c.s.epilogue);
  bool sm90 = gemm_family(k.precision) == GemmFamily::sm90;
  if (sm90 && f.full_loads > 1)
    c.add("epilogue_one_source", "out", "the epilogue reads " + str(f.full_loads) +
          " full-size tensors; a GEMM epilogue reads at most one (through the C operand)",
          "add the other tensors in an elementwise stage");
  int64_t L = c.s.batch, M = c.s.m, N = c.s.n;
  bool folded = L > 1 && c.b && c.b->shape.size() == 2;
  std::vector<const Expr*> stack;
  for (const auto& st : c.s.epilogue.stmts) {
    if (st.value) stack.push_back(st.value.get());
    if (st.kind == EpilogueStmt::Kind::reduce) {
      const Tensor* t = c.p.find_tensor(st.name);
      int64_t want = st.reduce_axis == ReduceAxis::row ? M : N;
      if (t && t->dtype != DType::f32)
        c.add("reduction_f32", "out", "reduction output '" + t->name + "' is " + dtype_name(t->dtype) +
              "; GEMM epilogue reductions accumulate across tiles with fp32 atomics",
              "declare '" + t->name + "' as f32 (convert it in a later stage if needed)");
      if (t && t->numel() != want * L)
        c.add("reduction_shape", "out", "reduction output '" + t->name + "' has " + str(t->numel()) +
              " elements, expected " + str(want * L), "declare it with shape [" +
              (L > 1 ? str(L) + ", " : std::string()) + str(want) + "]");
      if (t && folded && st.reduce_axis == ReduceAxis::col)
        c.add("batch_operands", "out", "a column reduction in a batched GEMM with a shared 2-D B "
              "would reduce across batches", "give B a batch dimension");
    }
  }
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    for (const auto& a : e->args) stack.push_back(a.get());
    if (e->kind != Expr::Kind::load) continue;
    const Tensor* t = c.p.find_tensor(e->name);
    if (!t) continue;
    if (!is_float_dtype(t->dtype)) {
      c.add("epilogue_load_dtype", "out", "epilogue tensor '" + t->name + "' is " + dtype_name(t->dtype) +
            "; epilogue loads must be f16, bf16 or f32", "convert it in an earlier stage");
      continue;
    }
    int bytes = dtype_bytes(t->dtype);
    if (e->mode == LoadMode::full) {
      if (t->numel() != L * M * N && !(L == 1 && t->numel() == M * N))
        c.add("epilogue_load_shape", "out", "'" + t->name + "' has " + str(t->numel()) +
              " elements but the output tile space is " + str(L * M * N), "load a tensor shaped like the output");
      else if (sm90 && N * bytes % kTmaBytes != 0)
        c.add("tma_aligned", "out", "residual '" + t->name + "' rows are " + str(N * bytes) +
              " bytes, not a multiple of 16 (it is read by TMA)", "pad N to a multiple of " + str(kTmaBytes / bytes));
    } else {
      int64_t len = e->mode == LoadMode::row ? M : N;
      bool per_batch = t->numel() == len * L && L > 1;
      if (t->numel() != len && !per_batch)
        c.add("epilogue_load_shape", "out", "'" + t->name + "[" + (e->mode == LoadMode::row ? "row" : "col") +
              "]' needs " + str(len) + " elements (or " + str(len * L) + " per batch), it has " + str(t->numel()),
              "check which axis the vector runs along: v[row] has one value per output row (M), v[col] one per column (N)");
      else if (folded && e->mode == LoadMode::col && per_batch)
        c.add("batch_operands", "out", "'" + t->name + "[col]' differs per batch but the batch is "
              "folded into M (B is 2-D)", "give B a batch dimension [L, K, N]");
      else if (folded && e->mode == LoadMode::row && !per_batch)
        c.add("batch_operands", "out", "'" + t->name + "[row]' is shared across batches but the batch is "
              "folded into M (B is 2-D)", "give the vector a batch dimension [L, M]");
      // Sm90RowBroadcast/ColBroadcast read 16-byte vectors of the broadcast tensor.
      else if (sm90 && len * bytes % kTmaBytes != 0 && L > 1)
        c.add("tma_aligned", "out", "per-batch vector '" + t->name + "' rows are " + str(len * bytes) +
              " bytes, not a multiple of 16", "pad it");
    }
  }
}

// f32x3s runs three TF32 GEMMs (docs/language.md): the big x big product accumulates in the
// tensor core, which is accurate enough only in K/split_k-step pieces added in fp32 (H200,
// 4096 x 8192 x 8192 randn Linear: one piece fails the contract's rescaled trial on 121 of 33.5 M
// elements, four pass; docs/benchmarks.md run Y), and the cross products reach the last GEMM
// through the epilogue's one source tensor: an epilogue reading a full-size tensor of its own runs
// as an elementwise stage after the GEMM (codegen/split_gemm.cpp), which cannot reduce and reads
// vectors by the output's own rows and columns.
void rule_f32x3s(Ctx& c, const GemmKnobs& k) {
  if (k.precision != Precision::f32x3s) return;
  if (k.split_k.value_or(1) < 2 && gemm_f32x3s_split_k(c.s.k) > 1)
    c.add("f32x3s_split_k", "split_k",
          "f32x3s accumulates the big x big product in TF32 tensor-core steps; in one K piece it drifts "
          "past atol = 1e-4 at K in the thousands",
          "use split_k 4 (its auto) or more");
  const EpiFacts f = epi_facts(c.p, c.s.epilogue);
  if (f.full_loads > 0 && f.reductions > 0)
    c.add("f32x3s_epilogue_source", "out",
          "f32x3s adds its cross products through the epilogue's one source tensor, so an epilogue that "
          "reads a full-size tensor runs as an elementwise stage after the GEMM, and this one also reduces",
          "move the reduction to a reduce or rowwise stage, or use precision f32x3");
  else if (f.full_loads > 0 && c.s.batch > 1 && f.row_vectors + f.col_vectors > 0)
    c.add("f32x3s_epilogue_source", "out",
          "f32x3s adds its cross products through the epilogue's one source tensor, so an epilogue that "
          "reads a full-size tensor runs as an elementwise stage after the GEMM, which does not broadcast "
          "this batched GEMM's row or column vectors",
          "add the full-size tensor in an elementwise stage of its own, or use precision f32x3");
}

// f32x3w: the main loop of runtime/gemm_f32x3w.cuh. Its two consumer warpgroups split each k-tile
// between them (a barrier of the cooperative kernel's 256 consumer threads) and hold three
// accumulators each (the running fp32 sum, big x big, the cross products): tile M 128 (one 64-row
// wgmma per warpgroup), N 64 or 128 (3 x 64 accumulator registers at most), K 32 (one 128-byte
// swizzle row of fp32: the small-part buffers double the main loop's shared memory). It runs the
// persistent scheduler only: one output tile a work unit, no split-K or stream-K fix-up.
void rule_f32x3w_tile(Ctx& c, const GemmKnobs& k) {
  if (k.precision != Precision::f32x3w || !k.tile) return;
  std::string list;
  for (const auto& t : gemm_f32x3w_tiles()) {
    if (t.m == k.tile->m && t.n == k.tile->n && t.k == k.tile->k) return;
    list += (list.empty() ? "" : ", ") + str(t.m) + "x" + str(t.n) + "x" + str(t.k);
  }
  c.add("f32x3w_tile", "tile",
        "f32x3w holds three accumulators a thread and part buffers beside its stages: its tiles are " + list +
            ", not " + str(k.tile->m) + "x" + str(k.tile->n) + "x" + str(k.tile->k),
        "use tile " + list + " or auto");
}

void rule_f32x3w(Ctx& c, const GemmKnobs& k) {
  if (k.precision != Precision::f32x3w) return;
  if (k.schedule != Schedule::cooperative)
    c.add("f32x3w_schedule", "schedule", "f32x3w runs on the cooperative kernel (two consumer warpgroups share its split)",
          "use schedule cooperative or auto");
  if (k.scheduler != TileScheduler::persistent || k.split_k.value_or(1) != 1)
    c.add("f32x3w_scheduler", k.split_k.value_or(1) != 1 ? "split_k" : "scheduler",
          "f32x3w runs one output tile a work unit (the persistent scheduler): no split-K or stream-K",
          "use split_k 1 and scheduler persistent (or auto)");
}

// schedule gemv16 / gemv32: the matrix-vector kernel of runtime/gemv.cuh (FP32 FFMA, one output
// column, A's rows read along K, K in split_k chunks). The CUTLASS knobs have nothing to set in it.
void rule_gemv(Ctx& c, const GemmKnobs& k) {
  const std::string sch = std::string("schedule ") + dsl_schedule_str(k.schedule);
  if (k.precision != Precision::f32)
    c.add("gemv_precision", "precision", sch + " computes in FP32 FFMA, precision is " + precision_name(k.precision),
          "use precision f32 (or auto)");
  if (auto why = gemm_gemv_shape_refusal(c.s))
    c.add("gemv_shape", why->knob, sch + " " + why->what, "use another schedule (or auto)");
  if (k.split_k && *k.split_k > c.s.k)
    c.add("split_k_legal", "split_k", "split_k " + str(*k.split_k) + " is more chunks than K = " + str(c.s.k) +
          " has elements", "use split_k " + str(c.s.k) + " or fewer");
  const GemmKnobs& w = c.s.knobs;
  auto not_here = [&](bool set, const char* knob) {
    if (set)
      c.add("gemv_knobs", knob, std::string("knob ") + knob + " does not apply to " + sch + " (no CUTLASS kernel)",
            std::string("write ") + knob + " auto, or leave it out");
  };
  not_here(w.tile.has_value(), "tile");
  not_here(w.cluster.has_value(), "cluster");
  not_here(w.stages.has_value(), "stages");
  not_here(w.scheduler != TileScheduler::auto_, "scheduler");
  not_here(w.raster != Raster::auto_, "raster");
  not_here(w.swizzle.has_value(), "swizzle");
  not_here(w.align.has_value(), "align");
}

void run_rules(Ctx& c, const GemmKnobs& k) {
  rule_operand_dtypes(c);
  rule_precision_matches_dtype(c, k);
  if (is_gemv(k.schedule)) {
    rule_gemv(c, k);
    rule_batch(c);
    rule_epilogue(c, k);
    return;
  }
  rule_tf32_k_major(c, k);
  rule_tma_aligned(c, k);
  rule_align_legal(c, k);
  rule_tile_legal(c, k);
  rule_schedule_compatible(c, k);
  rule_cluster_legal(c, k);
  // f32x3w's own tile rule runs first here: shared memory is not worth a second message about a
  // tile its main loop does not take
  rule_f32x3w_tile(c, k);
  bool tile_ok = std::none_of(c.v.begin(), c.v.end(), [](const RuleViolation& r) {
    return r.rule == "tile_legal" || r.rule == "f32x3w_tile";
  });
  if (tile_ok) rule_fits_smem(c, k);
  rule_scheduler(c, k);
  rule_batch(c);
  rule_epilogue(c, k);
  rule_f32x3s(c, k);
  rule_f32x3w(c, k);
}

}  // namespace

std::vector<RuleViolation> gemm_rules_check(const Program& p, const GemmStage& s, const Tensor& out) {
  Ctx c{p, s, out};
  c.a = p.find_tensor(s.a.tensor);
  c.b = p.find_tensor(s.b.tensor);
  GemmKnobs k = gemm_resolve_auto(p, s, out);
  run_rules(c, k);
  return std::move(c.v);
}

std::vector<RuleViolation> gemm_rules_check_grouped(const Program& p, const GroupedGemmStage& g,
                                                    const std::vector<const Tensor*>& outs) {
  std::vector<RuleViolation> all;
  // Grouped GEMMs run one instantiation per group's problem; per-group epilogue tensors are not
  // expressible yet, so the epilogue may use acc, constants, scalars and functions only.
  for (const auto& st : g.epilogue.stmts) {
    std::vector<const Expr*> stack{st.value.get()};
    bool has_load = st.kind == EpilogueStmt::Kind::reduce;
    while (!stack.empty()) {
      const Expr* e = stack.back();
      stack.pop_back();
      if (!e) continue;
      has_load = has_load || e->kind == Expr::Kind::load;
      for (const auto& a : e->args) stack.push_back(a.get());
    }
    if (has_load) {
      all.push_back({"grouped_epilogue", "out", "a grouped GEMM epilogue cannot read tensors or reduce",
                     "use separate gemm stages, or an elementwise stage after the grouped GEMM"});
      break;
    }
  }
  for (size_t i = 0; i < g.a.size() && i < g.b.size() && i < g.mnk.size() && i < outs.size(); ++i) {
    GemmStage s;
    s.a = g.a[i];
    s.b = g.b[i];
    s.m = g.mnk[i][0];
    s.n = g.mnk[i][1];
    s.k = g.mnk[i][2];
    s.knobs = g.knobs;
    s.epilogue = g.epilogue;
    for (auto& r : gemm_rules_check(p, s, *outs[i])) {
      r.message = "group " + std::to_string(i) + ": " + r.message;
      if (std::none_of(all.begin(), all.end(), [&](const RuleViolation& x) { return x.message == r.message; }))
        all.push_back(std::move(r));
    }
  }
  return all;
}

}  // namespace ucut::dsl
