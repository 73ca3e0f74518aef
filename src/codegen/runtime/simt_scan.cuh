// The scan stage templates: inclusive/exclusive cumulative sum or product, forward or reverse,
// with an optional mask (masked-out elements contribute the identity, like cumsum(x * mask)).
//   scan_row_kernel: the scanned dimension is the last one. One block per row walks the row in
//     tiles of THREADS*ITEMS elements; each thread scans its ITEMS consecutive elements in
//     registers (loaded as VEC-wide vectors), block_exclusive_scan scans the per-thread totals,
//     and a running carry joins the tiles: one read and one write of the data.
//   Both kernels accumulate in double: a 16K-long fp32 prefix sum carries partial sums ~100x
//   larger than its elements, so fp32 accumulation (in any order) drifts past atol=1e-4 near the
//   zero crossings; double keeps our error far below the reference's own. The kernels stay
//   memory-bound (two FP64 adds per element).
//   scan_row_torch_kernel (`order torch`): PyTorch's own fp32 row-scan order (below).
//   scan_strided_kernel: the scanned dimension is not the last one ([outer, L, inner]): one
//     thread per (outer, inner) column walks L sequentially; adjacent threads read adjacent
//     columns, so every step is a coalesced load.
#pragma once

#include "simt_common.cuh"

namespace ucut_simt {

enum ScanOp : int { kCumsum, kCumprod };

struct ScanParams {
  const void* x;
  const void* mask;  // same shape as x, or null
  void* out;
  i64 rows, cols;    // row kernel: [rows, cols]
  i64 outer, len, inner;  // strided kernel: [outer, len, inner]
};

using acc_t = double;

template <int OP> struct ScanCombine {
  __device__ __forceinline__ acc_t operator()(acc_t a, acc_t b) const {
    if constexpr (OP == kCumprod) return a * b;
    else return a + b;
  }
};

template <int OP, class Tin, class Tmask, class Tout, int THREADS, int ITEMS, int VEC,
          bool EXCLUSIVE, bool REVERSE>
__global__ void __launch_bounds__(THREADS) scan_row_kernel(ScanParams p) {
  static_assert(ITEMS % VEC == 0, "items per thread must be a multiple of the vector width");
  constexpr int TILE = THREADS * ITEMS;
  constexpr acc_t ID = OP == kCumprod ? 1.0 : 0.0;
  const ScanCombine<OP> op;
  const i64 row = blockIdx.x;
  const i64 cols = p.cols;
  const Tin* x = static_cast<const Tin*>(p.x) + row * cols;
  const Tmask* mask = p.mask ? static_cast<const Tmask*>(p.mask) + row * cols : nullptr;
  Tout* out = static_cast<Tout*>(p.out) + row * cols;
  acc_t carry = ID;
  for (i64 t0 = 0; t0 < cols; t0 += TILE) {
    // logical positions t0 + threadIdx.x*ITEMS + j; reverse maps position q to column cols-1-q
    acc_t v[ITEMS];
#pragma unroll
    for (int g = 0; g < ITEMS / VEC; ++g) {
      const i64 q = t0 + (i64)threadIdx.x * ITEMS + g * VEC;  // first logical position of the vector
      float a[VEC], m[VEC];
      if (q < cols) {
        const i64 c = REVERSE ? cols - q - VEC : q;
        load_vec_stream<Tin, VEC>(x, c, a);
        if (mask) load_vec<Tmask, VEC>(mask, c, m);
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          acc_t e = REVERSE ? a[VEC - 1 - k] : a[k];
          if (mask && (REVERSE ? m[VEC - 1 - k] : m[k]) == 0.f) e = ID;
          v[g * VEC + k] = e;
        }
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[g * VEC + k] = ID;
      }
    }
    acc_t total = ID;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) total = op(total, v[j]);
    acc_t prefix, tile_total;
    block_exclusive_scan<THREADS>(total, ID, op, prefix, tile_total);
    __syncthreads();  // the warps' totals are reused by the next tile
    acc_t run = op(carry, prefix);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const acc_t e = v[j];
      if constexpr (EXCLUSIVE) {
        v[j] = run;
        run = op(run, e);
      } else {
        run = op(run, e);
        v[j] = run;
      }
    }
    carry = op(carry, tile_total);
#pragma unroll
    for (int g = 0; g < ITEMS / VEC; ++g) {
      const i64 q = t0 + (i64)threadIdx.x * ITEMS + g * VEC;
      if (q < cols) {
        float a[VEC];
#pragma unroll
        for (int k = 0; k < VEC; ++k) a[k] = float(REVERSE ? v[g * VEC + VEC - 1 - k] : v[g * VEC + k]);
        store_vec<Tout, VEC>(out, REVERSE ? cols - q - VEC : q, a);
      }
    }
  }
}

// `order torch`: PyTorch's CUDA row scan (tensor_kernel_scan_innermost_dim with 16 x-threads),
// reproduced add for add in fp32 so the rounding is the reference's own. A row is walked in chunks
// of 32 elements (elements past the row's end are the identity); the running total is folded into
// the chunk's first element, then a Sklansky network of 5 steps: at step m every element whose
// bit m is set takes in the element just below its 2^(m+1)-aligned group's upper half,
// (i & ~(2^(m+1) - 1)) | (2^m - 1), as PyTorch's threads do through shared memory (an element
// written at step m is never read at step m, so one shuffle per step is the same). One warp a
// row, lane = position in the chunk. A reversed scan is PyTorch's scan of the flipped row;
// EXCLUSIVE (cumsum) is what PyTorch computes for cumsum(x) - x: the inclusive sum minus the
// element. fp32 only.
//
// The chain through a row is serial and a warp can keep few bytes in registers, so the row is
// streamed through shared memory instead: each warp owns a ring of STAGES segments of UNROLL
// chunks and keeps STAGES - 1 of them in flight with cp.async while it sums the oldest (run AK:
// 32 KB in flight an SM held the copy rate to 63%; run AL: loads ahead in registers cost more
// occupancy than they added bytes in flight). A segment
// is copied in its memory order (reversed rows: the segment ending where the previous began) and
// read at logical position j from j (forward) or SEG - 1 - j (reversed). VEC: 16-byte copies
// (the row and, when masked, the mask's row 16-byte aligned), else 4-byte copies and the mask
// read from global memory.
__device__ __forceinline__ void cp_async_bytes16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_bytes4(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// The first memory column of segment g (logical positions [g*SEG, (g+1)*SEG)); reversed rows are
// walked from their end, so a reversed segment's base may be negative (its columns before 0 are
// past the row's end).
template <bool REVERSE, int SEG> __device__ __forceinline__ i64 torch_segment_base(i64 g, i64 cols) {
  return REVERSE ? cols - (g + 1) * SEG : g * SEG;
}

// One segment of a row into a warp's ring slot (memory columns [base, base + SEG), those in the row).
template <int SEG, bool MASKED, bool VEC, class Tmask>
__device__ __forceinline__ void torch_scan_copy(float* rx, unsigned char* rm, const float* x, const Tmask* mask,
                                                i64 base, i64 cols, int lane) {
  if constexpr (VEC) {
#pragma unroll
    for (int i = lane; i < SEG / 4; i += 32) {
      const i64 c = base + 4 * i;
      if (c >= 0 && c < cols) cp_async_bytes16(rx + 4 * i, x + c);
    }
    if constexpr (MASKED) {
#pragma unroll
      for (int i = lane; i < SEG / 16; i += 32) {
        const i64 c = base + 16 * i;
        if (c >= 0 && c < cols) cp_async_bytes16(rm + 16 * i, mask + c);
      }
    }
  } else {
#pragma unroll
    for (int i = lane; i < SEG; i += 32) {
      const i64 c = base + i;
      if (c >= 0 && c < cols) cp_async_bytes4(rx + i, x + c);
    }
  }
}

template <int OP, class Tmask, bool MASKED, bool EXCLUSIVE, bool REVERSE, int WARPS, int UNROLL, int STAGES, bool VEC>
__global__ void __launch_bounds__(WARPS * 32) scan_row_torch_kernel(ScanParams p) {
  static_assert(STAGES >= 2, "a ring of at least two segments");
  constexpr float ID = OP == kCumprod ? 1.f : 0.f;
  constexpr int SEG = 32 * UNROLL;
  constexpr int MW = MASKED && VEC ? WARPS : 1, MSEG = MASKED && VEC ? SEG : 16;
  __shared__ __align__(16) float ring_x[WARPS][STAGES][SEG];
  __shared__ __align__(16) unsigned char ring_m[MW][STAGES][MSEG];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int src[5];  // the lane each Sklansky step reads
#pragma unroll
  for (int m = 0; m < 5; ++m) src[m] = (lane & ~((2 << m) - 1)) | ((1 << m) - 1);
  const i64 cols = p.cols;
  const i64 nseg = (cols + SEG - 1) / SEG;
  for (i64 row = (i64)blockIdx.x * WARPS + warp; row < p.rows; row += (i64)gridDim.x * WARPS) {
    const float* x = static_cast<const float*>(p.x) + row * cols;
    const Tmask* mask = MASKED ? static_cast<const Tmask*>(p.mask) + row * cols : nullptr;
    float* out = static_cast<float*>(p.out) + row * cols;
    // an empty group past the row's end keeps the count of groups in flight uniform
    auto issue = [&](i64 g) {
      if (g < nseg) {
        const int slot = static_cast<int>(g % STAGES);
        torch_scan_copy<SEG, MASKED, VEC>(ring_x[warp][slot], ring_m[MASKED && VEC ? warp : 0][slot], x, mask,
                                          torch_segment_base<REVERSE, SEG>(g, cols), cols, lane);
      }
      cp_async_commit();
    };
    __syncwarp();  // the previous row's reads of the ring are done
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) issue(s);
    float total = ID;
    for (i64 g = 0; g < nseg; ++g) {
      issue(g + STAGES - 1);
      cp_async_wait<STAGES - 1>();  // this lane's copies of segment g have landed
      __syncwarp();                 // and every other lane's
      const int slot = static_cast<int>(g % STAGES);
      const i64 base = torch_segment_base<REVERSE, SEG>(g, cols);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int j = u * 32 + lane;
        const int at = REVERSE ? SEG - 1 - j : j;  // offset of logical position j in the segment
        const i64 q = g * SEG + j;
        float v = ID;
        if (q < cols) {
          v = ring_x[warp][slot][at];
          if constexpr (MASKED) {
            const Tmask mv = VEC ? *reinterpret_cast<const Tmask*>(&ring_m[warp][slot][at]) : mask[base + at];
            if (to_f<Tmask>(mv) == 0.f) v = ID;
          }
        }
        float e = v;
        if (lane == 0) e = OP == kCumprod ? e * total : e + total;
#pragma unroll
        for (int m = 0; m < 5; ++m) {
          const float w = __shfl_sync(0xffffffffu, e, src[m]);
          if (lane & (1 << m)) e = OP == kCumprod ? e * w : e + w;
        }
        total = __shfl_sync(0xffffffffu, e, 31);
        if (q < cols) out[base + at] = EXCLUSIVE ? e - v : e;
      }
      __syncwarp();  // every lane has read the slot before the next issue refills it
    }
    cp_async_wait<0>();
  }
}

template <int OP, class Tin, class Tmask, class Tout, bool EXCLUSIVE, bool REVERSE>
__global__ void __launch_bounds__(256) scan_strided_kernel(ScanParams p) {
  const i64 idx = (i64)blockIdx.x * 256 + threadIdx.x;
  if (idx >= p.outer * p.inner) return;
  const i64 o = idx / p.inner, i = idx - o * p.inner;
  const i64 base = o * p.len * p.inner + i;
  const Tin* x = static_cast<const Tin*>(p.x);
  const Tmask* mask = static_cast<const Tmask*>(p.mask);
  Tout* out = static_cast<Tout*>(p.out);
  const ScanCombine<OP> op;
  acc_t run = OP == kCumprod ? 1.0 : 0.0;
  for (i64 l = 0; l < p.len; ++l) {
    const i64 off = base + (REVERSE ? p.len - 1 - l : l) * p.inner;
    acc_t e = to_f<Tin>(x[off]);
    if (mask && to_f<Tmask>(mask[off]) == 0.f) e = OP == kCumprod ? 1.0 : 0.0;
    if constexpr (EXCLUSIVE) {
      out[off] = from_f<Tout>(float(run));
      run = op(run, e);
    } else {
      run = op(run, e);
      out[off] = from_f<Tout>(float(run));
    }
  }
}

}  // namespace ucut_simt
