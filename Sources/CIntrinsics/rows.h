// Row kernels with AVX-512: softmax and log-softmax of one contiguous row, 16 lanes at a time, for
// CPUs that have it (the Swift row kernels are built for AVX2's 8 lanes; see docs/ARCHITECTURE.md,
// "CPU features"). The same arithmetic as the Swift kernels (`RowKernels.softmax`,
// `VectorMath.expOfNonPositive`): the same clamp, reduction and polynomial, each step fused alike,
// and the same single rounding of p·2ⁿ (one `vscalefps` here, two exact multiplications there), so
// an element's exponential is the same float; only the order of the row's sum differs.
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

/// `eˣ` for x ≤ 0 or NaN (softmax's shifted values): below -104 it is 0; NaN stays NaN.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16 te_row_exp(te_row16 x) {
    typedef float te_v16sf __attribute__((vector_size(64)));
    // `vmaxps` returns its second operand when either is NaN, so NaN passes the clamp.
    const te_row16 clamped = (te_row16)__builtin_ia32_maxps512((te_v16sf)(te_row16)-104.0f, (te_v16sf)x, 4);
    const te_row16 n = __builtin_elementwise_floor(__builtin_elementwise_fma(clamped, (te_row16)1.44269504f, (te_row16)0.5f));
    te_row16 r = __builtin_elementwise_fma(n, (te_row16)-0.693359375f, clamped);
    r = __builtin_elementwise_fma(n, (te_row16)2.12194440e-4f, r);
    te_row16 p = 1.9875691500e-4f;
    p = __builtin_elementwise_fma(p, r, (te_row16)1.3981999507e-3f);
    p = __builtin_elementwise_fma(p, r, (te_row16)8.3334519073e-3f);
    p = __builtin_elementwise_fma(p, r, (te_row16)4.1665795894e-2f);
    p = __builtin_elementwise_fma(p, r, (te_row16)1.6666665459e-1f);
    p = __builtin_elementwise_fma(p, r, (te_row16)5.0000001201e-1f);
    p = __builtin_elementwise_fma(p, r * r, r + 1);
    // p · 2ⁿ in one instruction (`vscalefps`), rounded once, into a subnormal where it must be.
    return (te_row16)__builtin_ia32_scalefps512_mask((te_v16sf)p, (te_v16sf)n, (te_v16sf)p, (unsigned short)0xFFFF, 4);
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

/// Loads `count` < 16 floats, the other lanes `padding`.
static inline __attribute__((always_inline)) TE_ROWS_AVX512 te_row16
te_row_load_tail(const float *x, long count, float padding) {
    float lanes[16];
    for (int i = 0; i < 16; i++) lanes[i] = i < count ? x[i] : padding;
    return *(const te_row16u *)lanes;
}

/// `out = exp(x - max) / Σ exp(x - max)` over a row of n > 0 floats, or `(x - max) - log Σ` when
/// `logarithmic`. A NaN anywhere makes the maximum NaN, and so the whole row, as in the Swift kernel.
static TE_ROWS_AVX512 void te_softmax_row_avx512(const float *x, float *out, long n, int logarithmic) {
    // The maximum, with NaNs tracked apart (a comparison with NaN is false).
    te_row16 maxima = -INFINITY;
    te_rowint16 nan = 0;
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        const te_row16 v = *(const te_row16u *)(x + i);
        maxima = te_row_select(v > maxima, v, maxima);
        nan |= v != v;
    }
    if (i < n) {
        const te_row16 v = te_row_load_tail(x + i, n - i, -INFINITY);
        maxima = te_row_select(v > maxima, v, maxima);
        nan |= v != v;
    }
    const float maximum = __builtin_reduce_or(nan) ? NAN : te_row_max(maxima);
    const te_row16 shift = maximum;
    // The exponentials and their sum; stored unless only their sum is wanted.
    te_row16 sums = 0;
    for (i = 0; i + 16 <= n; i += 16) {
        const te_row16 e = te_row_exp(*(const te_row16u *)(x + i) - shift);
        if (!logarithmic) *(te_row16u *)(out + i) = e;
        sums += e;
    }
    if (i < n) {
        // Padding lanes hold -inf, whose exponential is 0.
        const te_row16 e = te_row_exp(te_row_load_tail(x + i, n - i, -INFINITY) - shift);
        if (!logarithmic) for (long j = 0; j < n - i; j++) out[i + j] = e[j];
        sums += e;
    }
    const float total = te_row_sum(sums);
    if (logarithmic) {
        const float logTotal = logf(total);
        const te_row16 shiftLog = logTotal;
        for (i = 0; i + 16 <= n; i += 16) *(te_row16u *)(out + i) = (*(const te_row16u *)(x + i) - shift) - shiftLog;
        for (; i < n; i++) out[i] = (x[i] - maximum) - logTotal;
        return;
    }
    const float factor = 1 / total;
    const te_row16 scale = factor;
    for (i = 0; i + 16 <= n; i += 16) *(te_row16u *)(out + i) *= scale;
    for (; i < n; i++) out[i] *= factor;
}

#endif
