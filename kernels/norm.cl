// norm.cl: layer normalisation of the rows of a contiguous [rows, cols] matrix.
//
// Kernels:
//   layer_norm_rows(in, inOffset, cols, epsilon, [scale, scaleOffset, bias, biasOffset,] out)
//       out[r, c] = (x - mean) * (1 / sqrt(variance + epsilon)), the variance taken as the mean of
//       squared deviations (two passes over the row, so no cancellation); with AFFINE, then
//       * scale[c] + bias[c] (a fused multiply-add), the two of the row's length. One work-group per
//       row, sums as trees in local memory.
// Type macros: IN_T, IN_LOAD, OUT_T, OUT_STORE (float compute; scale and bias are of the input's type).
// Tuning macros: WG, the work-group size, a power of two (default 64).
// Variant macros: AFFINE, the scale and bias arguments.
#ifndef WG
#define WG 64
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void layer_norm_rows(__global const IN_T* in, int inOffset, int cols, float epsilon,
#ifdef AFFINE
                     __global const IN_T* scaleIn, int scaleOffset, __global const IN_T* biasIn, int biasOffset,
#endif
                     __global OUT_T* out) {
    __local float scratch[WG];
    int row = get_group_id(0);
    int lid = get_local_id(0);
    int base = inOffset + row * cols;
    float count = (float)max(cols, 1);
    float partial = 0.0f;
    for (int c = lid; c < cols; c += WG) partial += IN_LOAD(in, base + c);
    float mean = te_group_sum(partial, scratch, WG) / count;
    partial = 0.0f;
    for (int c = lid; c < cols; c += WG) {
        float d = IN_LOAD(in, base + c) - mean;
        partial += d * d;
    }
    float variance = te_group_sum(partial, scratch, WG) / count;
    float scale = 1.0f / sqrt(variance + epsilon);
    for (int c = lid; c < cols; c += WG) {
        float value = (IN_LOAD(in, base + c) - mean) * scale;
#ifdef AFFINE
        value = fma(value, IN_LOAD(scaleIn, scaleOffset + c), IN_LOAD(biasIn, biasOffset + c));
#endif
        OUT_STORE(out, row * cols + c, value);
    }
}
