// common.cl: the prelude of every TensorEngine OpenCL program (OpenCL C 1.2).
//
// Prepended by the host to each family's source before it is built; it defines no kernels.
//   - Turns off contraction of `a * b + c` into fma, so results round as the scalar semantics say.
//   - Storage access macros per scalar type: TE_LOAD_<T>(pointer, index) gives the compute value
//     (float for float32/float16, int for int32/bool, long and double for int64 and float64);
//     TE_STORE_<T>(pointer, index, value) writes it (float16 rounds to nearest even; bool stores
//     0 or 1). The host runs no kernel on 64-bit types today; their macros complete the set.
//   - Strided addressing: a layout is a shape and strides in `int8` vectors, right-aligned (the last
//     axis is component s7, unused leading axes have extent 1) plus an element offset.
//     te_coords(index, shape) gives the coordinates of a row-major index; te_at(coords, strides,
//     offset) the element offset.
//   - Work-group reductions: te_group_sum / te_group_max(partial, scratch, size) combine one value
//     per work-item (size a power of two, scratch `size` floats of local memory) as a tree and
//     hand every item the result.
// Tuning macros:
//   TE_RANK  the number of trailing axes te_coords decomposes (default 8; the host passes the
//            collapsed rank so no division is spent on unit axes).
#pragma OPENCL FP_CONTRACT OFF

#ifndef TE_RANK
#define TE_RANK 8
#endif

#define TE_LOAD_F32(p, i) ((float)((p)[(i)]))
#define TE_LOAD_F16(p, i) vload_half((i), (p))
#define TE_LOAD_I32(p, i) ((int)((p)[(i)]))
#define TE_LOAD_U8(p, i) ((int)((p)[(i)]))
#define TE_LOAD_I64(p, i) ((long)((p)[(i)]))
#define TE_LOAD_F64(p, i) ((double)((p)[(i)]))

#define TE_STORE_F32(p, i, v) ((p)[(i)] = (v))
#define TE_STORE_F16(p, i, v) vstore_half_rte((v), (i), (p))
#define TE_STORE_I32(p, i, v) ((p)[(i)] = (v))
#define TE_STORE_U8(p, i, v) ((p)[(i)] = (uchar)((v) != 0))
#define TE_STORE_I64(p, i, v) ((p)[(i)] = (v))
#define TE_STORE_F64(p, i, v) ((p)[(i)] = (v))

#define TE_COORD_STEP(k) q = index / shape.s##k; c.s##k = index - q * shape.s##k; index = q;

inline int8 te_coords(int index, int8 shape) {
    int8 c = (int8)(0);
    int q;
#if TE_RANK > 0
    TE_COORD_STEP(7)
#endif
#if TE_RANK > 1
    TE_COORD_STEP(6)
#endif
#if TE_RANK > 2
    TE_COORD_STEP(5)
#endif
#if TE_RANK > 3
    TE_COORD_STEP(4)
#endif
#if TE_RANK > 4
    TE_COORD_STEP(3)
#endif
#if TE_RANK > 5
    TE_COORD_STEP(2)
#endif
#if TE_RANK > 6
    TE_COORD_STEP(1)
#endif
#if TE_RANK > 7
    TE_COORD_STEP(0)
#endif
    return c;
}

inline int te_at(int8 c, int8 strides, int offset) {
    int8 p = c * strides;
    return offset + p.s0 + p.s1 + p.s2 + p.s3 + p.s4 + p.s5 + p.s6 + p.s7;
}

// Rounds a float to the nearest float16 and back: what storing into a float16 tensor does.
inline float te_round_half(float x) {
    ushort bits;
    vstore_half_rte(x, 0, (__private half*)&bits);
    return vload_half(0, (__private const half*)&bits);
}

inline float te_group_sum(float partial, __local float* scratch, int size) {
    int lid = get_local_id(0);
    scratch[lid] = partial;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = size / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float result = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return result;
}

inline float te_group_max(float partial, __local float* scratch, int size) {
    int lid = get_local_id(0);
    scratch[lid] = partial;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = size / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float result = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return result;
}
