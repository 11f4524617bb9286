// softmax.cl: softmax and log-softmax of the rows of a contiguous [rows, cols] matrix.
//
// Kernels:
//   softmax_rows(in, inOffset, cols, out)       out[r, c] = exp(x - max) / sum(exp(x - max))
//   log_softmax_rows(in, inOffset, cols, out)   out[r, c] = x - max - log(sum(exp(x - max)))
// One work-group per row: the row maximum, then the sum of exponentials, each a tree in local
// memory; subtracting the maximum keeps exp from overflowing (numerically stable). `out` is a
// contiguous [rows, cols] buffer.
// Type macros: IN_T, IN_LOAD, OUT_T, OUT_STORE (float compute).
// Tuning macros: WG, the work-group size, a power of two (default 64).
#ifndef WG
#define WG 64
#endif

inline float te_row_max(__global const IN_T* in, int base, int cols, __local float* scratch) {
    int lid = get_local_id(0);
    float m = -INFINITY;
    for (int c = lid; c < cols; c += WG) m = fmax(m, IN_LOAD(in, base + c));
    return te_group_max(m, scratch, WG);
}

inline float te_row_exp_sum(__global const IN_T* in, int base, int cols, float m, __local float* scratch) {
    int lid = get_local_id(0);
    float total = 0.0f;
    for (int c = lid; c < cols; c += WG) total += exp(IN_LOAD(in, base + c) - m);
    return te_group_sum(total, scratch, WG);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax_rows(__global const IN_T* in, int inOffset, int cols, __global OUT_T* out) {
    __local float scratch[WG];
    int row = get_group_id(0);
    int base = inOffset + row * cols;
    float m = te_row_max(in, base, cols, scratch);
    float total = te_row_exp_sum(in, base, cols, m, scratch);
    for (int c = get_local_id(0); c < cols; c += WG) {
        float value = exp(IN_LOAD(in, base + c) - m) / total;
        OUT_STORE(out, row * cols + c, value);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void log_softmax_rows(__global const IN_T* in, int inOffset, int cols, __global OUT_T* out) {
    __local float scratch[WG];
    int row = get_group_id(0);
    int base = inOffset + row * cols;
    float m = te_row_max(in, base, cols, scratch);
    float logTotal = log(te_row_exp_sum(in, base, cols, m, scratch));
    for (int c = get_local_id(0); c < cols; c += WG) {
        float value = IN_LOAD(in, base + c) - m - logTotal;
        OUT_STORE(out, row * cols + c, value);
    }
}
