#include "dsl/simt_plan.h"

#include "dsl/kinds/kinds.h"

#include <algorithm>
#include <string>

#include "dsl/names.h"

namespace ucut::dsl {

int simt_vector_width(int bytes, int64_t inner, int cap) {
  int v = 16 / bytes;
  if (cap > 0 && cap < v) v = cap;
  while (v > 1 && inner % v != 0) v /= 2;
  return v < 1 ? 1 : v;
}

int simt_next_pow2(int64_t v) {
  int p = 1;
  while (p < v && p < (1 << 30)) p *= 2;
  return p;
}

namespace {

bool pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// The threads knob if set (a multiple of 32 in [32, 1024]), else `auto_threads`.
Result<int> pick_threads(const SimtKnobs& knobs, int auto_threads) {
  if (!knobs.threads) return auto_threads;
  const int t = *knobs.threads;
  if (t < 32 || t > 1024 || t % 32 != 0)
    return make_error(ErrorCode::invalid_input,
                      "threads " + std::to_string(t) + " is not a multiple of 32 in [32, 1024]",
                      "use 128, 256, 512 or 1024, or auto");
  return t;
}

Result<int> pick_vec(const SimtKnobs& knobs, int bytes, int64_t inner) {
  int best = simt_vector_width(bytes, inner);
  if (!knobs.vector_width) return best;
  int v = *knobs.vector_width;
  if (!pow2(v))
    return make_error(ErrorCode::invalid_input, "vector width " + std::to_string(v) + " is not a power of two",
                      "use 1, 2, 4, 8 or 16, or auto");
  if (v * bytes > 16)
    return make_error(ErrorCode::invalid_input,
                      "vector width " + std::to_string(v) + " of the stage's widest (" + std::to_string(bytes) +
                          "-byte) elements is " + std::to_string(v * bytes) + " bytes; one access moves at most 16",
                      "use at most " + std::to_string(16 / bytes) + ", or auto");
  if (inner % v != 0)
    return make_error(ErrorCode::invalid_input,
                      "vector width " + std::to_string(v) + " does not divide the innermost extent " +
                          std::to_string(inner),
                      "use " + std::to_string(best) + " or auto");
  return v;
}

// items_per_thread where it sets how many loads a thread issues at once (column reductions:
// reduced rows; elementwise: vectors): 1, 2, 4, 8 or 16.
Result<int> pick_unroll(int u, const char* what, const char* hint) {
  if (!pow2(u) || u > 16)
    return make_error(ErrorCode::invalid_input,
                      "items per thread " + std::to_string(u) + " (" + what + " a thread loads at once) is not "
                      "1, 2, 4, 8 or 16",
                      hint);
  return u;
}

}  // namespace

Result<RowPlan> simt_plan_rowwise(int64_t rows, int64_t cols, int in_bytes,
                                  const SimtKnobs& knobs, bool cluster_ok) {
  (void)rows;
  RowPlan p;
  auto vec = pick_vec(knobs, in_bytes, cols);
  if (!vec) return vec.error();
  p.vec = *vec;
  int64_t nv = cols / p.vec;
  if (auto th = pick_threads(knobs, 0); !th) return th.error();
  if (knobs.passes && (*knobs.passes < 1 || *knobs.passes > 2))
    return make_error(ErrorCode::invalid_input, "passes must be 1 or 2", "use 1, 2 or auto");
  // the cluster: a row split across blocks (block per row, cached in registers)
  if (knobs.cluster) {
    const int c = *knobs.cluster;
    if (!cluster_ok && c != 1)
      return make_error(ErrorCode::invalid_input, "cluster applies to one-input rowwise stages and column reductions only",
                        "remove it");
    if (c < 1 || c > 16 || (c & (c - 1)) != 0)
      return make_error(ErrorCode::invalid_input, "cluster " + std::to_string(c) + " is not 1, 2, 4, 8 or 16",
                        "use 1, 2, 4, 8, 16 or auto");
    if (c > 1 && knobs.rows_per_block && *knobs.rows_per_block != 1)
      return make_error(ErrorCode::invalid_input,
                        "cluster " + std::to_string(c) + " splits one row across blocks, so a block has "
                        "one row, not " + std::to_string(*knobs.rows_per_block),
                        "use rows_per_block 1 or auto, or cluster 1");
    if (c > 1 && knobs.passes && *knobs.passes == 2)
      return make_error(ErrorCode::invalid_input,
                        "cluster " + std::to_string(c) + " splits a row cached in registers; passes 2 "
                        "streams it from memory",
                        "use passes 1 or auto, or cluster 1");
    // parts of ceil(nv / c) whole vectors, the last one shorter where c does not divide the row
    // (a row of 65,535 floats: scalar vectors, parts of 16,384 in a cluster of 4); every block
    // must get some of it
    if (c > 1 && (c - 1) * ((nv + c - 1) / c) >= nv)
      return make_error(ErrorCode::invalid_input,
                        "cluster " + std::to_string(c) + " leaves blocks without a part of the row of " +
                            std::to_string(cols) + " elements (" + std::to_string(nv) + " " +
                            std::to_string(p.vec) + "-element vectors, " + std::to_string((nv + c - 1) / c) +
                            " a block)",
                        "use a smaller cluster, or auto");
    p.cluster = c;
  } else if (cluster_ok && !knobs.threads && !knobs.rows_per_block && !knobs.items_per_thread &&
             !(knobs.passes && *knobs.passes == 2) && nv > kClusterRowVectors) {
    // auto: rows longer than one 512-thread block caches go to the smallest cluster of at most 8
    // whose parts are at most 2048 vectors (128 threads x 16); else a cluster of 8 with parts of
    // up to 8192 (512 threads x 16), so rows of up to 65536 vectors stay in registers. Those
    // long parts move 8 bytes an access (twice the vectors, 512 threads): H200, 128256-entry
    // f32 softmax rows, 512 threads x 2-wide 73% of copy bandwidth, 256 x 4-wide 65%, 512 x
    // 4-wide 68-69%, clusters of 16 x 128 x 4-wide 57% (docs/benchmarks.md, runs M and N).
    for (int c = 2; c <= 8 && p.cluster == 1; c *= 2)
      if (nv % c == 0 && nv / c <= 2048) p.cluster = c;
    if (p.cluster == 1 && nv % 8 == 0 && nv / 8 <= 1024 * 8) {
      p.cluster = 8;
      const int v8 = std::max(1, 8 / in_bytes);
      if (!knobs.vector_width && p.vec > v8 && cols % (8LL * v8) == 0) {
        p.vec = v8;
        nv = cols / p.vec;
      }
    }
  }
  const int64_t nvb = (nv + p.cluster - 1) / p.cluster;  // vectors of one block's part of a row (the longest)
  if (knobs.rows_per_block) {
    int r = *knobs.rows_per_block;
    int t = knobs.threads ? *knobs.threads : std::max(32, std::min(1024, r * 32));
    if (!simt_row_group_ok(t, r))
      return make_error(ErrorCode::invalid_input,
                        "rows per block " + std::to_string(r) + " does not split " +
                            std::to_string(t) + " threads into a power-of-two group of at most 32 lanes "
                            "(or 1 row per block)",
                        "use 1 (block per row) or threads/32 (warp per row)");
    p.threads = t;
    p.group = t / r;
  } else if (knobs.threads) {
    p.threads = *knobs.threads;
    p.group = p.cluster == 1 && nv <= 128 ? std::min(32, std::max(1, simt_next_pow2((nv + 3) / 4)))
                                          : p.threads;
  } else if (p.cluster == 1 && nv <= 128) {
    p.threads = 256;
    p.group = std::min(32, std::max(1, simt_next_pow2((nv + 3) / 4)));
  } else if (p.cluster > 1 && !knobs.cluster) {
    // an automatic cluster's parts: 16 vectors a thread in 128 to 512 threads (H200, 32 Ki f32
    // log_softmax rows in clusters of 4: 128 threads x 16 vectors 85.0% of copy bandwidth,
    // 256 x 8 83.7%, 512 x 4 70%; docs/benchmarks.md run H)
    p.threads = std::clamp(simt_next_pow2((nvb + 15) / 16), 128, 512);
    p.group = p.threads;
  } else {
    p.threads = std::clamp(simt_next_pow2((nvb + 7) / 8), 128, 1024);
    p.group = p.threads;
  }
  const int64_t need = (nvb + p.group - 1) / p.group;  // vectors per thread to cache the row
  const bool fits = need * p.vec <= 32 || (need * p.vec <= 64 && p.threads <= 512);
  bool cached = fits;
  if (knobs.passes) {
    if (*knobs.passes == 1 && !fits)
      return make_error(ErrorCode::invalid_input,
                        "passes 1 needs the row of " + std::to_string(cols) +
                            " elements in registers, more than " +
                            std::to_string(p.group * p.cluster) + " threads can hold",
                        p.cluster == 1 && cluster_ok ? "use passes 2, a cluster, or auto"
                                                     : "use passes 2 or auto");
    cached = *knobs.passes == 1;
  }
  if (p.cluster > 1 && !fits)
    return make_error(ErrorCode::invalid_input,
                      "cluster " + std::to_string(p.cluster) + " leaves parts of " +
                          std::to_string(nvb * p.vec) + " elements, more than " + std::to_string(p.group) +
                          " threads can hold in registers",
                      "use a larger cluster or more threads, or auto");
  p.cached = cached;
  if (knobs.items_per_thread) {
    int it = *knobs.items_per_thread;
    if (it < 1 || it > 64)
      return make_error(ErrorCode::invalid_input, "items per thread must be in [1, 64]", "or auto");
    if (cached && it < need)
      return make_error(ErrorCode::invalid_input,
                        "items per thread " + std::to_string(it) + " cannot cache a row of " +
                            std::to_string(nvb * p.vec) + " elements (needs " + std::to_string(need) + ")",
                        "use at least " + std::to_string(need) + ", passes 2, or auto");
    p.items = it;
  } else {
    p.items = cached ? static_cast<int>(std::max<int64_t>(1, need)) : 4;
  }
  if (!knobs.threads && !knobs.rows_per_block && !cached) {
    p.threads = 1024;
    p.group = 1024;
  }
  return p;
}

ReduceGeometry simt_reduce_geometry(const std::vector<int64_t>& shape, const std::vector<int>& dims) {
  ReduceGeometry g;
  const int rank = static_cast<int>(shape.size());
  std::vector<ReduceGroup> rev;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const int64_t e = shape[static_cast<size_t>(i)];
    const bool red = dims.empty() || std::find(dims.begin(), dims.end(), i) != dims.end();
    if (e != 1) {
      if (!rev.empty() && rev.back().reduced == red) rev.back().ext *= e;
      else rev.push_back(ReduceGroup{e, stride, red});
    }
    stride *= e;
  }
  g.groups.assign(rev.rbegin(), rev.rend());
  for (const auto& gr : g.groups) (gr.reduced ? g.r_total : g.n_out) *= gr.ext;
  if (std::none_of(g.groups.begin(), g.groups.end(), [](const ReduceGroup& x) { return x.reduced; }))
    g.groups.push_back(ReduceGroup{1, 1, true});  // nothing to reduce: a copy through the inner kernel
  g.inner = g.groups.back().reduced;
  g.run = g.groups.back().ext;
  return g;
}

int simt_reduce_state_bytes(const Stage& st) {
  const auto* r = std::get_if<ReduceStage>(&st.body);
  if (!r) return 4;
  if (dsl_reduce_writes_indices(r->op, st.outputs.size())) return 16;
  return r->op == "sum" || r->op == "mean" || r->op == "logsumexp" ? 8 : 4;
}

Result<ReducePlan> simt_plan_reduce(bool inner, int64_t inner_run, int64_t n_out,
                                    int64_t r_total, int in_bytes, const SimtKnobs& knobs,
                                    int state_bytes) {
  ReducePlan p;
  auto vec = pick_vec(knobs, in_bytes, inner_run);
  if (!vec) return vec.error();
  p.vec = *vec;
  // Column (outer) reductions: 8-byte accesses (two fp32) in 512 threads, two blocks an SM.
  // H200, 16 Ki x 16 Ki fp32 (docs/benchmarks.md, run Q): column max 0.2515-0.2522 ms against
  // 0.2609-0.2617 with 16-byte accesses in 1024 threads (the plan before), column sum (Kahan)
  // 0.2538-0.2544 against 0.2608-0.2614; 16-byte accesses in 512 threads 0.2659.
  if (!inner && !knobs.vector_width) p.vec = std::max(1, std::min(p.vec, 8 / std::max(1, in_bytes)));
  auto th = pick_threads(knobs, inner ? (r_total >= 4096 ? 512 : 128) : 512);
  if (!th) return th.error();
  p.threads = *th;
  // the column kernel combines its rows of threads through shared memory: one state per thread
  // and vector element, and a cluster's partials (48 KB of static shared memory at most; 1024
  // threads x 8-wide f16 sums in double would need 66 KB and failed to compile)
  if (!inner) {
    auto smem = [&](int v) { return (int64_t(p.threads / 32) * (32 * v + 1) + 32 * v) * state_bytes; };
    if (!knobs.vector_width)
      while (p.vec > 1 && smem(p.vec) > 48 * 1024) p.vec /= 2;
    if (smem(p.vec) > 48 * 1024)
      return make_error(ErrorCode::invalid_input,
                        std::to_string(p.threads) + " threads x " + std::to_string(p.vec) +
                            "-wide vectors of a column reduction need " + std::to_string(smem(p.vec) / 1024) +
                            " KB of shared memory for their " + std::to_string(state_bytes) +
                            "-byte states, more than 48",
                        "use fewer threads or a narrower vector_width, or auto");
  }
  // column kernel: 8 reduced rows in flight a thread (H200, 16 Ki x 16 Ki fp32 column sum/max at
  // 1024 threads: 8 rows 95.4-95.7% of copy bandwidth, 4 rows 94.0-94.5%, 2 rows 93.3%; run H)
  if (!inner) p.unroll = 8;
  if (knobs.items_per_thread) {
    const int u = *knobs.items_per_thread;
    if (inner)
      return make_error(ErrorCode::invalid_input,
                        "items_per_thread applies to column reductions (the innermost dimension kept); "
                        "this stage reduces the innermost dimension",
                        "remove it or set it to auto");
    auto un = pick_unroll(u, "reduced rows", "use 4 or 8, or auto");
    if (!un) return un.error();
    p.unroll = *un;
  }
  if (knobs.cluster && *knobs.cluster != 1) {
    // a column reduction's reduced range split across the blocks of a thread-block cluster,
    // combined through distributed shared memory in rank order: no workspace, no second kernel
    const int c = *knobs.cluster;
    if (inner)
      return make_error(ErrorCode::invalid_input,
                        "cluster applies to column reductions (the innermost dimension kept); this stage "
                        "reduces the innermost dimension",
                        "remove it or set it to auto");
    if (c < 1 || c > 8 || (c & (c - 1)) != 0)
      return make_error(ErrorCode::invalid_input,
                        "cluster " + std::to_string(c) + " is not 1, 2, 4 or 8 (a column reduction's cluster)",
                        "use 1, 2, 4, 8 or auto");
    if (32 * p.vec % c != 0)
      return make_error(ErrorCode::invalid_input,
                        "cluster " + std::to_string(c) + " does not split a block's " + std::to_string(32 * p.vec) +
                            " columns evenly",
                        "use a smaller cluster or a wider vector");
    p.cluster = c;
    p.splits = c;
    p.r_chunk = std::max<int64_t>((r_total + c - 1) / c, 1);
    return p;
  }
  // blocks without splitting
  const int64_t tiles = inner ? n_out
                              : n_out / inner_run * ((inner_run + 32 * p.vec - 1) / (32 * p.vec));
  // Column reductions: this split count (16 blocks per SM) only bounds the workspace; the
  // launcher picks the count that fills one wave of resident blocks at run time
  // (ucut_simt::one_wave_splits). Fixed splits left a partly full last wave: 640 blocks of 1024
  // threads ran 2.4 waves (docs/benchmarks.md, runs C-E).
  const int64_t want_blocks = (inner ? 4LL : 16LL) * kSimtSmCount;
  // at least 32 Ki elements a split: the inner kernel counts elements, the outer kernel counts
  // reduced rows of 32*VEC elements each
  const int64_t min_chunk = inner ? 32 * 1024 : std::max<int64_t>(64, 32 * 1024 / (32 * p.vec));
  int64_t splits = 1;
  if (tiles < want_blocks && r_total >= 2 * min_chunk)
    splits = std::min<int64_t>((want_blocks + tiles - 1) / tiles, r_total / min_chunk);
  splits = std::clamp<int64_t>(splits, 1, 65535);
  int64_t chunk = (r_total + splits - 1) / splits;
  if (inner) chunk = (chunk + p.vec - 1) / p.vec * p.vec;  // vectors never straddle splits
  splits = (r_total + chunk - 1) / std::max<int64_t>(chunk, 1);
  p.splits = static_cast<int>(std::max<int64_t>(splits, 1));
  p.r_chunk = std::max<int64_t>(chunk, 1);
  return p;
}

int simt_torch_scan_log_threads_x(int64_t rows, int64_t cols) {
  int64_t lx = 0, ly = 0;
  while ((int64_t{1} << lx) < cols) ++lx;
  while ((int64_t{1} << ly) < rows) ++ly;
  // 9: log2 of its 512 threads a block; signed, as ATen's own test pins it (4097 rows of 8: 4)
  const int64_t l = (9 + lx - ly) / 2;
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(4, l), 9));
}

std::string simt_torch_scan_refusal(const ScanStage& sc, const Tensor& in, const Tensor& out) {
  if (sc.dim != static_cast<int>(in.shape.size()) - 1) return "it scans the last dimension only";
  if (sc.exclusive && sc.op != "cumsum")
    return "PyTorch has no exclusive " + sc.op + "; only cumsum(x) - x (an exclusive cumsum) has a PyTorch order";
  if (in.dtype != DType::f32 || out.dtype != DType::f32) return "it is PyTorch's fp32 order: input and output must be f32";
  return "";
}

Result<ScanPlan> simt_plan_scan(int64_t rows, int64_t cols, int in_bytes,
                                const SimtKnobs& knobs) {
  ScanPlan p;
  if (knobs.order == ScanOrder::torch) {
    const int l = simt_torch_scan_log_threads_x(rows, cols);
    if (l != 4)
      return make_error(ErrorCode::unsupported,
                        "order torch: PyTorch scans " + std::to_string(rows) + " rows of " + std::to_string(cols) +
                            " in chunks of " + std::to_string(2 << l) + " elements; only chunks of 32 are emulated",
                        "use order auto");
    p.torch = true;
    p.vec = 1;
    const bool aligned = cols % 16 == 0;  // else 4-byte copies: more warps (run AO)
    p.threads = aligned ? 128 : 256;
    p.items = aligned ? 16 : 8;
    if (knobs.threads) {
      if (*knobs.threads % 32 != 0 || *knobs.threads < 32 || *knobs.threads > 1024)
        return make_error(ErrorCode::invalid_input,
                          "order torch runs a warp a row: threads " + std::to_string(*knobs.threads) +
                              " is not a whole number of warps (32..1024)",
                          "use threads 128 or auto");
      p.threads = *knobs.threads;
    }
    if (knobs.items_per_thread) {
      if (*knobs.items_per_thread < 1 || *knobs.items_per_thread > 16)
        return make_error(ErrorCode::invalid_input,
                          "order torch: items_per_thread " + std::to_string(*knobs.items_per_thread) +
                              " is the chunks of 32 in each segment of a warp's ring, 1..16",
                          "use items_per_thread 16 or auto");
      p.items = *knobs.items_per_thread;
    }
    // each warp's ring of segments (x, plus a quarter for a mask) stays within 48 KB a block
    const int per_stage = p.threads * p.items * 4;
    p.stages = std::min(4, 36 * 1024 / per_stage);
    if (p.stages < 2)
      return make_error(ErrorCode::invalid_input,
                        "order torch: threads " + std::to_string(p.threads) + " x items_per_thread " +
                            std::to_string(p.items) + " needs " + std::to_string(2 * per_stage / 1024) +
                            " KB of shared memory for two segments a warp; at most 36 KB",
                        "use threads 128 with items_per_thread 16, or auto");
    return p;
  }
  auto vec = pick_vec(knobs, in_bytes, cols);
  if (!vec) return vec.error();
  p.vec = *vec;
  auto th = pick_threads(knobs, cols < 2048 ? 128 : 256);
  if (!th) return th.error();
  p.threads = *th;
  // enough items to hold a row of up to 16*threads elements in one tile (fewer carries and
  // barriers), between one and four vectors a thread
  const int64_t per_thread = (cols + p.threads - 1) / p.threads;
  p.items = static_cast<int>(std::clamp<int64_t>((per_thread + p.vec - 1) / p.vec, 1, 4)) * p.vec;
  if (knobs.items_per_thread) {
    int it = *knobs.items_per_thread;
    if (it < p.vec || it % p.vec != 0 || it > 64)
      return make_error(ErrorCode::invalid_input,
                        "items per thread " + std::to_string(it) +
                            " must be a multiple of the vector width " + std::to_string(p.vec) +
                            " and at most 64",
                        "use " + std::to_string(2 * p.vec) + " or auto");
    p.items = it;
  }
  return p;
}

int simt_elementwise_vector_bytes(const ElementwiseStage& es, int64_t last,
                                  const std::function<const Tensor*(const std::string&)>& find) {
  int bytes = 1;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.kind == Expr::Kind::load) {
      const Tensor* t = find(e.name);
      if (t && (e.mode == LoadMode::col ||
                (e.mode == LoadMode::full && !t->shape.empty() && t->shape.back() == last && last != 1)))
        bytes = std::max(bytes, dtype_bytes(t->dtype));
    }
    for (const auto& a : e.args)
      if (a) walk(*a);
  };
  for (const auto& st : es.body.stmts) {
    if (st.value) walk(*st.value);
    if (st.kind == EpilogueStmt::Kind::store)
      if (const Tensor* t = find(st.name)) bytes = std::max(bytes, dtype_bytes(t->dtype));
  }
  return bytes;
}

MergedView simt_merge_view(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  MergedView m;
  for (size_t d = 0; d < shape.size() && d < strides.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!m.shape.empty() && m.strides.back() == strides[d] * shape[d]) {
      m.shape.back() *= shape[d];
      m.strides.back() = strides[d];
    } else {
      m.shape.push_back(shape[d]);
      m.strides.push_back(strides[d]);
    }
  }
  return m;
}

int64_t PermuteTiling::c_extent() const {
  int64_t n = 1;
  for (size_t d = j + 1; d < shape.size(); ++d) n *= shape[d];
  return n;
}

std::string PermuteTiling::name() const {
  return "elementwise_permute_" + std::to_string(tj) + "x" + std::to_string(tc);
}

namespace {

int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

bool unit(int64_t s) { return s == 1 || s == -1; }

}  // namespace

std::optional<PermuteTiling> simt_permute_tiling(const ElementwiseStage& es, const Tensor& out,
                                                 const std::function<const Tensor*(const std::string&)>& find) {
  std::optional<PermuteTiling> found;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (found) return;
    if (e.kind == Expr::Kind::load && e.mode == LoadMode::full) {
      const Tensor* t = find(e.name);
      // a view of the output's shape, or of its element count read in the output's element order
      if (t && t->role == TensorRole::view && t->numel() == out.numel() && t->view_strides.size() == t->shape.size()) {
        const MergedView m = simt_merge_view(t->shape, t->view_strides);
        if (m.shape.size() >= 2 && m.strides.back() != 0 && !unit(m.strides.back())) {
          for (size_t j = 0; j + 1 < m.shape.size() && !found; ++j) {
            if (!unit(m.strides[j])) continue;
            PermuteTiling pt{m.shape, j, 0, 0};
            const int64_t ec = pt.c_extent();
            const int64_t pj = pow2_ceil(m.shape[j]), pc = pow2_ceil(ec);
            pt.tj = std::min(pj, 1024 / std::min<int64_t>(pc, 32));
            pt.tc = std::min(pc, 1024 / pt.tj);
            int64_t blocks = ((m.shape[j] + pt.tj - 1) / pt.tj) * ((ec + pt.tc - 1) / pt.tc);
            for (size_t d = 0; d < j; ++d) blocks *= m.shape[d];
            // a tile of fewer used elements than a block has threads (small matrices under many
            // outer positions: [1e6, 3, 3] transposed) would leave most threads idle: the vector form
            const int64_t used = std::min(m.shape[j], pt.tj) * std::min(ec, pt.tc);
            if (blocks < (int64_t{1} << 31) && used >= kPermuteMinTile) found = pt;
            return;
          }
        }
      }
    }
    for (const auto& a : e.args)
      if (a) walk(*a);
  };
  for (const auto& st : es.body.stmts)
    if (st.value) walk(*st.value);
  return found;
}

std::optional<std::vector<int64_t>> simt_permute_strides(const Tensor& t, const Tensor& out, const PermuteTiling& pt) {
  if (t.role != TensorRole::view || t.numel() != out.numel() || t.view_strides.size() != t.shape.size())
    return std::nullopt;
  MergedView m = simt_merge_view(t.shape, t.view_strides);
  if (m.shape != pt.shape || !unit(m.strides[pt.j])) return std::nullopt;
  return m.strides;
}

bool simt_broadcasts_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
  if (shape.size() > out.size()) return false;
  for (size_t k = 0; k < shape.size(); ++k) {
    const int64_t te = shape[shape.size() - 1 - k];
    if (te != 1 && te != out[out.size() - 1 - k]) return false;
  }
  return true;
}

Result<ElementwisePlan> simt_plan_elementwise(int64_t numel, int64_t last_dim, int out_bytes,
                                              const SimtKnobs& knobs) {
  ElementwisePlan p;
  auto vec = pick_vec(knobs, out_bytes, last_dim);
  if (!vec) return vec.error();
  p.vec = *vec;
  // 128 threads; 4-byte elements move 8 bytes an access (two fp32), narrower ones 16. H200,
  // 1 GiB fp32 activations (run U's search): 128 threads x 2-wide 0.5081-0.5091 ms = 0.998-0.999x
  // eager (relu, gelu, sigmoid); 256 x 4-wide (the plan before) 0.5228-0.5304 ms.
  if (!knobs.vector_width && out_bytes >= 4) p.vec = std::max(1, std::min(p.vec, 8 / out_bytes));
  auto th = pick_threads(knobs, 128);
  if (!th) return th.error();
  p.threads = *th;
  if (knobs.items_per_thread) {
    auto un = pick_unroll(*knobs.items_per_thread, "vectors", "use 4, or auto");
    if (!un) return un.error();
    p.unroll = *un;
  }
  // One block per threads * unroll consecutive vectors, each thread's loads issued together: a
  // contiguous chunk per block, as PyTorch's vectorized elementwise kernel does. (The grid-stride
  // loop over at most 16 blocks an SM that this replaces ran 0.93-0.95x eager, run S.)
  const int64_t vectors = numel / p.vec;
  const int64_t per_block = static_cast<int64_t>(p.threads) * p.unroll;
  p.blocks = std::clamp<int64_t>((vectors + per_block - 1) / per_block, 1, (int64_t{1} << 31) - 1);
  return p;
}

std::optional<Error> simt_plan_refusal(const Stage& st,
                                       const std::function<const Tensor*(const std::string&)>& find) {
  return dsl_kind(dsl_stage_kind_of(st)).plan_refusal(st, find);
}

}  // namespace ucut::dsl
