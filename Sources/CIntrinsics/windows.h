// Sliding-window kernels with AVX-512, one plane at a time: depthwise convolutions and max and
// average pooling, for CPUs that have it (the Swift striped kernels, OpenBLASBackend+Depthwise.swift
// and +StripedPooling.swift, serve the others and the shapes these do not take). Header-only like
// products.h, whose vector type, target attribute and bound these share; callers check the CPU's
// flags first.
//
// The planes are read in place: the loads at the left and right edges are masked, so the padding
// reads as zeros (or −∞ for a maximum) and nothing is copied; rows above and below the input are
// taps skipped. A depthwise block of output rows × 32 columns keeps its sums in registers over
// every tap, and each vector of an input row is loaded once per column tap and feeds every output
// row of the block that reads it (a 3 × 3 filter over 4 rows: 18 loads per 36 multiply-adds per
// vector, against 9 per 9 one row at a time).
#ifndef TENSORENGINE_WINDOWS_H
#define TENSORENGINE_WINDOWS_H

#include "products.h"

/// Output rows per block of the depthwise kernel.
enum { TE_DEPTHWISE_ROWS = 4 };

/// The lanes of a 16-float vector whose first lane is column `first` of a row of `columns` that
/// fall inside it: bit l set when 0 ≤ first + l < columns.
static inline __attribute__((always_inline)) unsigned short te_window_lanes(long first, long columns) {
    if (first >= 0 && first + 16 <= columns) return 0xFFFF;
    const long low = first < 0 ? -first : 0;
    const long high = columns - first < 16 ? columns - first : 16;
    if (low >= high) return 0;
    return (unsigned short)(((1u << high) - 1u) & ~((1u << low) - 1u));
}

/// The 16 taps kw..<kw + stride of 16 outputs whose first reads column `first` of `line` (stride
/// 1: tap kw of lane l reads first + l + kw; stride 2, kw even: first + 2l + kw and first + 2l +
/// kw + 1, the even and odd lanes of the 32 columns from first + kw). `lanes` masks the loads
/// (``te_window_lanes`` of first + kw, and of first + kw + 16 at stride 2); columns outside the
/// row read as `fill`.
static inline __attribute__((always_inline)) TE_AVX512 void
te_window_taps(const int stride, const float *line, long first, int kw, const unsigned short *lanes,
               te_float16 fill, te_float16 taps[2]) {
    if (stride == 1) {
        taps[0] = (te_float16)__builtin_ia32_loadups512_mask(line + first + kw, (te_v16sf)fill, lanes[0]);
        return;
    }
    const te_float16 low =
        (te_float16)__builtin_ia32_loadups512_mask(line + first + kw, (te_v16sf)fill, lanes[0]);
    const te_float16 high =
        (te_float16)__builtin_ia32_loadups512_mask(line + first + kw + 16, (te_v16sf)fill, lanes[1]);
    taps[0] = __builtin_shufflevector(low, high, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    taps[1] = __builtin_shufflevector(low, high, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}

/// `vectors` × 16 output columns from `column` on, of the output rows `row`..<`row` +
/// TE_DEPTHWISE_ROWS (those below `outRows` stored): each the bias plus every tap of the
/// `kernelRows` × `kernelColumns` filter (`stride` 1 or 2 on both axes, no dilation; `top` and
/// `left` the padding before), plus the residual's value at its place (NULL: none), then bounded by
/// `bounds` ([low, high], NULL: none) as ``te_bounded16`` does. Called with constant shapes, so
/// that the loops unroll and the sums stay in registers.
static inline __attribute__((always_inline)) TE_AVX512 void
te_depthwise_block(const int kernelRows, const int kernelColumns, const int stride, const int vectors,
                   const float *input, long rows, long columns, float *output, const float *residual, long outRows,
                   long outColumns, const te_float16 *weights, long top, long left, long row, long column,
                   float bias, const float *bounds) {
    const te_v16sf zero = (te_v16sf)(te_float16)0;
    te_float16 sum[TE_DEPTHWISE_ROWS][2];
    long first[2];
    unsigned short lanes[2][8][2];
#pragma clang loop unroll(full)
    for (int v = 0; v < vectors; v++) {
#pragma clang loop unroll(full)
        for (int r = 0; r < TE_DEPTHWISE_ROWS; r++) sum[r][v] = bias;
        first[v] = (column + 16 * v) * stride - left;
#pragma clang loop unroll(full)
        for (int kw = 0; kw < kernelColumns; kw += stride) {
            lanes[v][kw][0] = te_window_lanes(first[v] + kw, columns);
            lanes[v][kw][1] = te_window_lanes(first[v] + kw + 16, columns);
        }
    }
    // Input row j of the block (row·stride - top + j) is tap kh = j - r·stride of output row r.
#pragma clang loop unroll(full)
    for (int j = 0; j < (TE_DEPTHWISE_ROWS - 1) * stride + kernelRows; j++) {
        const long ih = row * stride - top + j;
        if (ih < 0 || ih >= rows) continue;
        const float *line = input + ih * columns;
#pragma clang loop unroll(full)
        for (int kw = 0; kw < kernelColumns; kw += stride) {
#pragma clang loop unroll(full)
            for (int v = 0; v < vectors; v++) {
                te_float16 taps[2];
                te_window_taps(stride, line, first[v], kw, lanes[v][kw], (te_float16)0, taps);
#pragma clang loop unroll(full)
                for (int t = 0; t < stride && kw + t < kernelColumns; t++) {
#pragma clang loop unroll(full)
                    for (int r = 0; r < TE_DEPTHWISE_ROWS; r++) {
                        const int kh = j - r * stride;
                        if (kh < 0 || kh >= kernelRows) continue;
                        sum[r][v] = __builtin_elementwise_fma(taps[t], weights[kh * kernelColumns + kw + t], sum[r][v]);
                    }
                }
            }
        }
    }
#pragma clang loop unroll(full)
    for (int v = 0; v < vectors; v++) {
        const unsigned short mask = te_window_lanes(column + 16 * v, outColumns);
#pragma clang loop unroll(full)
        for (int r = 0; r < TE_DEPTHWISE_ROWS; r++) {
            if (row + r >= outRows) continue;
            const long at = (row + r) * outColumns + column + 16 * v;
            te_float16 value = sum[r][v];
            if (residual) value += (te_float16)__builtin_ia32_loadups512_mask(residual + at, zero, mask);
            if (bounds) value = te_bounded16(value, bounds[0], bounds[1]);
            __builtin_ia32_storeups512_mask(output + at, (te_v16sf)value, mask);
        }
    }
}

/// One output plane of a depthwise convolution with a `kernelRows` × `kernelColumns` filter at
/// `stride`, constant: blocks of TE_DEPTHWISE_ROWS rows, 32 columns at a time (16 for a last strip
/// that fits in them).
static inline __attribute__((always_inline)) TE_AVX512 void
te_depthwise_plane_sized(const int kernelRows, const int kernelColumns, const int stride, const float *input,
                         long rows, long columns, float *output, const float *residual, long outRows, long outColumns,
                         const float *filter, long top, long left, float bias, const float *bounds) {
    te_float16 weights[25];
#pragma clang loop unroll(full)
    for (int t = 0; t < kernelRows * kernelColumns; t++) weights[t] = filter[t];
    for (long row = 0; row < outRows; row += TE_DEPTHWISE_ROWS) {
        long column = 0;
        for (; column + 16 < outColumns; column += 32) {
            te_depthwise_block(kernelRows, kernelColumns, stride, 2, input, rows, columns, output, residual, outRows,
                               outColumns, weights, top, left, row, column, bias, bounds);
        }
        if (column < outColumns) {
            te_depthwise_block(kernelRows, kernelColumns, stride, 1, input, rows, columns, output, residual, outRows,
                               outColumns, weights, top, left, row, column, bias, bounds);
        }
    }
}

/// Whether ``te_depthwise_plane_avx512`` computes a depthwise filter of this size and stride
/// (the same on both axes, without dilation): 3 × 3 and 5 × 5, at stride 1 or 2.
static inline int te_depthwise_takes(long kernelRows, long kernelColumns, long stride) {
    return ((kernelRows == 3 && kernelColumns == 3) || (kernelRows == 5 && kernelColumns == 5))
        && (stride == 1 || stride == 2);
}

/// One output plane (`outRows` × `outColumns`, contiguous) of a depthwise convolution at `stride`
/// on both axes, without dilation: output (oh, ow) = `bias` + Σ filter[kh][kw] · input[oh·stride -
/// top + kh][ow·stride - left + kw] over the taps inside the `rows` × `columns` input plane, plus
/// `residual`'s value at the same place (NULL: none), then bounded by `bounds` ([low, high], NULL:
/// none). A shape that ``te_depthwise_takes`` refuses writes nothing.
static TE_AVX512 void
te_depthwise_plane_avx512(const float *input, long rows, long columns, float *output, const float *residual,
                          long outRows, long outColumns, const float *filter, long kernelRows, long kernelColumns,
                          long stride, long top, long left, float bias, const float *bounds) {
#define TE_DEPTHWISE_PLANE(K, STRIDE)                                                                                  \
    te_depthwise_plane_sized(K, K, STRIDE, input, rows, columns, output, residual, outRows, outColumns, filter, top,  \
                             left, bias, bounds)
    if (!te_depthwise_takes(kernelRows, kernelColumns, stride)) return;
    if (kernelRows == 3) {
        if (stride == 1) TE_DEPTHWISE_PLANE(3, 1);
        else TE_DEPTHWISE_PLANE(3, 2);
    } else {
        if (stride == 1) TE_DEPTHWISE_PLANE(5, 1);
        else TE_DEPTHWISE_PLANE(5, 2);
    }
#undef TE_DEPTHWISE_PLANE
}

/// Max or average pooling: the lanes of 16 outputs of one window row (input row `line`, lane l's
/// taps from column first + l·stride on), folded into `total` (a running maximum or sum) and
/// `nans` (lanes that met a NaN, which wins a maximum). `lanes[kw]` masks the loads of
/// ``te_window_taps`` for tap kw; columns outside the row read as `fill`.
static inline __attribute__((always_inline)) TE_AVX512 void
te_pool_strip(const int average, const int kernelColumns, const int stride, const float *line, long first,
              const unsigned short lanes[][2], te_float16 fill, te_float16 *total, unsigned short *nans) {
#pragma clang loop unroll(full)
    for (int kw = 0; kw < kernelColumns; kw += stride) {
        te_float16 taps[2];
        te_window_taps(stride, line, first, kw, lanes[kw], fill, taps);
#pragma clang loop unroll(full)
        for (int t = 0; t < stride && kw + t < kernelColumns; t++) {
            const te_float16 value = taps[t];
            if (average) {
                *total += value;
            } else {
                // `vmaxps` itself (a NaN is tracked apart): `__builtin_elementwise_max` would
                // order NaNs as `fmaxf` does, three instructions.
                *total = (te_float16)__builtin_ia32_maxps512((te_v16sf)*total, (te_v16sf)value, 4);
                *nans |= (unsigned short)__builtin_ia32_cmpps512_mask((te_v16sf)value, (te_v16sf)value,
                                                                      3 /* unordered */, 0xFFFF, 4);
            }
        }
    }
}

/// Whether ``te_pool_plane_avx512`` computes a pooling window: 2 or 3 columns wide at column
/// stride 1 or 2, without dilation (any height and row stride).
static inline int te_pool_takes(long kernelColumns, long columnStride, long rowDilation, long columnDilation) {
    return (kernelColumns == 2 || kernelColumns == 3) && (columnStride == 1 || columnStride == 2) && rowDilation == 1
        && columnDilation == 1;
}

/// One output row of a pooling, 32 outputs at a time (16 for a last strip that fits in them).
static inline __attribute__((always_inline)) TE_AVX512 void
te_pool_row(const int average, const int kernelColumns, const int stride, const float *input, long rows,
            long columns, float *target, long outColumns, long oh, long kernelRows, long rowStride, long top,
            long left, float rowDivisor, const float *columnDivisors) {
    const te_float16 fill = average ? (te_float16)0.0f : (te_float16)(-__builtin_inff());
    for (long column = 0; column < outColumns; column += 32) {
        te_float16 total[2] = {fill, fill};
        unsigned short nans[2] = {0, 0};
        const int vectors = column + 16 < outColumns ? 2 : 1;
        // The loads' lanes inside the row, the same for every window row (``te_window_taps``).
        long first[2];
        unsigned short lanes[2][4][2];
#pragma clang loop unroll(full)
        for (int v = 0; v < 2; v++) {
            first[v] = (column + 16 * v) * stride - left;
#pragma clang loop unroll(full)
            for (int kw = 0; kw < kernelColumns; kw += stride) {
                lanes[v][kw][0] = te_window_lanes(first[v] + kw, columns);
                lanes[v][kw][1] = te_window_lanes(first[v] + kw + 16, columns);
            }
        }
        for (long kh = 0; kh < kernelRows; kh++) {
            const long ih = oh * rowStride - top + kh;
            if (ih < 0 || ih >= rows) continue;
            const float *line = input + ih * columns;
            te_pool_strip(average, kernelColumns, stride, line, first[0], lanes[0], fill, &total[0], &nans[0]);
            if (vectors == 2)
                te_pool_strip(average, kernelColumns, stride, line, first[1], lanes[1], fill, &total[1], &nans[1]);
        }
        for (int v = 0; v < vectors; v++) {
            const long at = column + 16 * v;
            const unsigned short mask = te_window_lanes(at, outColumns);
            te_float16 value = total[v];
            if (average) {
                const te_float16 divisors =
                    (te_float16)__builtin_ia32_loadups512_mask(columnDivisors + at, (te_v16sf)(te_float16)1.0f,
                                                                mask);
                value /= divisors * rowDivisor;
            } else {
                const te_float16 nan = __builtin_nanf("");
                value = (te_float16)__builtin_ia32_selectps_512(nans[v], (te_v16sf)nan, (te_v16sf)value);
            }
            __builtin_ia32_storeups512_mask(target + at, (te_v16sf)value, mask);
        }
    }
}

/// Lanes of `v` that are NaN.
static inline __attribute__((always_inline)) TE_AVX512 unsigned short te_nan_lanes(te_float16 v) {
    return (unsigned short)__builtin_ia32_cmpps512_mask((te_v16sf)v, (te_v16sf)v, 3 /* unordered */, 0xFFFF, 4);
}

/// The maximum of `count` ≤ 3 taps, NaN in a lane where a tap is NaN; on ties the later tap's value
/// (+0 or -0), as ``te_pool_strip``. `vmaxps` drops a NaN in its second operand, so a probe (the
/// taps' sum, NaN where a tap is NaN, or where +∞ meets -∞) finds the lanes to check tap by tap,
/// which is rare.
static inline __attribute__((always_inline)) TE_AVX512 te_float16
te_max_taps(const int count, const te_float16 *taps) {
    te_float16 maximum = taps[0], probe = taps[0];
#pragma clang loop unroll(full)
    for (int t = 1; t < count; t++) {
        maximum = (te_float16)__builtin_ia32_maxps512((te_v16sf)maximum, (te_v16sf)taps[t], 4);
        probe += taps[t];
    }
    unsigned short suspect = te_nan_lanes(probe);
    if (__builtin_expect(suspect != 0, 0)) {
        unsigned short nans = 0;
#pragma clang loop unroll(full)
        for (int t = 0; t < count; t++) nans |= te_nan_lanes(taps[t]);
        const te_float16 nan = __builtin_nanf("");
        maximum = (te_float16)__builtin_ia32_selectps_512(nans, (te_v16sf)nan, (te_v16sf)maximum);
    }
    return maximum;
}

/// The maximum down each of the 16 columns from `column` on (negative, or past the row's end:
/// -∞) over the input rows `start`..<`end` of a plane `columns` wide, NaN in a column that holds
/// one; -∞ where no row is read.
static inline __attribute__((always_inline)) TE_AVX512 te_float16
te_column_maxima(const float *input, long columns, long start, long end, long column) {
    const te_float16 lowest = -__builtin_inff();
    const unsigned short lanes = te_window_lanes(column, columns);
    te_float16 maximum = lowest, probe = 0;
    if (lanes == 0) return lowest;
    for (long ih = start; ih < end; ih++) {
        const te_float16 x =
            (te_float16)__builtin_ia32_loadups512_mask(input + ih * columns + column, (te_v16sf)lowest, lanes);
        maximum = (te_float16)__builtin_ia32_maxps512((te_v16sf)maximum, (te_v16sf)x, 4);
        probe += x;
    }
    if (__builtin_expect(te_nan_lanes(probe) != 0, 0)) {
        unsigned short nans = 0;
        for (long ih = start; ih < end; ih++) {
            nans |= te_nan_lanes(
                (te_float16)__builtin_ia32_loadups512_mask(input + ih * columns + column, (te_v16sf)lowest, lanes));
        }
        maximum = (te_float16)__builtin_ia32_selectps_512(nans, (te_v16sf)(te_float16)__builtin_nanf(""),
                                                         (te_v16sf)maximum);
    }
    return maximum;
}

/// The output rows of ``te_max_pool_plane_separable``, for a window `kernelColumns` (2 or 3) wide
/// at column stride `columnStride` (1 or 2), constants so that the taps unroll. Per 16 outputs,
/// the column maxima of the 16 · stride columns they start in and of the 16 after (carried to
/// the next 16 outputs) hold every tap: at stride 1 tap kw is those two vectors shifted by kw
/// lanes; at stride 2 taps 0 and 1 are the even and odd lanes of the first two, tap 2 the even
/// lanes shifted by one with the next vector's first lane.
static inline __attribute__((always_inline)) TE_AVX512 void
te_max_pool_rows(const int kernelColumns, const int columnStride, const float *input, long rows, long columns,
                 float *output, long outRows, long outColumns, long kernelRows, long rowStride, long top, long left) {
    for (long oh = 0; oh < outRows; oh++) {
        const long firstRow = oh * rowStride - top;
        const long start = firstRow < 0 ? 0 : firstRow;
        const long end = firstRow + kernelRows < rows ? firstRow + kernelRows : rows;
        float *target = output + oh * outColumns;
        te_float16 first = te_column_maxima(input, columns, start, end, -left);
        for (long ow = 0; ow < outColumns; ow += 16) {
            const long column = ow * columnStride - left;
            te_float16 taps[3];
            if (columnStride == 1) {
                const te_float16 next = te_column_maxima(input, columns, start, end, column + 16);
                taps[0] = first;
                taps[1] = __builtin_shufflevector(first, next, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
                taps[2] = __builtin_shufflevector(first, next, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17);
                first = next;
            } else {
                const te_float16 second = te_column_maxima(input, columns, start, end, column + 16);
                const te_float16 even = __builtin_shufflevector(first, second, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                                                22, 24, 26, 28, 30);
                taps[0] = even;
                taps[1] = __builtin_shufflevector(first, second, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                                  29, 31);
                if (kernelColumns == 3) {
                    const te_float16 next = te_column_maxima(input, columns, start, end, column + 32);
                    taps[2] = __builtin_shufflevector(even, next, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                                      16);
                    first = next;
                } else if (ow + 16 < outColumns) {
                    first = te_column_maxima(input, columns, start, end, column + 32);
                }
            }
            const te_float16 maximum = te_max_taps(kernelColumns, taps);
            __builtin_ia32_storeups512_mask(target + ow, (te_v16sf)maximum, te_window_lanes(ow, outColumns));
        }
    }
}

/// Max pooling of one plane as ``te_pool_plane_avx512`` computes it (but for which of +0 and -0 a
/// tie keeps), by a vertical then a horizontal pass per output row, both in registers: the
/// maximum of the window's rows down each column, then of the window's columns along the row by
/// shifting and deinterleaving those column maxima (``te_max_pool_rows``). The column maxima are
/// shared by the overlapping windows of a row and never stored: a row buffer written by masked
/// stores and read back at another alignment stalled each row on store forwarding (256 planes of
/// 27 × 27 pooled 3 × 3 at stride 2: the buffer's first load was a quarter of the samples).
/// Returns 0, having written nothing, for a window ``te_pool_takes`` refuses.
static TE_AVX512 int
te_max_pool_plane_separable(const float *input, long rows, long columns, float *output, long outRows,
                            long outColumns, long kernelRows, long kernelColumns, long rowStride, long columnStride,
                            long top, long left) {
#define TE_MAX_POOL_ROWS(KW, STRIDE)                                                                                  \
    te_max_pool_rows(KW, STRIDE, input, rows, columns, output, outRows, outColumns, kernelRows, rowStride, top, left)
    if (kernelColumns == 3 && columnStride == 2) {
        TE_MAX_POOL_ROWS(3, 2);
    } else if (kernelColumns == 2 && columnStride == 2) {
        TE_MAX_POOL_ROWS(2, 2);
    } else if (kernelColumns == 3 && columnStride == 1) {
        TE_MAX_POOL_ROWS(3, 1);
    } else if (kernelColumns == 2 && columnStride == 1) {
        TE_MAX_POOL_ROWS(2, 1);
    } else {
        return 0;
    }
#undef TE_MAX_POOL_ROWS
    return 1;
}

/// One output plane (`outRows` × `outColumns`, contiguous) of a max or average pooling over a
/// `rows` × `columns` input plane, read in place: output (oh, ow) folds the taps (oh·rowStride -
/// top + kh, ow·columnStride - left + kw) inside the input. A maximum is NaN where a tap is NaN; an
/// average divides its sum by `rowDivisors[oh]` · `columnDivisors[ow]`. A window that
/// ``te_pool_takes`` refuses writes nothing. A maximum goes separably where it can
/// (``te_max_pool_plane_separable``).
static TE_AVX512 void
te_pool_plane_avx512(int average, const float *input, long rows, long columns, float *output, long outRows,
                     long outColumns, long kernelRows, long kernelColumns, long rowStride, long columnStride, long top,
                     long left, const float *rowDivisors, const float *columnDivisors) {
    if (!average && te_max_pool_plane_separable(input, rows, columns, output, outRows, outColumns, kernelRows,
                                                kernelColumns, rowStride, columnStride, top, left)) {
        return;
    }
#define TE_POOL_ROWS(AVERAGE, KW, STRIDE)                                                                              \
    for (long oh = 0; oh < outRows; oh++)                                                                              \
        te_pool_row(AVERAGE, KW, STRIDE, input, rows, columns, output + oh * outColumns, outColumns, oh, kernelRows, \
                    rowStride, top, left, AVERAGE ? rowDivisors[oh] : 1.0f, columnDivisors)
#define TE_POOL_KIND(KW, STRIDE)                                                                                       \
    if (average) {                                                                                                     \
        TE_POOL_ROWS(1, KW, STRIDE);                                                                                   \
    } else {                                                                                                           \
        TE_POOL_ROWS(0, KW, STRIDE);                                                                                   \
    }
    if (kernelColumns == 3 && columnStride == 2) {
        TE_POOL_KIND(3, 2)
    } else if (kernelColumns == 2 && columnStride == 2) {
        TE_POOL_KIND(2, 2)
    } else if (kernelColumns == 3 && columnStride == 1) {
        TE_POOL_KIND(3, 1)
    } else if (kernelColumns == 2 && columnStride == 1) {
        TE_POOL_KIND(2, 1)
    }
#undef TE_POOL_KIND
#undef TE_POOL_ROWS
}

#endif
