// reduce.cl: reductions of the rows of a contiguous [rows, cols] matrix.
//
// Kernels:
//   reduce_rows(in, inOffset, cols, chunks, chunkLength, out, divisor)
//       One work-group per (row, chunk): group g reduces columns
//       [chunk * chunkLength, min(cols, (chunk + 1) * chunkLength)) of row g / chunks with a tree
//       in local memory and writes out[g]. One chunk per row is the one-stage reduction; with
//       several, `out` holds partials ([rows, chunks], ACC_T) that a second launch (compiled with
//       the partials' type as input) reduces. OP_MEAN divides the final value by `divisor`.
//   arg_reduce_rows(in, inOffset, cols, out)
//       One work-group per row: the index of the first maximum (ARG_MAX) or minimum (ARG_MIN); a
//       NaN counts as the extreme (the first NaN wins), as the naive backend does.
// Type macros (from the host): IN_T, IN_LOAD, OUT_T, OUT_STORE, ACC_T (float or int), ACC_IS_FLOAT;
// operation: one of OP_SUM, OP_MEAN, OP_MAX, OP_MIN, OP_PRODUCT, and ARG_MAX or ARG_MIN.
// Tuning macros: WG, the work-group size, a power of two (default 64).
#ifndef WG
#define WG 64
#endif
#ifndef ACC_T
#define ACC_T float
#define ACC_IS_FLOAT 1
#endif

#if ACC_IS_FLOAT
  #if defined(OP_SUM) || defined(OP_MEAN)
    #define IDENTITY 0.0f
    #define COMBINE(a, b) ((a) + (b))
  #elif defined(OP_PRODUCT)
    #define IDENTITY 1.0f
    #define COMBINE(a, b) ((a) * (b))
  #elif defined(OP_MAX)
    #define IDENTITY (-INFINITY)
    #define COMBINE(a, b) ((isnan(a) || isnan(b)) ? NAN : ((b) > (a) ? (b) : (a)))
  #else
    #define IDENTITY INFINITY
    #define COMBINE(a, b) ((isnan(a) || isnan(b)) ? NAN : ((b) < (a) ? (b) : (a)))
  #endif
#else
  #if defined(OP_SUM) || defined(OP_MEAN)
    #define IDENTITY 0
    #define COMBINE(a, b) as_int(as_uint(a) + as_uint(b))
  #elif defined(OP_PRODUCT)
    #define IDENTITY 1
    #define COMBINE(a, b) as_int(as_uint(a) * as_uint(b))
  #elif defined(OP_MAX)
    #define IDENTITY INT_MIN
    #define COMBINE(a, b) max((a), (b))
  #else
    #define IDENTITY INT_MAX
    #define COMBINE(a, b) min((a), (b))
  #endif
#endif

#if defined(IN_T)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_rows(__global const IN_T* in, int inOffset, int cols, int chunks, int chunkLength,
                 __global OUT_T* out, float divisor) {
    __local ACC_T scratch[WG];
    int group = get_group_id(0);
    int row = group / chunks;
    int chunk = group - row * chunks;
    int start = chunk * chunkLength;
    int end = min(cols, start + chunkLength);
    int lid = get_local_id(0);
    int base = inOffset + row * cols;
    ACC_T acc = IDENTITY;
    for (int c = start + lid; c < end; c += WG) {
        ACC_T x = IN_LOAD(in, base + c);
        acc = COMBINE(acc, x);
    }
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = COMBINE(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        ACC_T result = scratch[0];
#if defined(OP_MEAN)
        result = result / divisor;
#endif
        OUT_STORE(out, group, result);
    }
}

// Whether (bv, bi) beats (av, ai) for the argument reduction; an index below 0 means "none yet".
inline int te_arg_better(ACC_T av, int ai, ACC_T bv, int bi) {
    if (bi < 0) return 0;
    if (ai < 0) return 1;
#if ACC_IS_FLOAT
    if (isnan(av) && isnan(bv)) return bi < ai;
    if (isnan(av)) return 0;
    if (isnan(bv)) return 1;
#endif
#if defined(ARG_MAX)
    if (bv > av) return 1;
    if (av > bv) return 0;
#else
    if (bv < av) return 1;
    if (av < bv) return 0;
#endif
    return bi < ai;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void arg_reduce_rows(__global const IN_T* in, int inOffset, int cols, __global int* out) {
    __local ACC_T values[WG];
    __local int indices[WG];
    int row = get_group_id(0);
    int lid = get_local_id(0);
    int base = inOffset + row * cols;
    ACC_T best = 0;
    int bestIndex = -1;
    for (int c = lid; c < cols; c += WG) {
        ACC_T x = IN_LOAD(in, base + c);
        if (te_arg_better(best, bestIndex, x, c)) { best = x; bestIndex = c; }
    }
    values[lid] = best;
    indices[lid] = bestIndex;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (lid < s && te_arg_better(values[lid], indices[lid], values[lid + s], indices[lid + s])) {
            values[lid] = values[lid + s];
            indices[lid] = indices[lid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[row] = max(indices[0], 0);
}
#endif
