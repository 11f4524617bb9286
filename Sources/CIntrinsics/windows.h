// Sliding-window kernels with AVX-512: depthwise convolutions over one plane at a time, for CPUs
// that have it (the Swift striped kernel, OpenBLASBackend+Depthwise.swift, serves the others and
// the shapes these do not take). Header-only like products.h; every function carries its own
// target attribute and callers check the CPU's flags first.
//
// A block of output rows × 32 columns keeps its sums in registers over every tap. Each vector of
// an input row is loaded once per column tap and feeds every output row of the block that reads it
// (a 3 × 3 filter over 4 rows: 18 loads per 36 multiply-adds per vector, against 9 per 9 one row at
// a time). The planes are read in place: the loads at the left and right edges are masked, so the
// padding reads as zeros and nothing is copied; rows above and below the input are taps skipped.
#ifndef TENSORENGINE_WINDOWS_H
#define TENSORENGINE_WINDOWS_H

#define TE_WINDOWS_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

typedef float te_window16 __attribute__((ext_vector_type(16)));
typedef float te_window_v16sf __attribute__((vector_size(64)));

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

/// `vectors` × 16 output columns from `column` on, of the output rows `row`..<`row` + `rows`
/// (`rows` ≤ TE_DEPTHWISE_ROWS): each the bias plus every tap of the `kernelRows` × `kernelColumns`
/// filter (stride 1, no dilation; `top` and `left` the padding before), plus the residual's value
/// at its place (NULL: none), then bounded by `bounds` ([low, high], NULL: none) as
/// ``te_bounded16`` does. Called with constant shapes, so that the loops unroll and the sums stay
/// in registers.
static inline __attribute__((always_inline)) TE_WINDOWS_AVX512 void
te_depthwise_block(const int kernelRows, const int kernelColumns, const int vectors, const float *input, long rows,
                   long columns, float *output, const float *residual, long outRows, long outColumns,
                   const te_window16 *weights, long top, long left, long row, long column, float bias,
                   const float *bounds) {
    const te_window_v16sf zero = (te_window_v16sf)(te_window16)0;
    te_window16 sum[TE_DEPTHWISE_ROWS][2];
    unsigned short lanes[2][8];
#pragma clang loop unroll(full)
    for (int v = 0; v < vectors; v++) {
#pragma clang loop unroll(full)
        for (int r = 0; r < TE_DEPTHWISE_ROWS; r++) sum[r][v] = bias;
#pragma clang loop unroll(full)
        for (int kw = 0; kw < kernelColumns; kw++) lanes[v][kw] = te_window_lanes(column + 16 * v + kw - left, columns);
    }
    // Input row j of the block (row - top + j) is tap kh = j - r of output row r.
#pragma clang loop unroll(full)
    for (int j = 0; j < TE_DEPTHWISE_ROWS + kernelRows - 1; j++) {
        const long ih = row - top + j;
        if (ih < 0 || ih >= rows) continue;
        const float *line = input + ih * columns + column - left;
#pragma clang loop unroll(full)
        for (int kw = 0; kw < kernelColumns; kw++) {
#pragma clang loop unroll(full)
            for (int v = 0; v < vectors; v++) {
                const te_window16 x =
                    (te_window16)__builtin_ia32_loadups512_mask(line + 16 * v + kw, zero, lanes[v][kw]);
#pragma clang loop unroll(full)
                for (int r = 0; r < TE_DEPTHWISE_ROWS; r++) {
                    const int kh = j - r;
                    if (kh < 0 || kh >= kernelRows) continue;
                    sum[r][v] = __builtin_elementwise_fma(x, weights[kh * kernelColumns + kw], sum[r][v]);
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
            te_window16 value = sum[r][v];
            if (residual) value += (te_window16)__builtin_ia32_loadups512_mask(residual + at, zero, mask);
            if (bounds) {
                typedef int te_int16 __attribute__((ext_vector_type(16)));
                const te_window16 lower = bounds[0], upper = bounds[1];
                const te_int16 below = value <= lower;
                const te_int16 raised = (below & (te_int16)lower) | (~below & (te_int16)value);
                const te_int16 above = (te_window16)raised >= upper;
                value = (te_window16)((above & (te_int16)upper) | (~above & raised));
            }
            __builtin_ia32_storeups512_mask(output + at, (te_window_v16sf)value, mask);
        }
    }
}

/// One output plane of a depthwise convolution with a `kernelRows` × `kernelColumns` filter,
/// constant: blocks of TE_DEPTHWISE_ROWS rows, 32 columns at a time (16 for a last strip that
/// fits in them).
static inline __attribute__((always_inline)) TE_WINDOWS_AVX512 void
te_depthwise_plane_sized(const int kernelRows, const int kernelColumns, const float *input, long rows, long columns,
                         float *output, const float *residual, long outRows, long outColumns, const float *filter,
                         long top, long left, float bias, const float *bounds) {
    te_window16 weights[25];
#pragma clang loop unroll(full)
    for (int t = 0; t < kernelRows * kernelColumns; t++) weights[t] = filter[t];
    for (long row = 0; row < outRows; row += TE_DEPTHWISE_ROWS) {
        long column = 0;
        for (; column + 16 < outColumns; column += 32) {
            te_depthwise_block(kernelRows, kernelColumns, 2, input, rows, columns, output, residual, outRows,
                               outColumns, weights, top, left, row, column, bias, bounds);
        }
        if (column < outColumns) {
            te_depthwise_block(kernelRows, kernelColumns, 1, input, rows, columns, output, residual, outRows,
                               outColumns, weights, top, left, row, column, bias, bounds);
        }
    }
}

/// Whether ``te_depthwise_plane_avx512`` computes a depthwise filter of this size: 3 × 3 and 5 × 5.
static inline int te_depthwise_takes(long kernelRows, long kernelColumns) {
    return (kernelRows == 3 && kernelColumns == 3) || (kernelRows == 5 && kernelColumns == 5);
}

/// One output plane (`outRows` × `outColumns`, contiguous) of a depthwise convolution at stride 1
/// without dilation: output (oh, ow) = `bias` + Σ filter[kh][kw] · input[oh - top + kh][ow - left +
/// kw] over the taps inside the `rows` × `columns` input plane, plus `residual`'s value at the same
/// place (NULL: none), then bounded by `bounds` ([low, high], NULL: none). A filter size that
/// ``te_depthwise_takes`` refuses writes nothing.
static TE_WINDOWS_AVX512 void
te_depthwise_plane_avx512(const float *input, long rows, long columns, float *output, const float *residual,
                          long outRows, long outColumns, const float *filter, long kernelRows, long kernelColumns,
                          long top, long left, float bias, const float *bounds) {
    if (kernelRows == 3 && kernelColumns == 3) {
        te_depthwise_plane_sized(3, 3, input, rows, columns, output, residual, outRows, outColumns, filter, top, left,
                                 bias, bounds);
    } else if (kernelRows == 5 && kernelColumns == 5) {
        te_depthwise_plane_sized(5, 5, input, rows, columns, output, residual, outRows, outColumns, filter, top, left,
                                 bias, bounds);
    }
}

#endif
