// Single-precision matrix products with AVX-512: a packed, register-blocked micro-kernel in the
// style of GotoBLAS/BLIS, for CPUs whose AVX-512 units OpenBLAS's chosen kernels leave idle (see
// docs/TUNING.md, "Matrix products"). Header-only like intrinsics.h: the Clang importer compiles
// it into its Swift callers. Every function carries its own target attribute, so the rest of the
// build keeps its baseline; callers check the CPU's flags before calling (`te_sgemm_avx512`).
//
// C = A·B (or C += A·B) for row-major C, with A and B each row-major or transposed. One call is
// single-threaded; the caller splits rows or columns across its workers.
#ifndef TENSORENGINE_PRODUCTS_H
#define TENSORENGINE_PRODUCTS_H

#include <stdlib.h>
#include <string.h>

#define TE_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

/// Sixteen floats (one zmm register), and the same type at float alignment for unaligned access.
typedef float te_float16 __attribute__((ext_vector_type(16)));
typedef float te_float16u __attribute__((ext_vector_type(16), aligned(4)));
/// Sixteen floats as the AVX-512 builtins (masked loads and stores, maxima) take them.
typedef float te_v16sf __attribute__((vector_size(64)));

/// Rows of A per micro-tile (at most), columns of B per micro-tile, and the cache blocks: a packed
/// B panel of TE_KC × 32 floats (32 KiB) stays in L1 while every A tile of a TE_MC-row block
/// (96 KiB) streams past it from L2.
enum { TE_MR = 12, TE_NR = 32, TE_KC = 256, TE_MC = 96 };

/// How many steps of k ahead the first tile of a block fetches B's rows: a weight multiplied by few
/// rows (a model at batch 1) streams from L3 once, and the hardware's prefetchers alone left the
/// kernel waiting on it.
enum { TE_PREFETCH_STEPS = 32 };

/// How many steps of k ahead the first panel over a block of A packed whole (a model's filters,
/// read once per run from beyond L2) fetches A's tiles: the tiles over the panels after it find
/// A in L2. A 3 × 3 convolution of 512 channels on a 7 × 7 plane, whose filters (9.4 MB) feed two
/// panels each, ran 26% slower with them cold than cached, and 3% with this.
enum { TE_PREFETCH_A_STEPS = 64 };

/// The steps of k per block: at most TE_KC, the blocks of near-equal depth (784: 4 × 196, not
/// 3 × 256 + 16, whose last block would load and store C for 16 steps).
static inline long te_depth_block(long k) {
    const long blocks = (k + TE_KC - 1) / TE_KC;
    return blocks > 0 ? (k + blocks - 1) / blocks : 1;
}

/// `lower` where v ≤ lower, then `upper` where that is ≥ upper, lane by lane: selects by bit
/// masks, so a NaN (whose comparisons are false) passes both bounds unchanged.
static inline __attribute__((always_inline)) TE_AVX512 te_float16
te_bounded16(te_float16 v, te_float16 lower, te_float16 upper) {
    typedef int te_int16 __attribute__((ext_vector_type(16)));
    const te_int16 below = v <= lower, raised = (below & (te_int16)lower) | (~below & (te_int16)v);
    const te_int16 above = (te_float16)raised >= upper;
    return (te_float16)((above & (te_int16)upper) | (~above & raised));
}

/// Lanes `mask` of `sum` (one half of a tile's row) stored at `base` (lane 0's address; lanes
/// outside the mask are neither read nor written): added to what is there when `accumulate`,
/// else to `bias` and the residual's lanes at `residual` (NULL: none); then bounded by `bounds`
/// (NULL: none) as ``te_bounded16`` bounds.
static inline __attribute__((always_inline)) TE_AVX512 void
te_store_lanes(float *base, unsigned short mask, te_float16 sum, int accumulate, float bias, const float *residual,
               const float *bounds) {
    const te_v16sf zero = (te_v16sf)(te_float16)0;
    te_float16 v;
    if (accumulate) {
        v = (te_float16)__builtin_ia32_loadups512_mask(base, zero, mask) + sum;
    } else {
        v = sum + bias;
        if (residual) v += (te_float16)__builtin_ia32_loadups512_mask(residual, zero, mask);
    }
    if (bounds) v = te_bounded16(v, bounds[0], bounds[1]);
    __builtin_ia32_storeups512_mask(base, (te_v16sf)v, mask);
}

/// A tile's rows stored where an implicit convolution's flat grid of positions puts them: column
/// q (the tile's first is `first`) is output position (q / rowLength, q % rowLength), stored at
/// c + (q / rowLength)·outWidth + q % rowLength when q % rowLength < outWidth and dropped past
/// it (those positions' windows run into the next row). Each run of columns inside one output
/// row goes out by masked stores, with the epilogue of ``te_store_lanes``: no scratch grid is
/// written and copied out again.
static inline __attribute__((always_inline)) TE_AVX512 void
te_tile_scatter(const int rows, te_float16 sum[TE_MR][2], float *c, long ldc, long columns, long first,
                long rowLength, long outWidth, int accumulate, const float *bias, const float *residual,
                const float *bounds) {
    long lane = 0;
    while (lane < columns) {
        const long q = first + lane, oh = q / rowLength, ow = q % rowLength;
        if (ow >= outWidth) {
            lane += rowLength - ow;
            continue;
        }
        const long end = lane + (outWidth - ow < columns - lane ? outWidth - ow : columns - lane);
        // Lane l of the run goes to c + at + (l - lane).
        const long at = oh * outWidth + ow;
#pragma clang loop unroll(full)
        for (int half = 0; half < 2; half++) {
            const long low = lane > 16 * half ? lane : 16 * half, high = end < 16 * half + 16 ? end : 16 * half + 16;
            if (low >= high) continue;
            const unsigned short mask = (unsigned short)(((1u << (high - low)) - 1) << (low - 16 * half));
            const long offset = at + 16 * half - lane;
#pragma clang loop unroll(full)
            for (int r = 0; r < rows; r++) {
                te_store_lanes(c + r * ldc + offset, mask, sum[r][half], accumulate, bias ? bias[r] : 0,
                               residual ? residual + r * ldc + offset : NULL, bounds);
            }
        }
        lane = end;
    }
}

/// The micro-kernel: a tile of `rows` ≤ TE_MR rows and 32 columns, over `depth` steps of k.
/// `a` is packed as [depth][rows]; row k of B starts `bStride` floats after row k-1 (32 for a
/// packed panel, ldb for B read in place), or, with `rowOffsets`, at b + rowOffsets[k] (an
/// implicit im2col, ``te_sgemm_implicit``). The tile goes to `c` (rows `ldc` apart), replacing
/// or added to what is there; `columns` < 32 stores only the first columns. With `prefetch`, B's
/// rows TE_PREFETCH_STEPS steps ahead are fetched as it goes (the first tile over a panel, which
/// reads it from beyond L1; the tiles after it find it there). With `prefetchA`, A's steps
/// TE_PREFETCH_A_STEPS ahead likewise (the first panel over a block of A packed whole).
///
/// The epilogue (each part NULL for none; see ``te_sgemm_packed_ab_epilogue``): a result not
/// `accumulate`d starts from its row's `bias` plus the `residual`'s value at its place (the tile's
/// rows and columns, rows `ldc` apart), added to the tile's sum as a product onto C set to them
/// first would; with `bounds` ([low, high]), every result is then bounded as ``te_bounded16`` does.
/// With `rowLength` > 0 the tile's columns are positions of an implicit convolution's flat grid
/// from `first` on, stored into the output plane at `c` (``te_tile_scatter``).
static inline __attribute__((always_inline)) TE_AVX512 void
te_tile(const int rows, long depth, const float *a, const float *b, long bStride, const long *rowOffsets, float *c,
        long ldc, long columns, int accumulate, const int prefetch, const int prefetchA, const float *bias,
        const float *residual, const float *bounds, long rowLength, long outWidth, long first) {
    // The loops over rows are unrolled whatever the optimisation level (the Clang importer may
    // compile for size), so that the 2 × rows sums stay in registers.
    te_float16 sum[TE_MR][2];
#pragma clang loop unroll(full)
    for (int r = 0; r < rows; r++) { sum[r][0] = 0; sum[r][1] = 0; }
    for (long p = 0; p < depth; p++) {
        const float *row = rowOffsets ? b + rowOffsets[p] : b + p * bStride;
        if (prefetchA) __builtin_prefetch(a + (p + TE_PREFETCH_A_STEPS) * rows, 0, 3);
        if (prefetch) {
            __builtin_prefetch(row + TE_PREFETCH_STEPS * bStride, 0, 3);
            __builtin_prefetch(row + TE_PREFETCH_STEPS * bStride + 16, 0, 3);
        }
        te_float16 b0 = *(const te_float16u *)row;
        te_float16 b1 = *(const te_float16u *)(row + 16);
#pragma clang loop unroll(full)
        for (int r = 0; r < rows; r++) {
            te_float16 x = a[p * rows + r];
            sum[r][0] = __builtin_elementwise_fma(x, b0, sum[r][0]);
            sum[r][1] = __builtin_elementwise_fma(x, b1, sum[r][1]);
        }
    }
    if (rowLength > 0) {
        te_tile_scatter(rows, sum, c, ldc, columns, first, rowLength, outWidth, accumulate, bias, residual, bounds);
        return;
    }
    const int plain = !bias && !residual && !bounds;
    if (columns == TE_NR) {
#pragma clang loop unroll(full)
        for (int r = 0; r < rows; r++) {
            te_float16u *out0 = (te_float16u *)(c + r * ldc), *out1 = (te_float16u *)(c + r * ldc + 16);
            if (plain) {
                if (accumulate) { *out0 += sum[r][0]; *out1 += sum[r][1]; }
                else { *out0 = sum[r][0]; *out1 = sum[r][1]; }
                continue;
            }
            te_float16 start0 = 0, start1 = 0;
            if (accumulate) {
                start0 = *out0;
                start1 = *out1;
            } else {
                if (bias) { start0 = bias[r]; start1 = bias[r]; }
                if (residual) {
                    start0 += *(const te_float16u *)(residual + r * ldc);
                    start1 += *(const te_float16u *)(residual + r * ldc + 16);
                }
            }
            te_float16 v0 = start0 + sum[r][0], v1 = start1 + sum[r][1];
            if (bounds) { v0 = te_bounded16(v0, bounds[0], bounds[1]); v1 = te_bounded16(v1, bounds[0], bounds[1]); }
            *out0 = v0;
            *out1 = v1;
        }
        return;
    }
    // A last panel narrower than 32 columns: the same epilogue by masked loads and stores, the
    // sums taken in the same order as above (a scalar loop over its columns took a quarter of a
    // 1 × 1 convolution's time when each piece's last panel held 29 of 32 columns). Unrolled as
    // the other loops over rows are, so that `sum` is indexed by constants only and stays in
    // registers.
    const unsigned short masks[2] = {
        columns >= 16 ? (unsigned short)0xFFFF : (unsigned short)((1u << columns) - 1u),
        columns <= 16 ? (unsigned short)0 : (unsigned short)((1u << (columns - 16)) - 1u),
    };
    const te_v16sf zero = (te_v16sf)(te_float16)0;
#pragma clang loop unroll(full)
    for (int r = 0; r < rows; r++) {
#pragma clang loop unroll(full)
        for (int half = 0; half < 2; half++) {
            float *out = c + r * ldc + 16 * half;
            if (masks[half] == 0) continue;
            te_float16 v = sum[r][half];
            if (!plain || accumulate) {
                te_float16 start = 0;
                if (accumulate) {
                    start = (te_float16)__builtin_ia32_loadups512_mask(out, zero, masks[half]);
                } else {
                    if (bias) start = bias[r];
                    if (residual)
                        start += (te_float16)__builtin_ia32_loadups512_mask(residual + r * ldc + 16 * half, zero,
                                                                             masks[half]);
                }
                v = start + v;
                if (bounds) v = te_bounded16(v, bounds[0], bounds[1]);
            }
            __builtin_ia32_storeups512_mask(out, (te_v16sf)v, masks[half]);
        }
    }
}

/// The micro-kernel for each row count, so that every loop over rows is unrolled: B's rows
/// `bStride` apart (`rowOffsets` NULL) or where `rowOffsets` says; each a function of its own,
/// so that the test of `rowOffsets` folds away, as do those of the prefetches (PF for B, PA for A).
#define TE_TILE_CASE(R, OFFSETS, PF, PA)                                                                       \
    case R:                                                                                                    \
        te_tile(R, depth, a, b, bStride, OFFSETS, c, ldc, columns, accumulate, PF, PA, bias, residual, bounds, \
                rowLength, outWidth, first);                                                                    \
        break;
#define TE_TILE_FOR_ROWS(OFFSETS, PF, PA)                                                                      \
    switch (rows) {                                                                                            \
        TE_TILE_CASE(12, OFFSETS, PF, PA) TE_TILE_CASE(11, OFFSETS, PF, PA) TE_TILE_CASE(10, OFFSETS, PF, PA)  \
        TE_TILE_CASE(9, OFFSETS, PF, PA) TE_TILE_CASE(8, OFFSETS, PF, PA) TE_TILE_CASE(7, OFFSETS, PF, PA)     \
        TE_TILE_CASE(6, OFFSETS, PF, PA) TE_TILE_CASE(5, OFFSETS, PF, PA) TE_TILE_CASE(4, OFFSETS, PF, PA)     \
        TE_TILE_CASE(3, OFFSETS, PF, PA) TE_TILE_CASE(2, OFFSETS, PF, PA)                                      \
    default:                                                                                                   \
        te_tile(1, depth, a, b, bStride, OFFSETS, c, ldc, columns, accumulate, PF, PA, bias, residual, bounds, \
                rowLength, outWidth, first);                                                                    \
        break;                                                                                                 \
    }

static TE_AVX512 void
te_tile_rows(int rows, long depth, const float *a, const float *b, long bStride, float *c, long ldc, long columns,
             int accumulate, int prefetch, int prefetchA, const float *bias, const float *residual,
             const float *bounds) {
    const long rowLength = 0, outWidth = 0, first = 0;
    if (prefetch && prefetchA) TE_TILE_FOR_ROWS((const long *)0, 1, 1)
    else if (prefetch) TE_TILE_FOR_ROWS((const long *)0, 1, 0)
    else if (prefetchA) TE_TILE_FOR_ROWS((const long *)0, 0, 1)
    else TE_TILE_FOR_ROWS((const long *)0, 0, 0)
}

static TE_AVX512 void
te_tile_rows_gathered(int rows, long depth, const float *a, const float *b, const long *rowOffsets, float *c,
                      long ldc, long columns, int accumulate, int prefetchA, const float *bias, const float *residual,
                      const float *bounds, long rowLength, long outWidth, long first) {
    const long bStride = 0;
    __builtin_assume(rowOffsets != 0);
    __builtin_assume(rowLength > 0);
    if (prefetchA) TE_TILE_FOR_ROWS(rowOffsets, 0, 1)
    else TE_TILE_FOR_ROWS(rowOffsets, 0, 0)
}
#undef TE_TILE_FOR_ROWS
#undef TE_TILE_CASE

/// The transpose of the 16 × 16 block whose rows are `row[0...15]`: `column[q]` holds element q of
/// every row. Four rounds of shuffles (32-bit, 64-bit, then 128-bit lanes twice).
static inline __attribute__((always_inline)) TE_AVX512 void
te_transpose16(const te_float16 row[16], te_float16 column[16]) {
    te_float16 t[16], u[16], v[16];
#pragma clang loop unroll(full)
    for (int i = 0; i < 16; i += 2) {
        t[i] = __builtin_shufflevector(row[i], row[i + 1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
        t[i + 1] = __builtin_shufflevector(row[i], row[i + 1], 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
    }
    // Per group of four rows g: u[4g + c] holds, in 128-bit lane L, column 4L + c of the group's rows.
#pragma clang loop unroll(full)
    for (int g = 0; g < 16; g += 4) {
#pragma clang loop unroll(full)
        for (int h = 0; h < 2; h++) {
            u[g + h * 2] = __builtin_shufflevector(t[g + h], t[g + 2 + h], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
            u[g + h * 2 + 1] = __builtin_shufflevector(t[g + h], t[g + 2 + h], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
        }
    }
    // Lanes 0 and 2 (even) or 1 and 3 (odd) of groups 0 and 1, and of groups 2 and 3.
#pragma clang loop unroll(full)
    for (int c = 0; c < 4; c++) {
#pragma clang loop unroll(full)
        for (int pair = 0; pair < 2; pair++) {
            const te_float16 x = u[pair * 8 + c], y = u[pair * 8 + 4 + c];
            v[pair * 8 + c] = __builtin_shufflevector(x, y, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
            v[pair * 8 + 4 + c] = __builtin_shufflevector(x, y, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
        }
    }
#pragma clang loop unroll(full)
    for (int c = 0; c < 4; c++) {
#pragma clang loop unroll(full)
        for (int odd = 0; odd < 2; odd++) {
            const te_float16 x = v[odd * 4 + c], y = v[8 + odd * 4 + c];
            column[4 * odd + c] = __builtin_shufflevector(x, y, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
            column[8 + 4 * odd + c] = __builtin_shufflevector(x, y, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
        }
    }
}

/// The first `count` of 16 lanes (all of them from 16 on, none at 0 or below), as a load mask.
static inline __attribute__((always_inline)) unsigned short te_lanes(long count) {
    return count >= 16 ? 0xFFFF : count <= 0 ? 0 : (unsigned short)((1u << count) - 1);
}

/// Packs rows [0, rows ≤ 16) and steps [0, depth) of A (element (i, p) at
/// a[i*rowStride + p*depthStride]) as [depth][rows]. Row-major A goes 16 steps at a time through
/// a 16 × 16 transpose in registers, each step's column stored as 16 floats: the 16 - rows past
/// it are overwritten by the next step's, or land in the next tile's space (packed after this
/// one) or the 16 floats of slack every packing buffer keeps past its end. A stored transposed
/// (rows contiguous) takes one masked load per step.
static TE_AVX512 void
te_pack_a(const float *a, long rowStride, long depthStride, int rows, long depth, float *packed) {
    if (rowStride == 1 && depthStride != 1) {
        const unsigned short lanes = te_lanes(rows);
        const te_v16sf zero = {0};
        for (long p = 0; p < depth; p++)
            *(te_float16u *)(packed + p * rows) =
                (te_float16)__builtin_ia32_loadups512_mask(a + p * depthStride, zero, lanes);
        return;
    }
    long p0 = 0;
    if (depthStride == 1) {
        for (; p0 + 16 <= depth; p0 += 16) {
            te_float16 block[16], columns[16];
#pragma clang loop unroll(full)
            for (int r = 0; r < 16; r++) block[r] = r < rows ? *(const te_float16u *)(a + r * rowStride + p0) : 0;
            te_transpose16(block, columns);
#pragma clang loop unroll(full)
            for (int q = 0; q < 16; q++) *(te_float16u *)(packed + (p0 + q) * rows) = columns[q];
        }
    }
    for (long p = p0; p < depth; p++)
        for (int i = 0; i < rows; i++) packed[p * rows + i] = a[i * rowStride + p * depthStride];
}

/// Packs steps [0, depth) and columns [0, columns ≤ 32) of B (element (p, j) at
/// b[p*depthStride + j*columnStride]) as [depth][32], zero beyond `columns`. A row-major B takes
/// two (masked) loads per step; a transposed one goes through 16 × 16 transposes in registers,
/// the rows past `columns` zero. A panel narrower than 32 (attention's keys, a product's last
/// columns) reads nothing past its columns.
static TE_AVX512 void
te_pack_b(const float *b, long depthStride, long columnStride, long depth, long columns, float *packed) {
    if (columnStride == 1) {
        const unsigned short low = te_lanes(columns), high = te_lanes(columns - 16);
        const te_v16sf zero = {0};
        for (long p = 0; p < depth; p++) {
            const float *row = b + p * depthStride;
            *(te_float16u *)(packed + p * TE_NR) = (te_float16)__builtin_ia32_loadups512_mask(row, zero, low);
            *(te_float16u *)(packed + p * TE_NR + 16) =
                (te_float16)__builtin_ia32_loadups512_mask(row + 16, zero, high);
        }
        return;
    }
    long p0 = 0;
    if (depthStride == 1) {
        // B stored transposed: each column of B is a contiguous row.
        for (; p0 + 16 <= depth; p0 += 16) {
            for (int half = 0; half < 2; half++) {
                te_float16 rows[16], columns16[16];
#pragma clang loop unroll(full)
                for (int r = 0; r < 16; r++) {
                    const long j = half * 16 + r;
                    rows[r] = j < columns ? *(const te_float16u *)(b + j * columnStride + p0) : (te_float16)0;
                }
                te_transpose16(rows, columns16);
#pragma clang loop unroll(full)
                for (int q = 0; q < 16; q++) *(te_float16u *)(packed + (p0 + q) * TE_NR + half * 16) = columns16[q];
            }
        }
    }
    for (long p = p0; p < depth; p++)
        for (long j = 0; j < TE_NR; j++) packed[p * TE_NR + j] = j < columns ? b[p * depthStride + j * columnStride] : 0;
}

/// The sum of a vector's 16 lanes, by halves.
static inline __attribute__((always_inline)) TE_AVX512 float te_sum16(te_float16 v) {
    typedef float te_float8v __attribute__((ext_vector_type(8)));
    typedef float te_float4v __attribute__((ext_vector_type(4)));
    te_float8v h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    te_float4v q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
    return (q.x + q.z) + (q.y + q.w);
}

/// A tile of `rows` ≤ TE_MR rows of C and `columns` ≤ 2 columns, each a dot product of a row of A
/// (rows `lda` apart, contiguous along k) and a row of B stored transposed (rows `ldb` apart).
static inline __attribute__((always_inline)) TE_AVX512 void
te_dot_tile(const int rows, const int columns, long k, const float *a, long lda, const float *b, long ldb, float *c,
            long ldc, int accumulate) {
    te_float16 sum[TE_MR][2];
#pragma clang loop unroll(full)
    for (int r = 0; r < rows; r++) { sum[r][0] = 0; sum[r][1] = 0; }
    long p = 0;
    for (; p + 16 <= k; p += 16) {
        const te_float16 y0 = *(const te_float16u *)(b + p);
        const te_float16 y1 = columns > 1 ? *(const te_float16u *)(b + ldb + p) : y0;
#pragma clang loop unroll(full)
        for (int r = 0; r < rows; r++) {
            const te_float16 x = *(const te_float16u *)(a + r * lda + p);
            sum[r][0] = __builtin_elementwise_fma(x, y0, sum[r][0]);
            if (columns > 1) sum[r][1] = __builtin_elementwise_fma(x, y1, sum[r][1]);
        }
    }
#pragma clang loop unroll(full)
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < columns; j++) {
            float total = te_sum16(sum[r][j]);
            for (long q = p; q < k; q++) total += a[r * lda + q] * b[j * ldb + q];
            c[r * ldc + j] = accumulate ? c[r * ldc + j] + total : total;
        }
    }
}

/// C[m, n] = A·Bᵀ-stored B, for few rows of row-major A and B stored transposed (a weight in
/// PyTorch's [out, in] layout): dot products that read B once per 12 rows of A, where packing B
/// would cost as much as the arithmetic.
static TE_AVX512 void
te_sgemm_dots(long m, long n, long k, const float *a, long lda, const float *b, long ldb, float *c, long ldc,
              int accumulate) {
#define TE_DOT_CASE(R)                                                                                   \
    case R:                                                                                              \
        if (columns == 2) te_dot_tile(R, 2, depth, x, lda, y, ldb, out, ldc, add);                       \
        else te_dot_tile(R, 1, depth, x, lda, y, ldb, out, ldc, add);                                    \
        break;
    // Steps of k in blocks of 512, so that 12 rows of A (24 KiB) stay in L1.
    for (long p0 = 0; p0 < k; p0 += 512) {
        const long depth = k - p0 < 512 ? k - p0 : 512;
        const int add = accumulate || p0 > 0;
        for (long i0 = 0; i0 < m; i0 += TE_MR) {
            const int rows = (int)(m - i0 < TE_MR ? m - i0 : TE_MR);
            for (long j = 0; j < n; j += 2) {
                const int columns = n - j < 2 ? 1 : 2;
                const float *x = a + i0 * lda + p0, *y = b + j * ldb + p0;
                float *out = c + i0 * ldc + j;
                switch (rows) {
                    TE_DOT_CASE(12) TE_DOT_CASE(11) TE_DOT_CASE(10) TE_DOT_CASE(9) TE_DOT_CASE(8) TE_DOT_CASE(7)
                    TE_DOT_CASE(6) TE_DOT_CASE(5) TE_DOT_CASE(4) TE_DOT_CASE(3) TE_DOT_CASE(2)
                    default: TE_DOT_CASE(1)
                }
            }
        }
    }
#undef TE_DOT_CASE
}

/// Floats in B packed whole for ``te_sgemm_packed``: k × n rounded up to whole 32-column panels.
static inline long te_packed_b_floats(long k, long n) { return k * ((n + TE_NR - 1) / TE_NR * TE_NR); }

/// Packs the 32-column panels [firstPanel, endPanel) of B [k, n] (row-major with rows `ldb` apart,
/// or stored transposed) into `packed`, laid out by blocks of `te_depth_block(k)` steps of k: within
/// the block that starts at step p0 (depth: the block's steps), panel t is at
/// packed + p0 * roundup(n, 32) + t * 32 * depth, as [depth][32], zero beyond column n. Panels are
/// independent, so workers may pack disjoint ranges of them.
static TE_AVX512 void
te_pack_b_panels(int transposeB, long k, long n, const float *b, long ldb, float *packed, long firstPanel,
                 long endPanel) {
    const long padded = (n + TE_NR - 1) / TE_NR * TE_NR;
    const long depthStride = transposeB ? 1 : ldb, columnStride = transposeB ? ldb : 1;
    const long kb = te_depth_block(k);
    for (long p0 = 0; p0 < k; p0 += kb) {
        const long depth = k - p0 < kb ? k - p0 : kb;
        for (long t = firstPanel; t < endPanel; t++) {
            const long j = t * TE_NR, width = n - j < TE_NR ? n - j : TE_NR;
            te_pack_b(b + p0 * depthStride + j * columnStride, depthStride, columnStride, depth, width,
                      packed + p0 * padded + t * TE_NR * depth);
        }
    }
}

/// The tiles a block of `block` rows of A is cut into, of near-equal height (15 rows: 8 + 7): tile
/// t covers rows offsets[t] ..< offsets[t + 1]. Returns the number of tiles.
static inline long te_tile_offsets(long block, long *offsets) {
    const long tiles = (block + TE_MR - 1) / TE_MR;
    long start = 0;
    for (long t = 0; t < tiles; t++) {
        offsets[t] = start;
        start += (block - start + (tiles - t) - 1) / (tiles - t);
    }
    offsets[tiles] = block;
    return tiles;
}

/// The rows of C a block of A covers, cut into tiles (``te_tile_offsets``), each packed as
/// [depth][rows] at packed + offsets[t] * depth. Returns the number of tiles.
static TE_AVX512 long
te_pack_a_block(const float *a, long aRow, long aDepth, long block, long depth, float *packed, long *offsets) {
    const long tiles = te_tile_offsets(block, offsets);
    for (long t = 0; t < tiles; t++) {
        const long start = offsets[t];
        te_pack_a(a + start * aRow, aRow, aDepth, (int)(offsets[t + 1] - start), depth, packed + start * depth);
    }
    return tiles;
}

/// Floats in A packed whole for ``te_sgemm_packed_ab``: m × k and the 16 floats of slack
/// ``te_pack_a`` writes past the end.
static inline long te_packed_a_floats(long m, long k) { return m * k + 16; }

/// Packs A [m, k] whole, element (i, p) at a[i*rowStride + p*depthStride] (row-major, or stored
/// transposed), as ``te_sgemm_packed`` packs it block by block: the block of `te_depth_block(k)`
/// steps from p0 and rows from i0 (TE_MC at most) sits at packed + p0 * m + i0 * depth, its tiles
/// as ``te_pack_a_block`` lays them out.
static TE_AVX512 void
te_pack_a_whole_strided(const float *a, long rowStride, long depthStride, long m, long k, float *packed) {
    long offsets[TE_MC / TE_MR + 1];
    const long kb = te_depth_block(k);
    for (long p0 = 0; p0 < k; p0 += kb) {
        const long depth = k - p0 < kb ? k - p0 : kb;
        for (long i0 = 0; i0 < m; i0 += TE_MC) {
            const long block = m - i0 < TE_MC ? m - i0 : TE_MC;
            te_pack_a_block(a + i0 * rowStride + p0 * depthStride, rowStride, depthStride, block, depth,
                            packed + p0 * m + i0 * depth, offsets);
        }
    }
}

/// Packs row-major A [m, k] (rows `lda` apart) whole (``te_pack_a_whole_strided``). A weight
/// packed once serves every product it takes part in.
static TE_AVX512 void
te_pack_a_whole(const float *a, long lda, long m, long k, float *packed) {
    te_pack_a_whole_strided(a, lda, 1, m, k, packed);
}

/// Packing space for A: TE_MC rows by TE_KC steps and 16 floats of slack (``te_pack_a``), on the
/// stack.
enum { TE_PACKED_A_FLOATS = TE_MC * TE_KC + 16 };

/// The loops of ``te_sgemm_packed``, ``te_sgemm_packed_ab`` and ``te_sgemm_implicit``: blocks of k,
/// blocks of A's rows, B's panels, A's tiles. A block of A comes from `packedA` (packed whole) or,
/// when that is NULL, is packed from `a` into `scratch` (TE_PACKED_A_FLOATS floats). B is
/// `packedB` packed whole, or with `rowOffsets` read where they say from `packedB`, or with
/// `inPlaceLdb` > 0 row-major at `packedB` as it is, rows `inPlaceLdb` apart (whole panels only).
static inline __attribute__((always_inline)) TE_AVX512 void
te_sgemm_blocks(int transposeA, long m, long n, long k, const float *a, long lda, const float *packedA, float *scratch,
                const float *packedB, const long *rowOffsets, long j0, long j1, float *c, long ldc, int accumulate,
                const float *bias, const float *residual, const float *bounds, long rowLength, long outWidth,
                long inPlaceLdb) {
    const long padded = (n + TE_NR - 1) / TE_NR * TE_NR;
    const long aRow = transposeA ? 1 : lda, aDepth = transposeA ? lda : 1;
    long offsets[TE_MC / TE_MR + 1];
    const long kb = te_depth_block(k);
    for (long p0 = 0; p0 < k; p0 += kb) {
        const long depth = k - p0 < kb ? k - p0 : kb;
        const int add = accumulate || p0 > 0;
        // The epilogue's bounds apply to the last block of k, once every step is summed.
        const float *blockBounds = p0 + depth >= k ? bounds : NULL;
        for (long i0 = 0; i0 < m; i0 += TE_MC) {
            const long block = m - i0 < TE_MC ? m - i0 : TE_MC;
            const long tiles = packedA
                ? te_tile_offsets(block, offsets)
                : te_pack_a_block(a + i0 * aRow + p0 * aDepth, aRow, aDepth, block, depth, scratch, offsets);
            const float *tilesA = packedA ? packedA + p0 * m + i0 * depth : scratch;
            for (long j = j0; j < j1; j += TE_NR) {
                const long width = j1 - j < TE_NR ? j1 - j : TE_NR;
                // A packed whole comes from beyond L2 for the first panel (packed here, from L2).
                const int coldA = packedA && j == j0;
                for (long t = 0; t < tiles; t++) {
                    const long start = offsets[t], rows = offsets[t + 1] - start;
                    float *tile = c + (i0 + start) * ldc + j;
                    if (rowOffsets)
                        te_tile_rows_gathered((int)rows, depth, tilesA + start * depth, packedB + j, rowOffsets + p0,
                                              c + (i0 + start) * ldc, ldc, width, add, coldA,
                                              bias ? bias + i0 + start : NULL,
                                              residual ? residual + (i0 + start) * ldc : NULL, blockBounds, rowLength,
                                              outWidth, j);
                    else if (inPlaceLdb > 0)
                        te_tile_rows((int)rows, depth, tilesA + start * depth, packedB + p0 * inPlaceLdb + j,
                                     inPlaceLdb, tile, ldc, width, add, 0, coldA, bias ? bias + i0 + start : NULL,
                                     residual ? residual + (i0 + start) * ldc + j : NULL, blockBounds);
                    else
                        te_tile_rows((int)rows, depth, tilesA + start * depth, packedB + p0 * padded + j * depth, TE_NR,
                                     tile, ldc, width, add, t == 0, coldA, bias ? bias + i0 + start : NULL,
                                     residual ? residual + (i0 + start) * ldc + j : NULL, blockBounds);
                }
            }
        }
    }
}

/// C[m, columns j0..<j1] = A[m, k] · B[k, j0..<j1] (or += when `accumulate`), single-threaded, with
/// B packed whole by ``te_pack_b_panels`` (`n`: B's full width; j0 a multiple of 32). A is
/// row-major with rows `lda` apart, or stored transposed. Workers share one packed B and take
/// disjoint rows or panels of C.
static TE_AVX512 void
te_sgemm_packed(int transposeA, long m, long n, long k, const float *a, long lda, const float *packedB, long j0,
                long j1, float *c, long ldc, int accumulate) {
    float packedA[TE_PACKED_A_FLOATS] __attribute__((aligned(64)));
    te_sgemm_blocks(transposeA, m, n, k, a, lda, NULL, packedA, packedB, NULL, j0, j1, c, ldc, accumulate, NULL, NULL,
                    NULL, 0, 0, 0);
}

/// C[m, columns j0..<j1] = A·B (or += when `accumulate`) as ``te_sgemm_packed`` computes it, with
/// A packed whole by ``te_pack_a_whole`` and B by ``te_pack_b_panels``: nothing is packed here.
static TE_AVX512 void
te_sgemm_packed_ab(long m, long n, long k, const float *packedA, const float *packedB, long j0, long j1, float *c,
                   long ldc, int accumulate) {
    te_sgemm_blocks(0, m, n, k, NULL, 0, packedA, NULL, packedB, NULL, j0, j1, c, ldc, accumulate, NULL, NULL, NULL,
                    0, 0, 0);
}

/// C[m, columns j0..<j1] = A·B as ``te_sgemm_packed_ab`` computes it (C's old values unread), with
/// an epilogue applied as each tile is stored, while it is in registers: each result starts from
/// its row's `bias` (NULL: 0) plus the `residual`'s value at its place (laid out as C, rows `ldc`
/// apart; NULL: none), as if C had been set to them and the product added onto it, and is then
/// bounded by `bounds` (NULL: none), `bounds[0]` where it is ≤ bounds[0], then `bounds[1]` where
/// that is ≥ bounds[1], a NaN kept. A convolution's bias, fused residual and activation, without
/// the passes over C that setting it first and bounding it after take.
static TE_AVX512 void
te_sgemm_packed_ab_epilogue(long m, long n, long k, const float *packedA, const float *packedB, long j0, long j1,
                            float *c, long ldc, const float *bias, const float *residual, const float *bounds) {
    te_sgemm_blocks(0, m, n, k, NULL, 0, packedA, NULL, packedB, NULL, j0, j1, c, ldc, 0, bias, residual, bounds, 0,
                    0, 0);
}

/// ``te_sgemm_packed_ab_epilogue`` with A row-major (rows `lda` apart), packed block by block here.
static TE_AVX512 void
te_sgemm_packed_epilogue(long m, long n, long k, const float *a, long lda, const float *packedB, long j0, long j1,
                         float *c, long ldc, const float *bias, const float *residual, const float *bounds) {
    float packedA[TE_PACKED_A_FLOATS] __attribute__((aligned(64)));
    te_sgemm_blocks(0, m, n, k, a, lda, NULL, packedA, packedB, NULL, j0, j1, c, ldc, 0, bias, residual, bounds, 0, 0,
                    0);
}

/// A·B for grid positions q0..<q1, with A packed whole (``te_pack_a_whole``) and B never formed:
/// element (p, q) of B is source[rowOffsets[p] + q]. This is im2col left implicit for a stride-1
/// convolution over a padded input whose rows are `rowLength` floats: position q = oh·rowLength
/// + ow, row p = (c, kh, kw) of the filters at c·plane + kh·dilation·rowLength + kw·dilation. B's
/// 32 columns of a step are then 32 consecutive floats of the input, read in place: no columns
/// matrix is written. Reads reach (q1 rounded up to 32) - 1 past the largest offset. Each result
/// goes straight to the output plane of its row of A (planes `ldc` apart from `c`, rows
/// `outWidth` floats): position q at c + (q / rowLength)·outWidth + q % rowLength, the positions
/// past an output row (q % rowLength ≥ outWidth) dropped; with the epilogue of
/// ``te_sgemm_packed_ab_epilogue`` (`bias` per row of A, `residual` laid out as the output).
static TE_AVX512 void
te_sgemm_implicit(long m, long k, const float *packedA, const float *source, const long *rowOffsets, long q0, long q1,
                  float *c, long ldc, long rowLength, long outWidth, const float *bias, const float *residual,
                  const float *bounds) {
    __builtin_assume(rowOffsets != 0);
    te_sgemm_blocks(0, m, q1, k, NULL, 0, packedA, NULL, source, rowOffsets, q0, q1, c, ldc, 0, bias, residual, bounds,
                    rowLength, outWidth, 0);
}

/// C[m, n] = A[m, k] · B[k, n] for few rows of A (at most 2 × TE_MR) and B row-major: B is read
/// in place, each element serving every row, where packing it would cost as much as the
/// arithmetic; a last partial panel is packed. Added to C when `accumulate`; otherwise with the
/// epilogue of ``te_sgemm_packed_ab_epilogue`` (`bias` per row of A, `residual` laid out as C,
/// `bounds`; each NULL for none).
static inline __attribute__((always_inline)) TE_AVX512 void
te_sgemm_few_rows_blocks(int transposeA, long m, long n, long k, const float *a, long lda, const float *b, long ldb,
                         float *c, long ldc, int accumulate, const float *bias, const float *residual,
                         const float *bounds) {
    const long aRow = transposeA ? 1 : lda, aDepth = transposeA ? lda : 1;
    float packedA[2 * TE_MR * TE_KC + 16] __attribute__((aligned(64)));
    float edge[TE_KC * TE_NR] __attribute__((aligned(64)));
    long offsets[3];
    const long kb = te_depth_block(k);
    for (long p0 = 0; p0 < k; p0 += kb) {
        const long depth = k - p0 < kb ? k - p0 : kb;
        const int add = accumulate || p0 > 0;
        const float *blockBounds = p0 + depth >= k ? bounds : NULL;
        const long tiles = te_pack_a_block(a + p0 * aDepth, aRow, aDepth, m, depth, packedA, offsets);
        for (long j = 0; j < n; j += TE_NR) {
            const long width = n - j < TE_NR ? n - j : TE_NR;
            const float *panel = b + p0 * ldb + j;
            long stride = ldb;
            if (width < TE_NR) {
                te_pack_b(panel, ldb, 1, depth, width, edge);
                panel = edge;
                stride = TE_NR;
            }
            for (long t = 0; t < tiles; t++) {
                const long start = offsets[t];
                te_tile_rows((int)(offsets[t + 1] - start), depth, packedA + start * depth, panel, stride,
                             c + start * ldc + j, ldc, width, add, t == 0, 0, bias ? bias + start : NULL,
                             residual ? residual + start * ldc + j : NULL, blockBounds);
            }
        }
    }
}

/// ``te_sgemm_few_rows_blocks`` without an epilogue: C = A·B, or C += A·B when `accumulate`.
static TE_AVX512 void
te_sgemm_few_rows(int transposeA, long m, long n, long k, const float *a, long lda, const float *b, long ldb,
                  float *c, long ldc, int accumulate) {
    te_sgemm_few_rows_blocks(transposeA, m, n, k, a, lda, b, ldb, c, ldc, accumulate, NULL, NULL, NULL);
}

/// C[m, n] = A·B for few rows of A (at most 2 × TE_MR; A and B row-major, B read in place as
/// ``te_sgemm_few_rows`` reads it), with the epilogue of ``te_sgemm_packed_ab_epilogue``: each
/// result starts from its row's `bias` plus the `residual`'s value at its place and is then
/// bounded by `bounds` (each NULL for none). A narrow pointwise convolution (a squeeze layer's 16
/// output channels) in one pass over its output.
static TE_AVX512 void
te_sgemm_few_rows_epilogue(long m, long n, long k, const float *a, long lda, const float *b, long ldb, float *c,
                           long ldc, const float *bias, const float *residual, const float *bounds) {
    te_sgemm_few_rows_blocks(0, m, n, k, a, lda, b, ldb, c, ldc, 0, bias, residual, bounds);
}

/// Whether B is worth packing for A's rows (the products ``te_sgemm_packed`` is for): unless A has
/// few rows, when ``te_sgemm_avx512`` reads B in place or by dot products. (It also reads a small
/// row-major B in place for more rows, ``te_sgemm_reads_b_in_place``; callers that share one
/// packed B among pieces of a product pack it still.)
static inline int te_sgemm_packs_b(int transposeA, int transposeB, long m) {
    return m > 2 * TE_MR || (transposeA && transposeB);
}

/// Floats of row-major B at most that ``te_sgemm_avx512`` reads in place rather than packs: the
/// 32 KiB a packed panel takes, which stay in L1 across the tiles. `bmm-12x128x64`'s 64 × 128
/// operands: 78 µs for six products against 84.5 packed, on one core.
enum { TE_IN_PLACE_B_FLOATS = 8192 };

/// Whether ``te_sgemm_avx512`` reads B in place: row-major, whole panels of 32 columns, small
/// (``TE_IN_PLACE_B_FLOATS``), and rows not a multiple of 4 KiB apart (which would fall on the
/// same few sets of L1 and evict each other).
static inline int te_sgemm_reads_b_in_place(int transposeB, long n, long k, long ldb) {
    return !transposeB && n % TE_NR == 0 && k * n <= TE_IN_PLACE_B_FLOATS && ldb % 1024 != 0;
}

/// C[m, n] = A[m, k] · B[k, n] (or += when `accumulate`), single-threaded, on a CPU with AVX-512.
/// A is row-major with rows `lda` apart, or (transposeA) stored as its transpose [k, m]; likewise
/// B with `ldb`. C is row-major with rows `ldc` apart. Returns 0, or -1 when the space to pack B
/// cannot be allocated (C is then untouched).
static TE_AVX512 int
te_sgemm_avx512(int transposeA, int transposeB, long m, long n, long k, const float *a, long lda, const float *b,
                long ldb, float *c, long ldc, int accumulate) {
    if (m <= 0 || n <= 0) return 0;
    if (k <= 0) {
        if (!accumulate) for (long i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof(float));
        return 0;
    }
    if (!te_sgemm_packs_b(transposeA, transposeB, m)) {
        if (transposeB) te_sgemm_dots(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        else te_sgemm_few_rows(transposeA, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        return 0;
    }
    if (te_sgemm_reads_b_in_place(transposeB, n, k, ldb)) {
        float packedA[TE_PACKED_A_FLOATS] __attribute__((aligned(64)));
        te_sgemm_blocks(transposeA, m, n, k, a, lda, NULL, packedA, b, NULL, 0, n, c, ldc, accumulate, NULL, NULL,
                        NULL, 0, 0, ldb);
        return 0;
    }
    float *packedB = aligned_alloc(64, (size_t)te_packed_b_floats(k, n) * sizeof(float));
    if (!packedB) return -1;
    te_pack_b_panels(transposeB, k, n, b, ldb, packedB, 0, (n + TE_NR - 1) / TE_NR);
    te_sgemm_packed(transposeA, m, n, k, a, lda, packedB, 0, n, c, ldc, accumulate);
    free(packedB);
    return 0;
}

#endif
