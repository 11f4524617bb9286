// copy.cl: data movement between layouts (contiguous, transpose, pad, concat).
//
// Kernels:
//   strided_copy(src, shape, srcStrides, srcOffset, dst, dstStrides, dstOffset, count)
//       dst[te_at(c, dstStrides, dstOffset)] = src[te_at(c, srcStrides, srcOffset)] for the
//       coordinates c of every row-major index below count (layouts as in common.cl).
//   transpose_tiled(src, srcOffset, rows, cols, srcRowStride, srcColStride, dst, dstOffset)
//       dst[dstOffset + r * cols + c] = src[srcOffset + r * srcRowStride + c * srcColStride]
//       (a row-major copy of a column-major view) through a TILE x (TILE + 1) tile in local
//       memory, so reads (down columns) and writes (along rows) are both in runs.
//       Work-group: (TILE, TILE); global size rounded up to whole tiles.
//   fill(dst, low, high, count)    dst[i] = the element's bit pattern (computed on the host; high
//                            holds bits 32-63 of 8-byte elements)
// Elements are moved as bit patterns: E_T is uchar, ushort or uint by element size.
// Tuning macros: E_T (default uint), TILE (default 16), TE_RANK (common.cl).
#ifndef E_T
#define E_T uint
#endif
#ifndef TILE
#define TILE 16
#endif

__kernel void strided_copy(__global const E_T* src, int8 shape, int8 srcStrides, int srcOffset,
                           __global E_T* dst, int8 dstStrides, int dstOffset, int count) {
    int i = get_global_id(0);
    if (i >= count) return;
    int8 c = te_coords(i, shape);
    dst[te_at(c, dstStrides, dstOffset)] = src[te_at(c, srcStrides, srcOffset)];
}

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void transpose_tiled(__global const E_T* src, int srcOffset, int rows, int cols, int srcRowStride,
                     int srcColStride, __global E_T* dst, int dstOffset) {
    __local E_T tile[TILE][TILE + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    int r0 = get_group_id(1) * TILE, c0 = get_group_id(0) * TILE;
    // Read: consecutive work-items walk down a source column (unit row stride).
    int r = r0 + lx, c = c0 + ly;
    if (r < rows && c < cols) tile[ly][lx] = src[srcOffset + r * srcRowStride + c * srcColStride];
    barrier(CLK_LOCAL_MEM_FENCE);
    // Write: consecutive work-items walk along a destination row.
    r = r0 + ly; c = c0 + lx;
    if (r < rows && c < cols) dst[dstOffset + r * cols + c] = tile[lx][ly];
}

__kernel void fill(__global E_T* dst, uint low, uint high, int count) {
    int i = get_global_id(0);
    if (i < count) dst[i] = (E_T)(((ulong)high << 32) | low);
}
