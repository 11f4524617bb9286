// Scaled dot-product attention with AVX-512, by blocks of up to 32 queries whose scores are kept
// transposed: `Sᵀ = K·Qᵀ` (keys down, queries across), so that a block's scores are one packed
// panel of B (``te_pack_b_panels``'s [depth][32] layout) without a copy. Each query's softmax runs
// down a column, sixteen queries to a vector, with no reduction across lanes; the weighted values
// come out transposed too, `Oᵀ = Vᵀ·Pᵀ`, reading the weights in place as that product's B, and are
// divided by each query's sum as they are transposed into the output. Against a block of query
// rows (`S = Q·Kᵀ`, a softmax along each row, `O = P·V`) this packs neither the weights for the
// second product nor the queries' rows twice, and takes no horizontal maximum or sum.
#ifndef TENSORENGINE_ATTENTION_H
#define TENSORENGINE_ATTENTION_H

#include "products.h"
#include "rows.h"

/// Queries per block: one packed panel of B.
enum { TE_ATTENTION_QUERIES = TE_NR };

/// An operand of attention as a matrix: element (i, p) at base[i·rowStride + p·columnStride].
typedef struct {
    const float *base;
    long rowStride;
    long columnStride;
} te_attention_matrix;

/// An attention mask for one batch: the score of query i at key j is offset by
/// base[i·queryStride + j·keyStride]; `base` NULL for none.
typedef struct {
    const float *base;
    long queryStride;
    long keyStride;
} te_attention_mask;

/// Floats of scratch ``te_attention_queries`` needs: the keys packed as A, the values packed
/// transposed as A, one block's queries as a panel, its scores, its mask transposed and its
/// transposed result (each part rounded up to whole 64-byte lines).
static inline long te_attention_scratch_floats(long lk, long d, long dv) {
    const long parts[6] = {te_packed_a_floats(lk, d), te_packed_a_floats(dv, lk), te_packed_b_floats(d, TE_NR),
                           lk * TE_NR, lk * TE_NR, dv * TE_NR};
    long total = 0;
    for (int part = 0; part < 6; part++) total += (parts[part] + 15) / 16 * 16;
    return total;
}

/// The mask's values for queries [first, first + count) at every key, transposed into
/// `transposed` as [lk][32] (the lanes past `count` 0), when they vary along the queries.
static TE_AVX512 void
te_attention_transpose_mask(te_attention_mask mask, long first, long count, long lk, float *transposed) {
    for (long j = 0; j < lk; j++) {
        float *row = transposed + j * TE_NR;
        for (long q = 0; q < TE_NR; q++)
            row[q] = q < count ? mask.base[(first + q) * mask.queryStride + j * mask.keyStride] : 0;
    }
}

/// The softmax of each of a block's 32 columns of scores (`scores`, [lk][32]) in place, each
/// score taken as `score·scale + mask` first: the mask's value for the key broadcast across the
/// queries (`keyMask`, values `keyStride` apart), or per query and key (`maskT`, [lk][32]), or
/// none. When `causal`, lane q sees key j only when j ≤ q + `causalOffset`; the keys it may not see
/// weigh 0. The weights are left unnormalised: `inverse` receives each column's 1 / Σ. A column
/// with a NaN, or with no key it may see, comes out NaN, as the row kernels make it
/// (``te_softmax_rows_avx512``).
static TE_AVX512 void
te_attention_weigh(float *scores, long lk, const float *keyMask, long keyStride, const float *maskT, float scale,
                   int causal, long causalOffset, te_float16 inverse[2]) {
    const te_float16 factor = scale;
    const te_rowint16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    te_float16 maxima[2] = {-INFINITY, -INFINITY};
    // The scores as weighed, stored back, and each column's greatest (NaNs passed over).
    for (long j = 0; j < lk; j++) {
        float *row = scores + j * TE_NR;
#pragma clang loop unroll(full)
        for (int half = 0; half < 2; half++) {
            te_float16 score = *(te_float16u *)(row + 16 * half) * factor;
            if (keyMask) score += keyMask[j * keyStride];
            if (maskT) score += *(const te_float16u *)(maskT + j * TE_NR + 16 * half);
            if (causal) {
                const te_rowint16 seen = lane + (te_rowint16)(int)(16 * half) >= (te_rowint16)(int)(j - causalOffset);
                score = te_row_select(seen, score, (te_float16)-INFINITY);
            }
            *(te_float16u *)(row + 16 * half) = score;
            maxima[half] = __builtin_elementwise_max(maxima[half], score);
        }
    }
    te_float16 sums[2][2] = {{0, 0}, {0, 0}};
    long j = 0;
    // Two keys at a time, with two sums per half, so that no chain of additions holds a core up.
    for (; j + 2 <= lk; j += 2) {
#pragma clang loop unroll(full)
        for (int step = 0; step < 2; step++) {
#pragma clang loop unroll(full)
            for (int half = 0; half < 2; half++) {
                te_float16u *weight = (te_float16u *)(scores + (j + step) * TE_NR + 16 * half);
                const te_float16 e = te_row_exp(*weight - maxima[half]);
                *weight = e;
                sums[step][half] += e;
            }
        }
    }
    for (; j < lk; j++) {
#pragma clang loop unroll(full)
        for (int half = 0; half < 2; half++) {
            te_float16u *weight = (te_float16u *)(scores + j * TE_NR + 16 * half);
            const te_float16 e = te_row_exp(*weight - maxima[half]);
            *weight = e;
            sums[0][half] += e;
        }
    }
    inverse[0] = 1 / (sums[0][0] + sums[1][0]);
    inverse[1] = 1 / (sums[0][1] + sums[1][1]);
}

/// Rows [0, count) of the output (rows `ldo` apart) from the transposed result `resultT`
/// ([dv][32]), each query's row multiplied by its `inverse`: 16 × 16 blocks transposed in registers.
static TE_AVX512 void
te_attention_store(const float *resultT, long dv, long count, const te_float16 inverse[2], float *out, long ldo) {
    float scales[TE_NR];
    *(te_float16u *)scales = inverse[0];
    *(te_float16u *)(scales + 16) = inverse[1];
    for (long c0 = 0; c0 < dv; c0 += 16) {
        const long channels = dv - c0 < 16 ? dv - c0 : 16;
        const unsigned short lanes = te_lanes(channels);
        for (long q0 = 0; q0 < count; q0 += 16) {
            te_float16 rows[16], columns[16];
#pragma clang loop unroll(full)
            for (int c = 0; c < 16; c++)
                rows[c] = c < channels ? *(const te_float16u *)(resultT + (c0 + c) * TE_NR + q0) : (te_float16)0;
            te_transpose16(rows, columns);
            const long queries = count - q0 < 16 ? count - q0 : 16;
            for (long q = 0; q < queries; q++)
                __builtin_ia32_storeups512_mask(out + (q0 + q) * ldo + c0,
                                                (te_v16sf)(columns[q] * scales[q0 + q]), lanes);
        }
    }
}

/// Attention for queries [first, end) of one batch of `lq` queries over `lk` keys:
/// `out[i] = softmax(q[i]·kᵀ·scale + mask[i]) · v`, queries and keys of depth `d`, values of
/// depth `dv`, row i of the result at out + i·ldo (`out` at the batch's row 0). Keys and values
/// are packed once, then the queries go 32 at a time. When `causal`, query i sees keys
/// j ≤ i + lk - lq. `scratch` holds ``te_attention_scratch_floats`` floats, 64-byte aligned. lk,
/// d and dv are positive.
static TE_AVX512 void
te_attention_queries(long lq, long lk, long d, long dv, te_attention_matrix q, te_attention_matrix k,
                     te_attention_matrix v, te_attention_mask mask, float scale, int causal, long first, long end,
                     float *out, long ldo, float *scratch) {
    float *packedK = scratch;
    float *packedVT = packedK + (te_packed_a_floats(lk, d) + 15) / 16 * 16;
    float *panelQ = packedVT + (te_packed_a_floats(dv, lk) + 15) / 16 * 16;
    float *scores = panelQ + (te_packed_b_floats(d, TE_NR) + 15) / 16 * 16;
    float *maskT = scores + lk * TE_NR;
    float *resultT = maskT + lk * TE_NR;
    te_pack_a_whole_strided(k.base, k.rowStride, k.columnStride, lk, d, packedK);
    // Vᵀ as A: element (c, j) of Vᵀ is element (j, c) of V.
    te_pack_a_whole_strided(v.base, v.columnStride, v.rowStride, dv, lk, packedVT);
    const int perKey = mask.base && mask.queryStride == 0;
    // Qᵀ as B: a row-major Q is Qᵀ stored transposed.
    const int rowMajorQueries = q.columnStride == 1;
    const long ldq = rowMajorQueries ? q.rowStride : q.columnStride;
    for (long block = first; block < end; block += TE_ATTENTION_QUERIES) {
        const long count = end - block < TE_ATTENTION_QUERIES ? end - block : TE_ATTENTION_QUERIES;
        te_pack_b_panels(rowMajorQueries, d, count, q.base + block * q.rowStride, ldq, panelQ, 0, 1);
        te_sgemm_packed_ab(lk, TE_NR, d, packedK, panelQ, 0, TE_NR, scores, TE_NR, 0);
        if (mask.base && !perKey) te_attention_transpose_mask(mask, block, count, lk, maskT);
        te_float16 inverse[2];
        te_attention_weigh(scores, lk, perKey ? mask.base : NULL, mask.keyStride,
                           mask.base && !perKey ? maskT : NULL, scale, causal, block + lk - lq, inverse);
        te_sgemm_packed_ab(dv, TE_NR, lk, packedVT, scores, 0, TE_NR, resultT, TE_NR, 0);
        te_attention_store(resultT, dv, count, inverse, out + block * ldo, ldo);
    }
}

#endif
