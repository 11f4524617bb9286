// Row kernels with AVX-512: softmax and log-softmax of one contiguous row, 16 lanes at a time, for
// CPUs that have it (the Swift row kernels are built for AVX2's 8 lanes; see docs/ARCHITECTURE.md,
// "CPU features"). The same arithmetic as the Swift kernels (`RowKernels.softmax`,
// `VectorMath.expOfNonPositive`): the same flush to 0 below -87.3 (a zero mask here, a clamp
// and a select there), reduction and polynomial, each step fused alike, and the same single
// rounding of p·2ⁿ (one `vscalefps` here, two exact multiplications there), so an element's
// exponential is the same float; only the order of the row's sum differs.
#ifndef TENSORENGINE_ROWS_H
#define TENSORENGINE_ROWS_H

#include <math.h>

#define TE_ROWS_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

typedef float te_row16 __attribute__((ext_vector_type(16)));
typedef float te_row16u __attribute__((ext_vector_type(16), aligned(4)));
typedef int te_rowint16 __attribute__((ext_vector_type(16)));

/// `a` where `keep` is all ones, else `b`, lane by lane.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_row_select(te_rowint16 keep, te_row16 a, te_row16 b) {
    return (te_row16)((keep & (te_rowint16)a) | (~keep & (te_rowint16)b));
}

/// `eˣ` for x ≤ 0 or NaN (softmax's shifted values): below -87.3 it is 0, not a subnormal, as in
/// `VectorMath.expOfNonPositive` (an instruction that makes or reads a subnormal stalls an Intel
/// core for about a hundred cycles); NaN stays NaN. Lanes below -87.3 run the reduction and the
/// polynomial on whatever they hold (-inf makes them NaN) and are then zeroed by the last
/// instruction's mask, which computes nothing there: no clamp before and no blend after, 5% of
/// a softmax over rows of 128, with rows of -94 to -100 (subnormal results) as fast as others.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16 te_row_exp(te_row16 x) {
    typedef float te_v16sf __attribute__((vector_size(64)));
    const te_row16 n = __builtin_elementwise_floor(__builtin_elementwise_fma(x, (te_row16)1.44269504f, (te_row16)0.5f));
    te_row16 r = __builtin_elementwise_fma(n, (te_row16)-0.693359375f, x);
    r = __builtin_elementwise_fma(n, (te_row16)2.12194440e-4f, r);
    te_row16 p = 1.9875691500e-4f;
    p = __builtin_elementwise_fma(p, r, (te_row16)1.3981999507e-3f);
    p = __builtin_elementwise_fma(p, r, (te_row16)8.3334519073e-3f);
    p = __builtin_elementwise_fma(p, r, (te_row16)4.1665795894e-2f);
    p = __builtin_elementwise_fma(p, r, (te_row16)1.6666665459e-1f);
    p = __builtin_elementwise_fma(p, r, (te_row16)5.0000001201e-1f);
    p = __builtin_elementwise_fma(p, r * r, r + 1);
    // Kept: x ≥ -87.3, or NaN (predicate 5, "not less than", is true when unordered).
    const unsigned short kept =
        __builtin_ia32_cmpps512_mask((te_v16sf)x, (te_v16sf)(te_row16)-87.3f, 5, (unsigned short)0xFFFF, 4);
    // p · 2ⁿ in one instruction (`vscalefps`), rounded once, into a subnormal where it must be;
    // 0 in the lanes not kept.
    return (te_row16)__builtin_ia32_scalefps512_mask((te_v16sf)p, (te_v16sf)n, (te_v16sf)(te_row16)0.0f, kept, 4);
}

/// The sum of the 16 lanes, by halves (8, 4, 2, then 1).
static inline __attribute__((always_inline)) TE_ROWS_AVX512 float te_row_sum(te_row16 v) {
    typedef float te_row8 __attribute__((ext_vector_type(8)));
    typedef float te_row4 __attribute__((ext_vector_type(4)));
    const te_row8 h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    const te_row4 q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
    return (q.x + q.z) + (q.y + q.w);
}

/// The greatest of the 16 lanes (none is NaN), by halves.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 float te_row_max(te_row16 v) {
    typedef float te_row8 __attribute__((ext_vector_type(8)));
    typedef float te_row4 __attribute__((ext_vector_type(4)));
    const te_row8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    const te_row8 b = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    const te_row8 h = __builtin_elementwise_max(a, b);
    const te_row4 q = __builtin_elementwise_max(__builtin_shufflevector(h, h, 0, 1, 2, 3), __builtin_shufflevector(h, h, 4, 5, 6, 7));
    const float x = q.x > q.z ? q.x : q.z, y = q.y > q.w ? q.y : q.w;
    return x > y ? x : y;
}

typedef float te_row_v16sf __attribute__((vector_size(64)));

/// The mask of the first `count` ≤ 16 lanes.
static inline __attribute__((always_inline)) unsigned short te_row_lanes(long count) {
    return (unsigned short)((1u << count) - 1);
}

/// Loads `count` < 16 floats, the other lanes `padding`: a masked load, which reads nothing past
/// the row (and so cannot fault there).
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_row_load_tail(const float *x, long count, float padding) {
    return (te_row16)__builtin_ia32_loadups512_mask(x, (te_row_v16sf)(te_row16)padding, te_row_lanes(count));
}

/// Stores the first `count` < 16 lanes of `v`, and nothing past them.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 void
te_row_store_tail(float *out, long count, te_row16 v) {
    __builtin_ia32_storeups512_mask(out, (te_row_v16sf)v, te_row_lanes(count));
}

/// The running maximum of `maxima` and `v`, with NaNs noted in `nan` (a comparison with NaN is false).
#define TE_ROW_MAX_STEP(maxima, nan, v)                                                                    \
    do {                                                                                                   \
        const te_row16 value = (v);                                                                        \
        (maxima) = te_row_select(value > (maxima), value, (maxima));                                       \
        (nan) |= value != value;                                                                           \
    } while (0)

/// `out = (x - max) - log Σ exp(x - max)` over a row of n > 0 floats: log-softmax (softmax
/// itself goes four rows at a time, ``te_softmax_rows_avx512``). A NaN anywhere makes the maximum
/// NaN, and so the whole row, as in the Swift kernel. Four vectors at a time with four running
/// maxima and sums, so that no pass waits on one chain of dependent instructions; a last part of
/// fewer than 16 floats by masked loads and stores.
static TE_ROWS_AVX512 void te_log_softmax_row_avx512(const float *x, float *out, long n) {
    te_row16 maxima[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    te_rowint16 nan[4] = {0, 0, 0, 0};
    long i = 0;
    for (; i + 64 <= n; i += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) TE_ROW_MAX_STEP(maxima[u], nan[u], *(const te_row16u *)(x + i + 16 * u));
    }
    for (; i + 16 <= n; i += 16) TE_ROW_MAX_STEP(maxima[0], nan[0], *(const te_row16u *)(x + i));
    if (i < n) TE_ROW_MAX_STEP(maxima[1], nan[1], te_row_load_tail(x + i, n - i, -INFINITY));
    const te_row16 greatest = __builtin_elementwise_max(__builtin_elementwise_max(maxima[0], maxima[1]),
                                                        __builtin_elementwise_max(maxima[2], maxima[3]));
    const float maximum = __builtin_reduce_or(nan[0] | nan[1] | nan[2] | nan[3]) ? NAN : te_row_max(greatest);
    const te_row16 shift = maximum;
    // The sum of the exponentials, which are not stored.
    te_row16 sums[4] = {0, 0, 0, 0};
    for (i = 0; i + 64 <= n; i += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) sums[u] += te_row_exp(*(const te_row16u *)(x + i + 16 * u) - shift);
    }
    for (; i + 16 <= n; i += 16) sums[0] += te_row_exp(*(const te_row16u *)(x + i) - shift);
    // Padding lanes hold -inf, whose exponential is 0.
    if (i < n) sums[1] += te_row_exp(te_row_load_tail(x + i, n - i, -INFINITY) - shift);
    const te_row16 shiftLog = logf(te_row_sum((sums[0] + sums[1]) + (sums[2] + sums[3])));
    for (i = 0; i + 16 <= n; i += 16) *(te_row16u *)(out + i) = (*(const te_row16u *)(x + i) - shift) - shiftLog;
    if (i < n) te_row_store_tail(out + i, n - i, (te_row_load_tail(x + i, n - i, 0) - shift) - shiftLog);
}

/// Row `u`'s scores at keys j..<j+16 as softmax weighs them: `x·scale + mask`, and -inf at
/// keys from `limit` on (hidden, or past the row). Reads nothing at or past `limit`.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_rows_score(const float *x, const float *mask, long j, long limit, te_row16 scale) {
    if (j + 16 <= limit) {
        const te_row16 scaled = *(const te_row16u *)(x + j) * scale;
        return mask ? scaled + *(const te_row16u *)(mask + j) : scaled;
    }
    if (j >= limit) return -INFINITY;
    const te_row16 scaled = te_row_load_tail(x + j, limit - j, 0) * scale;
    const te_row16 value = mask ? scaled + te_row_load_tail(mask + j, limit - j, 0) : scaled;
    const te_rowint16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return te_row_select(lane < (te_rowint16)(int)(limit - j), value, (te_row16)-INFINITY);
}

/// Stores `v` at keys j..<j+16 of a row of n, nothing past it.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 void
te_rows_store(float *out, long j, long n, te_row16 v) {
    if (j + 16 <= n) {
        *(te_row16u *)(out + j) = v;
    } else {
        te_row_store_tail(out + j, n - j, v);
    }
}

/// The softmax of `count` ≤ 4 rows of n > 0 floats at once, their instructions interleaved:
/// one row of 128 (attention's) is a chain of dependent reductions and exponentials that keeps a
/// core waiting, four rows side by side keep its units busy. See ``te_softmax_rows_avx512``.
/// With `ahead` > 0, the pass of exponentials asks for each row's floats `ahead` floats on (the
/// next group's rows), so that the next maxima find them in cache: 8192 rows of 128 from beyond
/// L2 on one core, 440 → 313 µs.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 void
te_softmax_row_group(const float *const *x, float *const *out, const float *const *mask, const long *limit,
                     const int count, long n, float scale, long ahead) {
    const te_row16 factor = scale;
    if (n <= 16) {
        // One vector per row (attention over a short sentence): the exponentials stay in
        // registers and are stored once, weighed. A masked store read back at once waits for the
        // store to complete.
#pragma clang loop unroll(full)
        for (int u = 0; u < count; u++) {
            const te_row16 score = te_rows_score(x[u], mask[u], 0, limit[u], factor);
            const te_row16 shift = te_row_max(__builtin_elementwise_max((te_row16)-INFINITY, score));
            const te_row16 e = te_row_exp(score - shift);
            te_rows_store(out[u], 0, n, e * (1 / te_row_sum(e)));
        }
        return;
    }
    // The maxima pass NaNs over: a NaN score's exponential is NaN, and so is its row's sum and
    // every weight of the row, as with a NaN maximum.
    te_row16 maxima[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (long j = 0; j < n; j += 16) {
#pragma clang loop unroll(full)
        for (int u = 0; u < count; u++) {
            maxima[u] = __builtin_elementwise_max(maxima[u], te_rows_score(x[u], mask[u], j, limit[u], factor));
        }
    }
    te_row16 shift[4], sums[4] = {0, 0, 0, 0};
#pragma clang loop unroll(full)
    for (int u = 0; u < count; u++) shift[u] = te_row_max(maxima[u]);
    for (long j = 0; j < n; j += 16) {
#pragma clang loop unroll(full)
        for (int u = 0; u < count; u++) {
            // A prefetch never faults, past the last row included.
            if (ahead > 0) __builtin_prefetch(x[u] + ahead + j, 0, 3);
            // Keys past the limit score -inf: their weight is stored as 0.
            const te_row16 e = te_row_exp(te_rows_score(x[u], mask[u], j, limit[u], factor) - shift[u]);
            te_rows_store(out[u], j, n, e);
            sums[u] += e;
        }
    }
    te_row16 inverse[4];
#pragma clang loop unroll(full)
    for (int u = 0; u < count; u++) inverse[u] = 1 / te_row_sum(sums[u]);
    for (long j = 0; j + 16 <= n; j += 16) {
#pragma clang loop unroll(full)
        for (int u = 0; u < count; u++) *(te_row16u *)(out[u] + j) *= inverse[u];
    }
    const long tail = n % 16;
    if (tail != 0) {
#pragma clang loop unroll(full)
        for (int u = 0; u < count; u++) {
            float *end = out[u] + n - tail;
            te_row_store_tail(end, tail, te_row_load_tail(end, tail, 0) * inverse[u]);
        }
    }
}

/// `max(a, b)` lane by lane, passing NaNs over (`vmaxps` returns its second operand when either is NaN).
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_row_max_passing_nan(te_row16 a, te_row16 b) {
    return (te_row16)__builtin_ia32_maxps512((te_row_v16sf)a, (te_row_v16sf)b, 4);
}

/// `v` at j..<j+16 of a row of n, lanes past the row `padding`.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_row_load(const float *row, long j, long n, float padding) {
    return j + 16 <= n ? *(const te_row16u *)(row + j) : te_row_load_tail(row + j, n - j, padding);
}

/// Rows at least this long are taken one at a time (``te_softmax_long_row``): four of them side by
/// side (``te_softmax_row_group``) fill the L1 cache from 1024 floats on (32 KiB of scores and
/// weights) and the L2 from about 30 000 (a language model's vocabulary). A million scores in rows
/// of 2048 took 408 µs four at a time against 308 µs one at a time; in rows of 512, 335 µs both ways.
#define TE_SOFTMAX_LONG_ROW 1024

/// The score `x·scale + mask` at keys j..<j+16, all of them before the row's limit.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_long_row_score(const float *x, const float *mask, long j, te_row16 scale) {
    const te_row16 scaled = *(const te_row16u *)(x + j) * scale;
    return mask ? scaled + *(const te_row16u *)(mask + j) : scaled;
}

/// The softmax of one row of n > 0 floats whose scores are `x·scale + mask` and -inf from `limit`
/// on, as ``te_softmax_row_group`` computes it for short rows, four vectors at a time so that no
/// pass waits on one chain of dependent instructions. The maxima pass NaNs over (`vmaxps` returns
/// its second operand when either is NaN); a NaN score's weight is NaN, and so is its row's sum.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 void
te_softmax_long_row(const float *x, float *out, const float *mask, long limit, long n, float scale) {
    const te_row16 factor = scale;
    te_row16 maxima[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    // Whole steps of four vectors before the limit, then vector by vector to the end of the row.
    long j = 0;
    for (; j + 64 <= limit; j += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) {
            const te_row16 score = te_long_row_score(x, mask, j + 16 * u, factor);
            maxima[u] = te_row_max_passing_nan(score, maxima[u]);
        }
    }
    const long whole = j;
    for (; j < n; j += 16) {
        const te_row16 score = te_rows_score(x, mask, j, limit, factor);
        maxima[0] = te_row_max_passing_nan(score, maxima[0]);
    }
    const te_row16 shift = te_row_max(__builtin_elementwise_max(__builtin_elementwise_max(maxima[0], maxima[1]),
                                                                __builtin_elementwise_max(maxima[2], maxima[3])));
    te_row16 sums[4] = {0, 0, 0, 0};
    for (j = 0; j < whole; j += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) {
            const te_row16 e = te_row_exp(te_long_row_score(x, mask, j + 16 * u, factor) - shift);
            *(te_row16u *)(out + j + 16 * u) = e;
            sums[u] += e;
        }
    }
    for (; j < n; j += 16) {
        // Keys past the limit score -inf: their weight is stored as 0.
        const te_row16 e = te_row_exp(te_rows_score(x, mask, j, limit, factor) - shift);
        te_rows_store(out, j, n, e);
        sums[0] += e;
    }
    const te_row16 inverse = 1 / te_row_sum((sums[0] + sums[1]) + (sums[2] + sums[3]));
    for (j = 0; j + 16 <= n; j += 16) *(te_row16u *)(out + j) *= inverse;
    if (j < n) te_row_store_tail(out + j, n - j, te_row_load_tail(out + j, n - j, 0) * inverse);
}

/// The softmax of `rows` rows of n ≥ ``TE_SOFTMAX_LONG_ROW`` floats whose scores are the values
/// themselves (no scale, mask or limit), its passes pipelined across rows: one loop computes row
/// r's exponentials (the arithmetic), scales row r-1 by its sum (a pass over memory) and finds row
/// r+1's maximum (another), so that the core's arithmetic and its loads and stores overlap instead
/// of taking turns. 32 rows of 30 522 on one core: 225 µs, against 292 µs one row at a time
/// (``te_softmax_long_row``) and 301 µs four rows side by side. In place when `out` is `x`: a row is
/// read before it is written, and row r+1 is read before row r+1 is written.
static TE_ROWS_AVX512 void te_softmax_plain_rows(const float *x, long ldx, float *out, long ldo, long rows, long n) {
    te_row16 maxima[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    long j = 0;
    for (; j + 64 <= n; j += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) maxima[u] = te_row_max_passing_nan(*(const te_row16u *)(x + j + 16 * u), maxima[u]);
    }
    for (; j < n; j += 16) maxima[0] = te_row_max_passing_nan(te_row_load(x, j, n, -INFINITY), maxima[0]);
    float shift = te_row_max(__builtin_elementwise_max(__builtin_elementwise_max(maxima[0], maxima[1]),
                                                       __builtin_elementwise_max(maxima[2], maxima[3])));
    float *previous = 0;
    te_row16 previousInverse = 0;
    for (long r = 0; r < rows; r++) {
        const float *row = x + r * ldx;
        float *target = out + r * ldo;
        const float *next = r + 1 < rows ? row + ldx : 0;
        const te_row16 rowShift = shift;
        te_row16 sums[4] = {0, 0, 0, 0};
        te_row16 nextMaxima[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        for (j = 0; j + 64 <= n; j += 64) {
#pragma clang loop unroll(full)
            for (int u = 0; u < 4; u++) {
                const te_row16 e = te_row_exp(*(const te_row16u *)(row + j + 16 * u) - rowShift);
                *(te_row16u *)(target + j + 16 * u) = e;
                sums[u] += e;
            }
            if (previous) {
#pragma clang loop unroll(full)
                for (int u = 0; u < 4; u++) *(te_row16u *)(previous + j + 16 * u) *= previousInverse;
            }
            if (next) {
#pragma clang loop unroll(full)
                for (int u = 0; u < 4; u++) {
                    nextMaxima[u] = te_row_max_passing_nan(*(const te_row16u *)(next + j + 16 * u), nextMaxima[u]);
                }
            }
        }
        for (; j < n; j += 16) {
            // Padding lanes hold -inf, whose exponential is 0.
            const te_row16 e = te_row_exp(te_row_load(row, j, n, -INFINITY) - rowShift);
            te_rows_store(target, j, n, e);
            sums[0] += e;
            if (previous) te_rows_store(previous, j, n, te_row_load(previous, j, n, 0) * previousInverse);
            if (next) nextMaxima[0] = te_row_max_passing_nan(te_row_load(next, j, n, -INFINITY), nextMaxima[0]);
        }
        previous = target;
        previousInverse = 1 / te_row_sum((sums[0] + sums[1]) + (sums[2] + sums[3]));
        shift = te_row_max(__builtin_elementwise_max(__builtin_elementwise_max(nextMaxima[0], nextMaxima[1]),
                                                     __builtin_elementwise_max(nextMaxima[2], nextMaxima[3])));
    }
    if (!previous) return;
    for (j = 0; j + 16 <= n; j += 16) *(te_row16u *)(previous + j) *= previousInverse;
    if (j < n) te_row_store_tail(previous + j, n - j, te_row_load_tail(previous + j, n - j, 0) * previousInverse);
}

/// The softmax of `rows` rows of n > 0 floats, `x` rows `ldx` apart into `out` rows `ldo` apart
/// (in place when they are the same), each row's scores taken as `x·scale + mask` first: `mask`
/// (NULL for none) has its rows `maskRowStride` apart and its keys contiguous. When `causal`,
/// row r sees only its first `visible + r` keys, none when that is 0 or less (a causal
/// attention's block of queries): the others weigh 0. A row with no key it may see, or with a
/// NaN, is NaN throughout, as in ``te_log_softmax_row_avx512``. Four rows at a time, or one at a time
/// from ``TE_SOFTMAX_LONG_ROW`` floats on.
static TE_ROWS_AVX512 void te_softmax_rows_avx512(const float *x, long ldx, float *out, long ldo, long rows, long n,
                                                  float scale, const float *mask, long maskRowStride, int causal,
                                                  long visible) {
    if (n >= TE_SOFTMAX_LONG_ROW && mask == 0 && scale == 1 && !causal) {
        te_softmax_plain_rows(x, ldx, out, ldo, rows, n);
        return;
    }
    if (n >= TE_SOFTMAX_LONG_ROW) {
        for (long row = 0; row < rows; row++) {
            const long seen = visible + row;
            const long limit = !causal || seen > n ? n : (seen < 0 ? 0 : seen);
            te_softmax_long_row(x + row * ldx, out + row * ldo, mask ? mask + row * maskRowStride : 0, limit, n,
                                scale);
        }
        return;
    }
    // The next group of four rows starts four rows on.
    const long ahead = 4 * ldx;
    long r = 0;
    for (; r < rows; r += 4) {
        const float *sources[4];
        float *targets[4];
        const float *masks[4];
        long limits[4];
        const int count = rows - r >= 4 ? 4 : (int)(rows - r);
        for (int u = 0; u < 4; u++) {
            const long row = r + (u < count ? u : 0);
            sources[u] = x + row * ldx;
            targets[u] = out + row * ldo;
            masks[u] = mask ? mask + row * maskRowStride : 0;
            const long seen = visible + row;
            limits[u] = !causal || seen > n ? n : (seen < 0 ? 0 : seen);
        }
        switch (count) {
        case 4: te_softmax_row_group(sources, targets, masks, limits, 4, n, scale, ahead); break;
        case 3: te_softmax_row_group(sources, targets, masks, limits, 3, n, scale, ahead); break;
        case 2: te_softmax_row_group(sources, targets, masks, limits, 2, n, scale, ahead); break;
        default: te_softmax_row_group(sources, targets, masks, limits, 1, n, scale, ahead); break;
        }
    }
}
#undef TE_ROW_MAX_STEP

/// Layer norm of one contiguous row of n > 0 floats, as `RowKernels.layerNorm`: the mean, the
/// centred variance in a second pass (no cancellation, as E[x²] − mean² would have), then
/// `(x − mean) · (1/√(variance + ε))`, times `gamma` plus `beta` (fused) when they are given. Four
/// vectors at a time with four running sums in each pass: with the Swift kernel's two chains of
/// eight lanes, a row of 384 waited on its additions, and a layer norm over rows of 384 took half
/// again the time the calibrated rows predicted.
static TE_ROWS_AVX512 void te_layer_norm_row_avx512(const float *x, float *out, long n, float epsilon,
                                                    const float *gamma, const float *beta) {
    te_row16 sums[4] = {0, 0, 0, 0};
    long i = 0;
    for (; i + 64 <= n; i += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) sums[u] += *(const te_row16u *)(x + i + 16 * u);
    }
    for (int u = 0; i + 16 <= n; i += 16, u++) sums[u] += *(const te_row16u *)(x + i);
    if (i < n) sums[3] += te_row_load_tail(x + i, n - i, 0.0f);
    const float mean = te_row_sum((sums[0] + sums[1]) + (sums[2] + sums[3])) / (float)n;
    const te_row16 center = mean;
    te_row16 squares[4] = {0, 0, 0, 0};
    i = 0;
    for (; i + 64 <= n; i += 64) {
#pragma clang loop unroll(full)
        for (int u = 0; u < 4; u++) {
            const te_row16 d = *(const te_row16u *)(x + i + 16 * u) - center;
            squares[u] = __builtin_elementwise_fma(d, d, squares[u]);
        }
    }
    for (int u = 0; i + 16 <= n; i += 16, u++) {
        const te_row16 d = *(const te_row16u *)(x + i) - center;
        squares[u] = __builtin_elementwise_fma(d, d, squares[u]);
    }
    if (i < n) {
        // Padding lanes hold the mean: they add nothing.
        const te_row16 d = te_row_load_tail(x + i, n - i, mean) - center;
        squares[3] = __builtin_elementwise_fma(d, d, squares[3]);
    }
    const float variance = te_row_sum((squares[0] + squares[1]) + (squares[2] + squares[3])) / (float)n;
    const float factor = 1.0f / sqrtf(variance + epsilon);
    const te_row16 scale = factor;
    i = 0;
    if (gamma && beta) {
        for (; i + 16 <= n; i += 16) {
            const te_row16 normalized = (*(const te_row16u *)(x + i) - center) * scale;
            *(te_row16u *)(out + i) =
                __builtin_elementwise_fma(normalized, *(const te_row16u *)(gamma + i), *(const te_row16u *)(beta + i));
        }
        if (i < n) {
            const long rest = n - i;
            const te_row16 normalized = (te_row_load_tail(x + i, rest, 0.0f) - center) * scale;
            te_row_store_tail(out + i, rest,
                              __builtin_elementwise_fma(normalized, te_row_load_tail(gamma + i, rest, 0.0f),
                                                        te_row_load_tail(beta + i, rest, 0.0f)));
        }
        return;
    }
    for (; i + 16 <= n; i += 16) *(te_row16u *)(out + i) = (*(const te_row16u *)(x + i) - center) * scale;
    if (i < n) te_row_store_tail(out + i, n - i, (te_row_load_tail(x + i, n - i, 0.0f) - center) * scale);
}

#endif
