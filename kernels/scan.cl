// scan.cl: running sums and products along the rows of a contiguous [rows, cols] matrix.
//
// Kernels:
//   cumulative_sum_rows(in, inOffset, rows, cols, out)
//       out[r, c] = in[r, 0] + ... + in[r, c]. One work-item per row, in order; float sums are
//       compensated (Kahan), so the error does not grow with the row length, and int32 sums wrap.
//   cumulative_product_rows(in, inOffset, rows, cols, out)
//       out[r, c] = in[r, 0] * ... * in[r, c], the same way; int32 products wrap. Float products
//       round once per step (a relative error of about c/2 ulp at column c).
// Type macros: IN_T, IN_LOAD, OUT_T, OUT_STORE, ACC_T (float or int), ACC_IS_FLOAT.
// Tuning macros: none.

__kernel void cumulative_sum_rows(__global const IN_T* in, int inOffset, int rows, int cols, __global OUT_T* out) {
    int row = get_global_id(0);
    if (row >= rows) return;
    int base = inOffset + row * cols;
#if ACC_IS_FLOAT
    float total = 0.0f, compensation = 0.0f;
    for (int c = 0; c < cols; c++) {
        float y = IN_LOAD(in, base + c) - compensation;
        float t = total + y;
        compensation = (t - total) - y;
        total = t;
        OUT_STORE(out, row * cols + c, total);
    }
#else
    uint total = 0u;
    for (int c = 0; c < cols; c++) {
        total += as_uint(IN_LOAD(in, base + c));
        OUT_STORE(out, row * cols + c, as_int(total));
    }
#endif
}

__kernel void cumulative_product_rows(__global const IN_T* in, int inOffset, int rows, int cols, __global OUT_T* out) {
    int row = get_global_id(0);
    if (row >= rows) return;
    int base = inOffset + row * cols;
#if ACC_IS_FLOAT
    float total = 1.0f;
    for (int c = 0; c < cols; c++) {
        total *= IN_LOAD(in, base + c);
        OUT_STORE(out, row * cols + c, total);
    }
#else
    uint total = 1u;
    for (int c = 0; c < cols; c++) {
        total *= as_uint(IN_LOAD(in, base + c));
        OUT_STORE(out, row * cols + c, as_int(total));
    }
#endif
}
