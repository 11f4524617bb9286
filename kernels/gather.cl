// gather.cl: picking slices by index, and writing them back (scatter).
//
// Kernels:
//   gather(src, srcOffset, indices, indexOffset, outer, extent, inner, count, dst, bad)
//       For a contiguous source [outer, extent, inner] and `count` indices:
//       dst[(o * count + j) * inner + i] = src[srcOffset + (o * extent + indices[j]) * inner + i].
//       An index outside 0..<extent writes nothing and lowers bad[0] to j (atomic_min), so the
//       host can report the first offending position; bad[0] starts at INT_MAX.
//   scatter(indices, indexOffset, updates, updateOffset, outer, extent, inner, count, dst, bad)
//       For contiguous indices and updates [outer, count, inner] and dst [outer, extent, inner]
//       (already holding the data): work-item (o, i) walks j = 0..<count in order and writes
//       dst[(o * extent + indices[o, j, i]) * inner + i] = updates[o, j, i], so a later update to
//       one element wins. A bad index is reported as in gather (its flat position in `indices`).
// Elements are moved as bit patterns: E_T is uchar, ushort, uint or ulong by element size.
// Indices are int32 or int64: I_T is int or long.
// Tuning macros: E_T (default uint), I_T (default int).
#ifndef E_T
#define E_T uint
#endif
#ifndef I_T
#define I_T int
#endif

__kernel void gather(__global const E_T* src, int srcOffset, __global const I_T* indices, int indexOffset,
                     int outer, int extent, int inner, int count, __global E_T* dst, __global int* bad) {
    int g = get_global_id(0);
    int total = outer * count * inner;
    if (g >= total) return;
    int i = g % inner;
    int rest = g / inner;
    int j = rest % count;
    int o = rest / count;
    I_T position = indices[indexOffset + j];
    if (position < 0 || position >= extent) {
        atomic_min(bad, j);
        return;
    }
    dst[g] = src[srcOffset + (o * extent + (int)position) * inner + i];
}

__kernel void scatter(__global const I_T* indices, int indexOffset, __global const E_T* updates, int updateOffset,
                      int outer, int extent, int inner, int count, __global E_T* dst, __global int* bad) {
    int g = get_global_id(0);
    if (g >= outer * inner) return;
    int i = g % inner;
    int o = g / inner;
    for (int j = 0; j < count; j++) {
        int source = (o * count + j) * inner + i;
        I_T position = indices[indexOffset + source];
        if (position < 0 || position >= extent) {
            atomic_min(bad, source);
            return;
        }
        dst[(o * extent + (int)position) * inner + i] = updates[updateOffset + source];
    }
}
