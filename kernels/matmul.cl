// matmul.cl: batched matrix products C[b] = A[b] · B[b].
//
// Kernels:
//   matmul_tiled(M, N, K, inner, A, aOffset, aOuter, aInner, aRow, aCol, B, bOffset, bOuter, bInner, bRow, bCol, C)
//       A[b, i, p] is at aOffset + (b / inner) * aOuter + (b % inner) * aInner + i * aRow + p * aCol
//       (likewise B): two batch levels, so transposed, sliced and head-split operands need no
//       copy; C is a contiguous [batches, M, N] buffer.
//       Each work-group computes a TILE_M x TILE_N block of C, staging TILE_K-deep slices of A and
//       B in local memory; each work-item accumulates a WPT_M x WPT_N register block (rows
//       tm + w * RTS_M, columns tn + w * RTS_N). Edge tiles load zeros and store only inside C.
//       Work-group (RTS_N, RTS_M, 1); global (ceil(N / TILE_N) * RTS_N, ceil(M / TILE_M) * RTS_M, batches).
//   matmul_blocked(M, N, K, inner, A, aOffset, aOuter, aInner, aRow, aCol, B, bOffset, bOuter, bInner, bRow, bPanel, C)
//       For CPU devices, where local memory is ordinary cached memory and barriers are costly:
//       no local memory, no barriers. Each work-item computes WPT_M rows x WPT_N columns of C
//       (WPT_N a multiple of 8) as float8 accumulators (unrolled, so they stay in registers),
//       reading B's rows with vload8 (so B must have unit column stride); column panel j of B
//       starts at bOffset + j * bPanel (WPT_N for B as it is, K * WPT_N when packed).
//       Global (ceil(N / WPT_N), ceil(M / WPT_M), batches); any work-group size.
//   matmul_pack_b(K, N, inner, B, bOffset, bOuter, bInner, bRow, bCol, P)
//       Copies B into P as [batches][ceil(N / WPT_N)][K][WPT_N], zero-padded, for matmul_blocked:
//       without it each step of a work-item's K loop reads a different page of B.
//       Global (ceil(N / WPT_N) * WPT_N, K, batches).
// Type macros: IN_T, IN_LOAD, IN_VLOAD8 (vload8 or vload_half8), OUT_T, OUT_STORE (float compute).
// Tuning macros (per device, from the host's tuning table): TILE_M, TILE_N, TILE_K, WPT_M, WPT_N
// (TILE_M divisible by WPT_M, TILE_N by WPT_N); TE_USE_FMA (1 where the device has fast fma).
#ifndef TILE_M
#define TILE_M 64
#endif
#ifndef TILE_N
#define TILE_N 64
#endif
#ifndef TILE_K
#define TILE_K 16
#endif
#ifndef WPT_M
#define WPT_M 4
#endif
#ifndef WPT_N
#define WPT_N 4
#endif
#ifndef TE_USE_FMA
#define TE_USE_FMA 0
#endif
#define RTS_M (TILE_M / WPT_M)
#define RTS_N (TILE_N / WPT_N)
#if TE_USE_FMA
#define TE_MAC(acc, a, b) fma((a), (b), (acc))
#else
#define TE_MAC(acc, a, b) ((acc) + (a) * (b))
#endif

// The offset of batch b's matrix in an operand with two batch levels.
#define BATCH_BASE(offset, b, inner, outerStride, innerStride) ((offset) + ((b) / (inner)) * (outerStride) + ((b) % (inner)) * (innerStride))

__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void matmul_tiled(int M, int N, int K, int inner,
                  __global const IN_T* A, int aOffset, int aOuter, int aInner, int aRow, int aCol,
                  __global const IN_T* B, int bOffset, int bOuter, int bInner, int bRow, int bCol,
                  __global OUT_T* C) {
    __local float As[TILE_K][TILE_M];
    __local float Bs[TILE_K][TILE_N];
    const int tn = get_local_id(0);
    const int tm = get_local_id(1);
    const int n0 = get_group_id(0) * TILE_N;
    const int m0 = get_group_id(1) * TILE_M;
    const int b = get_group_id(2);
    const int lid = tm * RTS_N + tn;
    const int threads = RTS_M * RTS_N;
    const int aBase = BATCH_BASE(aOffset, b, inner, aOuter, aInner);
    const int bBase = BATCH_BASE(bOffset, b, inner, bOuter, bInner);

    float acc[WPT_M][WPT_N];
    for (int wm = 0; wm < WPT_M; wm++)
        for (int wn = 0; wn < WPT_N; wn++) acc[wm][wn] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        for (int e = lid; e < TILE_K * TILE_M; e += threads) {
            int mm = e / TILE_K, kk = e - mm * TILE_K;
            int gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < M && gk < K) ? IN_LOAD(A, aBase + gm * aRow + gk * aCol) : 0.0f;
        }
        for (int e = lid; e < TILE_K * TILE_N; e += threads) {
            int kk = e / TILE_N, nn = e - kk * TILE_N;
            int gk = k0 + kk, gn = n0 + nn;
            Bs[kk][nn] = (gk < K && gn < N) ? IN_LOAD(B, bBase + gk * bRow + gn * bCol) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TILE_K; kk++) {
            float a[WPT_M], bv[WPT_N];
            for (int wm = 0; wm < WPT_M; wm++) a[wm] = As[kk][tm + wm * RTS_M];
            for (int wn = 0; wn < WPT_N; wn++) bv[wn] = Bs[kk][tn + wn * RTS_N];
            for (int wm = 0; wm < WPT_M; wm++)
                for (int wn = 0; wn < WPT_N; wn++) acc[wm][wn] = TE_MAC(acc[wm][wn], a[wm], bv[wn]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int wm = 0; wm < WPT_M; wm++) {
        int gm = m0 + tm + wm * RTS_M;
        if (gm >= M) continue;
        for (int wn = 0; wn < WPT_N; wn++) {
            int gn = n0 + tn + wn * RTS_N;
            if (gn < N) OUT_STORE(C, (b * M + gm) * N + gn, acc[wm][wn]);
        }
    }
}

#ifndef IN_VLOAD8
#define IN_VLOAD8 vload8
#endif
#if TE_USE_FMA
#define TE_MAC8(acc, a, b) fma((float8)(a), (b), (acc))
#else
#define TE_MAC8(acc, a, b) ((acc) + (float8)(a) * (b))
#endif

#define VN (WPT_N / 8)

__kernel void matmul_blocked(int M, int N, int K, int inner,
                             __global const IN_T* A, int aOffset, int aOuter, int aInner, int aRow, int aCol,
                             __global const IN_T* B, int bOffset, int bOuter, int bInner, int bRow, int bPanel,
                             __global OUT_T* C) {
    const int panel = get_global_id(0);
    const int n0 = panel * WPT_N;
    const int m0 = get_global_id(1) * WPT_M;
    const int b = get_global_id(2);
    if (n0 >= N || m0 >= M) return;
    const int aBase = BATCH_BASE(aOffset, b, inner, aOuter, aInner) + m0 * aRow;
    const int bBase = BATCH_BASE(bOffset, b, inner, bOuter, bInner) + panel * bPanel;
    const int rows = min(WPT_M, M - m0);
    const int cols = min(WPT_N, N - n0);
    float8 acc[WPT_M][VN];
#pragma unroll
    for (int wm = 0; wm < WPT_M; wm++)
#pragma unroll
        for (int v = 0; v < VN; v++) acc[wm][v] = (float8)(0.0f);
    if (rows == WPT_M && cols == WPT_N) {
        for (int p = 0; p < K; p++) {
            float8 bv[VN];
#pragma unroll
            for (int v = 0; v < VN; v++) bv[v] = IN_VLOAD8(v, B + bBase + p * bRow);
#pragma unroll
            for (int wm = 0; wm < WPT_M; wm++) {
                const float av = IN_LOAD(A, aBase + wm * aRow + p * aCol);
#pragma unroll
                for (int v = 0; v < VN; v++) acc[wm][v] = TE_MAC8(acc[wm][v], av, bv[v]);
            }
        }
    } else {
        for (int p = 0; p < K; p++) {
            float8 bv[VN];
            for (int v = 0; v < VN; v++) {
                float e[8];
                for (int j = 0; j < 8; j++) e[j] = v * 8 + j < cols ? IN_LOAD(B, bBase + p * bRow + v * 8 + j) : 0.0f;
                bv[v] = vload8(0, e);
            }
            for (int wm = 0; wm < rows; wm++) {
                const float av = IN_LOAD(A, aBase + wm * aRow + p * aCol);
                for (int v = 0; v < VN; v++) acc[wm][v] = TE_MAC8(acc[wm][v], av, bv[v]);
            }
        }
    }
    for (int wm = 0; wm < rows; wm++) {
        float values[WPT_N];
        for (int v = 0; v < VN; v++) vstore8(acc[wm][v], v, values);
        for (int j = 0; j < cols; j++) OUT_STORE(C, (b * M + m0 + wm) * N + n0 + j, values[j]);
    }
}

// B rearranged for matmul_blocked: column panels of WPT_N, each K rows of WPT_N contiguous values
// (zeros past column N), so a work-item's reads of B are one sequential stream.
__kernel void matmul_pack_b(int K, int N, int inner,
                            __global const IN_T* B, int bOffset, int bOuter, int bInner, int bRow, int bCol,
                            __global OUT_T* P) {
    const int n = get_global_id(0);
    const int p = get_global_id(1);
    const int b = get_global_id(2);
    const int panels = get_global_size(0) / WPT_N;
    const float value = n < N ? IN_LOAD(B, BATCH_BASE(bOffset, b, inner, bOuter, bInner) + p * bRow + n * bCol) : 0.0f;
    OUT_STORE(P, ((b * panels + n / WPT_N) * K + p) * WPT_N + n % WPT_N, value);
}
