// Convolutions read in place with the output channels across the vector lanes, with AVX-512: the
// form of an implicit convolution (``te_sgemm_implicit``, products.h) for planes whose rows are
// short. Header-only like products.h, whose vector type, target attribute, bound, transpose and
// packing these share; callers check the CPU's flags first.
//
// ``te_sgemm_implicit`` puts 32 consecutive positions of a padded grid in a tile's lanes: a grid
// row holds the output row plus the window's overhang, and the last panel of a plane is partial,
// so on a 13 × 13 output (grid rows of 15, 195 positions in 7 panels of 32) a quarter of its
// arithmetic is thrown away. Here a tile is up to TE_CONV_POSITIONS positions of one output row
// by 32 output channels: each step of k broadcasts the input at those positions (consecutive
// floats of a padded or phase plane) and multiplies it by 32 filter values (a panel packed by
// ``te_pack_b_panels`` from the filters stored transposed), so no lane computes a position outside
// the output. The tile's sums are transposed in registers, 16 × 16 at a time, and stored by
// channel with the epilogue.
#ifndef TENSORENGINE_CONVOLUTIONS_H
#define TENSORENGINE_CONVOLUTIONS_H

#include "products.h"

/// Positions of one output row per tile: 2 × 14 sums, the two filter vectors and a broadcast fill
/// the 32 vector registers.
enum { TE_CONV_POSITIONS = 14 };

/// One row of a zero-padded plane: `width` floats, those at first..<first+count copied from `line`,
/// the others 0, written 16 at a time by masked loads and stores. An image's rows are tens of
/// floats: two fills and a copy from the C library per row took a ninth of a 3 × 3 convolution's
/// time on 56 × 56 planes.
static TE_AVX512 void te_pad_row(const float *line, long first, long count, float *target, long width) {
    const te_float16 zero = 0;
    for (long j = 0; j < width; j += 16) {
        const long lanes = width - j < 16 ? width - j : 16;
        // Lane l holds line[j + l - first] for first ≤ j + l < first + count.
        const long low = first - j < 0 ? 0 : (first - j > 16 ? 16 : first - j);
        const long high = first + count - j < 0 ? 0 : (first + count - j > 16 ? 16 : first + count - j);
        const unsigned short stored = (unsigned short)((1u << lanes) - 1);
        const unsigned short copied = (unsigned short)(((1u << high) - 1) & ~((1u << low) - 1));
        // Masked-off lanes read nothing, so the address may lie outside the line.
        const float *source = (const float *)((const char *)line + (j - first) * (long)sizeof(float));
        const te_float16 v = (te_float16)__builtin_ia32_loadups512_mask(source, (te_v16sf)zero, copied);
        __builtin_ia32_storeups512_mask(target + j, (te_v16sf)v, stored);
    }
}

/// The rows of both column phases of a stride-2 phase plane from one input row `columns` wide:
/// `even[j] = line[2j - left]` and `odd[j] = line[2j + 1 - left]` for j < `width`, 0 where that
/// column lies outside the row. Each 32 input floats are loaded once (masked at the row's ends)
/// and split into the two phases: one pass over the row, where a gather per phase read it twice
/// and wrote the padding by separate calls.
static TE_AVX512 void te_phase_rows2(const float *line, long columns, long left, float *even, float *odd, long width) {
    const te_float16 zero = 0;
    for (long j = 0; j < width; j += 16) {
        const long first = 2 * j - left;
        unsigned short lanes[2];
        for (int half = 0; half < 2; half++) {
            // Lane l reads column first + 16·half + l, inside 0..<columns.
            const long start = first + 16 * half;
            const long low = start < 0 ? (-start > 16 ? 16 : -start) : 0;
            const long high = columns - start < 0 ? 0 : (columns - start > 16 ? 16 : columns - start);
            lanes[half] = low >= high ? 0 : (unsigned short)(((1u << high) - 1u) & ~((1u << low) - 1u));
        }
        // Masked-off lanes read nothing, so the addresses may lie outside the line.
        const float *source = (const float *)((const char *)line + first * (long)sizeof(float));
        const te_float16 a = (te_float16)__builtin_ia32_loadups512_mask(source, (te_v16sf)zero, lanes[0]);
        const te_float16 b = (te_float16)__builtin_ia32_loadups512_mask(
            (const float *)((const char *)source + 16 * sizeof(float)), (te_v16sf)zero, lanes[1]);
        const unsigned short stored = width - j < 16 ? (unsigned short)((1u << (width - j)) - 1u) : 0xFFFF;
        const te_float16 evens =
            __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const te_float16 odds =
            __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        __builtin_ia32_storeups512_mask(even + j, (te_v16sf)evens, stored);
        __builtin_ia32_storeups512_mask(odd + j, (te_v16sf)odds, stored);
    }
}

/// One tile: `positions` outputs of one row (grid position `q` on, stored from `at` in each
/// channel's plane, planes `plane` floats apart from `c`) by the `channels` (≤ 32; 16 lanes each
/// in `halves` vectors) of panel `panel` of the packed filters. Each result starts from its
/// channel's `bias` plus the `residual`'s value at its place (laid out as the output; each NULL for
/// none) and is then bounded by `bounds` (NULL: none) as ``te_bounded16`` bounds. With `share` > 0,
/// the tile also asks for its share of the next panel's filters to be brought into the L2 cache:
/// the steps `ahead`, `ahead + share`, ... of each depth block (see ``te_conv_channels``). With
/// `streaming`, each step asks for the source two tiles on.
static inline __attribute__((always_inline)) TE_AVX512 void
te_channel_tile(const int positions, const int halves, long k, long n, const float *packed, long panel,
                const float *source, const long *rowOffsets, long q, float *c, long plane, long at, long channels,
                const float *bias, const float *residual, const float *bounds, long share, long ahead,
                int streaming) {
    te_float16 sum[TE_CONV_POSITIONS][2];
#pragma clang loop unroll(full)
    for (int r = 0; r < positions; r++) { sum[r][0] = 0; sum[r][1] = 0; }
    const long kb = te_depth_block(k), padded = (n + TE_NR - 1) / TE_NR * TE_NR;
    for (long p0 = 0; p0 < k; p0 += kb) {
        const long depth = k - p0 < kb ? k - p0 : kb;
        const float *f = packed + p0 * padded + panel * TE_NR * depth;
        const long *offsets = rowOffsets + p0;
        // The next panel of this block follows this one; past the last panel, nothing is asked.
        const float *next = f + TE_NR * depth;
        long fetch = share > 0 && (panel + 1) * TE_NR < n ? ahead : depth;
        for (long p = 0; p < depth; p++) {
            if (p == fetch) {
                __builtin_prefetch(next + p * TE_NR, 0, 2);
                __builtin_prefetch(next + p * TE_NR + 16, 0, 2);
                fetch += share;
            }
            const float *row = source + offsets[p] + q;
            if (streaming) __builtin_prefetch(row + 2 * TE_CONV_POSITIONS, 0, 3);
            const te_float16 f0 = *(const te_float16u *)(f + p * TE_NR);
            const te_float16 f1 = halves > 1 ? *(const te_float16u *)(f + p * TE_NR + 16) : f0;
#pragma clang loop unroll(full)
            for (int r = 0; r < positions; r++) {
                const te_float16 x = row[r];
                sum[r][0] = __builtin_elementwise_fma(x, f0, sum[r][0]);
                if (halves > 1) sum[r][1] = __builtin_elementwise_fma(x, f1, sum[r][1]);
            }
        }
    }
    const te_v16sf zero = (te_v16sf)(te_float16)0;
    const unsigned short lanes = (unsigned short)((1u << positions) - 1u);
#pragma clang loop unroll(full)
    for (int h = 0; h < halves; h++) {
        const long valid = channels - 16 * h < 16 ? channels - 16 * h : 16;
        const unsigned short present = (unsigned short)((1u << valid) - 1u);
        const te_float16 start =
            bias ? (te_float16)__builtin_ia32_loadups512_mask(bias + 16 * h, zero, present) : (te_float16)0;
        te_float16 rows[16], columns[16];
#pragma clang loop unroll(full)
        for (int r = 0; r < 16; r++) rows[r] = r < positions ? sum[r][h] + start : (te_float16)0;
        if (bounds && !residual) {
#pragma clang loop unroll(full)
            for (int r = 0; r < positions; r++) rows[r] = te_bounded16(rows[r], bounds[0], bounds[1]);
        }
        te_transpose16(rows, columns);
#pragma clang loop unroll(full)
        for (int j = 0; j < 16; j++) {
            if (j >= valid) break;
            const long offset = (16 * h + j) * plane + at;
            // The bias is in already, and without a residual the bound too.
            te_store_lanes(c + offset, lanes, columns[j], 0, 0, residual ? residual + offset : NULL,
                           residual ? bounds : NULL);
        }
    }
}

#define TE_CHANNEL_TILE(count)                                                                                   \
    case count:                                                                                                  \
        if (halves > 1)                                                                                          \
            te_channel_tile(count, 2, k, n, packed, t, source, rowOffsets, q, out, plane, at, channels, tileBias, \
                            tileResidual, bounds, share, tile, streaming);                                       \
        else                                                                                                     \
            te_channel_tile(count, 1, k, n, packed, t, source, rowOffsets, q, out, plane, at, channels, tileBias, \
                            tileResidual, bounds, share, tile, streaming);                                       \
        break;

/// Output rows `row0..<row1` of output channels `32·panel0 ..< min(32·panel1, n)` of a
/// convolution read in place, single-threaded. `packed`: the filters, `n` output channels by `k`
/// steps (row-major, k fastest), packed by ``te_pack_b_panels`` as B stored transposed. Step p of
/// position (oh, ow) reads source[rowOffsets[p] + oh·rowLength + ow] (the padded or phase planes of
/// ``te_sgemm_implicit``); the result goes to c + channel·plane + oh·outWidth + ow, with the
/// epilogue of ``te_channel_tile`` (`bias` per channel, `residual` laid out as the output).
///
/// With `prefetch`, the tiles of each panel share out the next panel's filters between them and
/// ask for them ahead (one tile, every step of k; seven tiles, every seventh): each tile of a
/// panel reads all of the panel's filters, and a model's filters, read once per call, come from
/// memory, so without it the first tile of each panel waits on memory with little arithmetic per
/// filter read while the others wait on nothing. Callers ask it of the call that computes a
/// panel's first tiles.
///
/// With `streaming` (a pointwise convolution reading its input's planes in place, which a model
/// has just written and which is often out of cache), every step of k also asks for the same
/// place two tiles on: a tile reads a few floats from each of k channel planes, more streams, a
/// plane apart, than the hardware's prefetchers follow. Padded phase planes, just written here,
/// are in cache already.
static TE_AVX512 void
te_conv_channels(long n, long k, const float *packed, const float *source, const long *rowOffsets, long row0,
                 long row1, long rowLength, long outWidth, float *c, long plane, const float *bias,
                 const float *residual, const float *bounds, long panel0, long panel1, int prefetch, int streaming) {
    __builtin_assume(rowOffsets != 0);
    const long tilesPerRow = (outWidth + TE_CONV_POSITIONS - 1) / TE_CONV_POSITIONS;
    const long share = prefetch ? (row1 - row0) * tilesPerRow : 0;
    for (long t = panel0; t < panel1; t++) {
        long tile = 0;
        const long channels = n - t * TE_NR < TE_NR ? n - t * TE_NR : TE_NR;
        if (channels <= 0) break;
        const int halves = channels > 16 ? 2 : 1;
        float *out = c + t * TE_NR * plane;
        const float *tileBias = bias ? bias + t * TE_NR : NULL;
        const float *tileResidual = residual ? residual + t * TE_NR * plane : NULL;
        for (long oh = row0; oh < row1; oh++) {
            for (long ow = 0; ow < outWidth; ow += TE_CONV_POSITIONS) {
                const long count = outWidth - ow < TE_CONV_POSITIONS ? outWidth - ow : TE_CONV_POSITIONS;
                const long q = oh * rowLength + ow, at = oh * outWidth + ow;
                switch (count) {
                    TE_CHANNEL_TILE(1) TE_CHANNEL_TILE(2) TE_CHANNEL_TILE(3) TE_CHANNEL_TILE(4)
                    TE_CHANNEL_TILE(5) TE_CHANNEL_TILE(6) TE_CHANNEL_TILE(7) TE_CHANNEL_TILE(8)
                    TE_CHANNEL_TILE(9) TE_CHANNEL_TILE(10) TE_CHANNEL_TILE(11) TE_CHANNEL_TILE(12)
                    TE_CHANNEL_TILE(13) TE_CHANNEL_TILE(14)
                }
                tile += 1;
            }
        }
    }
}
#undef TE_CHANNEL_TILE

#endif
