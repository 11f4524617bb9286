// matmul.cl: batched matrix products C[b] = A[b] · B[b].
//
// Kernels:
//   matmul_tiled(M, N, K, A, aOffset, aBatch, aRow, aCol, B, bOffset, bBatch, bRow, bCol, C)
//       A[b, i, p] is at aOffset + b * aBatch + i * aRow + p * aCol (likewise B), so transposed and
//       sliced operands need no copy; C is a contiguous [batches, M, N] buffer.
//       Each work-group computes a TILE_M x TILE_N block of C, staging TILE_K-deep slices of A and
//       B in local memory; each work-item accumulates a WPT_M x WPT_N register block (rows
//       tm + w * RTS_M, columns tn + w * RTS_N). Edge tiles load zeros and store only inside C.
//       Work-group (RTS_N, RTS_M, 1); global (ceil(N / TILE_N) * RTS_N, ceil(M / TILE_M) * RTS_M, batches).
//   matmul_blocked(M, N, K, A, aOffset, aBatch, aRow, aCol, B, bOffset, bBatch, bRow, C)
//       For CPU devices, where local memory is ordinary cached memory and barriers are costly:
//       no local memory, no barriers. Each work-item computes WPT_M rows x 8 columns of C as
//       float8 accumulators, reading B's rows with vload8 (so B must have unit column stride).
//       Global (ceil(N / 8), ceil(M / WPT_M), batches); any work-group size.
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

__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void matmul_tiled(int M, int N, int K,
                  __global const IN_T* A, int aOffset, int aBatch, int aRow, int aCol,
                  __global const IN_T* B, int bOffset, int bBatch, int bRow, int bCol,
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
    const int aBase = aOffset + b * aBatch;
    const int bBase = bOffset + b * bBatch;

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

__kernel void matmul_blocked(int M, int N, int K,
                             __global const IN_T* A, int aOffset, int aBatch, int aRow, int aCol,
                             __global const IN_T* B, int bOffset, int bBatch, int bRow,
                             __global OUT_T* C) {
    const int n0 = get_global_id(0) * 8;
    const int m0 = get_global_id(1) * WPT_M;
    const int b = get_global_id(2);
    if (n0 >= N || m0 >= M) return;
    const int aBase = aOffset + b * aBatch;
    const int bBase = bOffset + b * bBatch;
    const int rows = min(WPT_M, M - m0);
    const int cols = min(8, N - n0);
    float8 acc[WPT_M];
    for (int wm = 0; wm < WPT_M; wm++) acc[wm] = (float8)(0.0f);
    if (rows == WPT_M && cols == 8) {
        for (int p = 0; p < K; p++) {
            float8 bv = IN_VLOAD8(0, B + bBase + p * bRow + n0);
            for (int wm = 0; wm < WPT_M; wm++) acc[wm] = TE_MAC8(acc[wm], IN_LOAD(A, aBase + (m0 + wm) * aRow + p * aCol), bv);
        }
    } else {
        for (int p = 0; p < K; p++) {
            float e[8];
            for (int j = 0; j < 8; j++) e[j] = j < cols ? IN_LOAD(B, bBase + p * bRow + n0 + j) : 0.0f;
            float8 bv = vload8(0, e);
            for (int wm = 0; wm < rows; wm++) acc[wm] = TE_MAC8(acc[wm], IN_LOAD(A, aBase + (m0 + wm) * aRow + p * aCol), bv);
        }
    }
    for (int wm = 0; wm < rows; wm++) {
        float values[8];
        vstore8(acc[wm], 0, values);
        for (int j = 0; j < cols; j++) OUT_STORE(C, (b * M + m0 + wm) * N + n0 + j, values[j]);
    }
}
