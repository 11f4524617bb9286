// Data movement with AVX-512: the transpose of a block of 4-byte elements through 16 × 16 tiles
// held in registers, for CPUs that have it (elsewhere `StridedCopy` goes through a small buffer).
// Loads and stores of floats move bits unchanged (a NaN's payload included), so the same code
// copies any 4-byte scalar type.
#ifndef TENSORENGINE_MOVEMENT_H
#define TENSORENGINE_MOVEMENT_H

#include "intrinsics.h"
#include "products.h"
#include "rows.h"

/// `destination[r * ld + c] = source[c * ls + r]` for `r < rows`, `c < columns`, both at most 16:
/// one tile through registers. Partial tiles load and store by masks, reading and writing nothing
/// outside the tile. `streaming` full tiles are written with streaming stores, which need every
/// destination row 64-byte aligned.
static inline __attribute__((always_inline)) TE_AVX512 void
te_transpose_tile(const float *source, long ls, float *destination, long ld, long rows, long columns, int streaming) {
    te_float16 lines[16], v[16];
    for (long c = 0; c < 16; c++) {
        if (c >= columns) {
            lines[c] = (te_float16)0.0f;
        } else if (rows == 16) {
            lines[c] = *(const te_float16u *)(source + c * ls);
        } else {
            lines[c] = te_row_load_tail(source + c * ls, rows, 0.0f);
        }
    }
    te_transpose16(lines, v);
    for (long r = 0; r < rows; r++) {
        if (columns < 16) {
            te_row_store_tail(destination + r * ld, columns, v[r]);
        } else if (streaming) {
            __builtin_nontemporal_store(v[r], (te_float16 *)(destination + r * ld));
        } else {
            *(te_float16u *)(destination + r * ld) = v[r];
        }
    }
}

/// Transposes a block, `destination[r * ld + c] = source[c * ls + r]` for `r < rows` and
/// `c < columns`, one 16 × 16 tile at a time, a column of tiles after another. With `streaming`
/// the full tiles bypass the caches (every destination row must then be 64-byte aligned) and the
/// block ends with a store fence.
static TE_AVX512 void
te_transpose_block(const float *source, long ls, float *destination, long ld, long rows, long columns, int streaming) {
    for (long c = 0; c < columns; c += 16) {
        const long tileColumns = columns - c < 16 ? columns - c : 16;
        for (long r = 0; r < rows; r += 16) {
            const long tileRows = rows - r < 16 ? rows - r : 16;
            te_transpose_tile(source + c * ls + r, ls, destination + r * ld + c, ld, tileRows, tileColumns, streaming);
        }
    }
    if (streaming) te_store_fence();
}

#endif
