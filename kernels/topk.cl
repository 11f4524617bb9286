// topk.cl: the k largest values of each row of a contiguous [rows, cols] matrix.
//
// Kernels:
//   top_k_rows(in, inOffset, rows, cols, k, values, indices)
//       values[r, j] and indices[r, j] (int) for the j-th element of row r in the order: NaN first,
//       then descending value, ties by lower index (a total order, so the result is exact and
//       matches the naive backend). One work-item per row, a selection in O(k * cols) that needs
//       no scratch memory: each step takes the first element after the previous one in that order.
//       `values` receives the element's bit pattern (E_T), so float16 stays exact.
// Type macros: IN_T, IN_LOAD, ACC_T, ACC_IS_FLOAT, E_T (uint or ushort: the element's bits).
// Tuning macros: none.

// Whether element (av, ai) comes before (bv, bi) in the top-k order.
inline int te_topk_before(ACC_T av, int ai, ACC_T bv, int bi) {
#if ACC_IS_FLOAT
    if (isnan(av) != isnan(bv)) return isnan(av) ? 1 : 0;
    if (!isnan(av) && av != bv) return av > bv;
#else
    if (av != bv) return av > bv;
#endif
    return ai < bi;
}

__kernel void top_k_rows(__global const IN_T* in, int inOffset, int rows, int cols, int k,
                         __global E_T* values, __global int* indices) {
    int row = get_global_id(0);
    if (row >= rows) return;
    int base = inOffset + row * cols;
    __global const E_T* bits = (__global const E_T*)in;
    ACC_T previous = 0;
    int previousIndex = -1;
    for (int j = 0; j < k; j++) {
        ACC_T best = 0;
        int bestIndex = -1;
        for (int c = 0; c < cols; c++) {
            ACC_T x = IN_LOAD(in, base + c);
            if (previousIndex >= 0 && !te_topk_before(previous, previousIndex, x, c)) continue;
            if (bestIndex < 0 || te_topk_before(x, c, best, bestIndex)) { best = x; bestIndex = c; }
        }
        previous = best;
        previousIndex = bestIndex;
        values[row * k + j] = bits[base + bestIndex];
        indices[row * k + j] = bestIndex;
    }
}
