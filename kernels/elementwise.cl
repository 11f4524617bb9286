// elementwise.cl: the scalar semantics of every elementwise op, for generated kernels.
//
// Kernels: none written here. The host generates one kernel per elementwise op or fused region
// (`te_elementwise`) and appends it to this file; the kernel calls the functions below, one per op,
// which follow Graph/ScalarSemantics.swift exactly:
//   - float ops compute in float (float16 is loaded and stored through vload_half/vstore_half_rte);
//   - int32 ops wrap on overflow (computed on uint), x / 0 == 0, INT_MIN / -1 == INT_MIN;
//   - minimum/maximum propagate NaN; relu and sign keep NaN; round is half to even (rint);
//   - comparisons and logical ops give int 0 or 1.
// Generated kernel argument convention:
//   te_elementwise(__global OUT* out, int count, int start, [int8 shape,]
//                  then per operand: __global const T* in, [int8 strides,] int offset)
//       Work-item g computes element start + g (below count). The shape and per-operand strides
//       are present only in the strided variant; an operand is read at `offset + i`
//       (contiguous), at `offset` (uniform) or at te_at(coords, strides, offset).
//   te_elementwise8(__global OUT* out, int vectors, then per operand: __global const T* in, int offset)
//       On CPU devices, when no operand is strided: work-item v computes elements 8v..8v+7 with
//       the eight-wide helpers at the end of this file; the host runs the tail through te_elementwise.
// Tuning macros: none (the work-group size is chosen by the host).

inline float te_sign(float x) { return isnan(x) ? x : (x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f)); }
inline float te_sigmoid(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + exp(-x));
    float e = exp(x);
    return e / (1.0f + e);
}
inline float te_relu(float x) { return isnan(x) ? x : (0.0f >= x ? 0.0f : x); }
inline float te_min(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : (b < a ? b : a); }
inline float te_max(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : (b >= a ? b : a); }

inline int te_ineg(int x) { return as_int(0u - as_uint(x)); }
inline int te_iabs(int x) { return x < 0 ? te_ineg(x) : x; }
inline int te_isign(int x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
inline int te_iadd(int a, int b) { return as_int(as_uint(a) + as_uint(b)); }
inline int te_isub(int a, int b) { return as_int(as_uint(a) - as_uint(b)); }
inline int te_imul(int a, int b) { return as_int(as_uint(a) * as_uint(b)); }
inline int te_idiv(int a, int b) { return b == 0 ? 0 : ((a == INT_MIN && b == -1) ? INT_MIN : a / b); }
inline int te_imin(int a, int b) { return b < a ? b : a; }
inline int te_imax(int a, int b) { return b >= a ? b : a; }
inline int te_irelu(int x) { return x > 0 ? x : 0; }

// Conversions between compute domains, as storing into a tensor of the target type does.
inline int te_float_to_int(float x) { return convert_int_sat_rtz(x); }
inline int te_float_to_bool(float x) { return x != 0.0f ? 1 : 0; }
inline int te_int_to_bool(int x) { return x != 0 ? 1 : 0; }

// Eight-wide versions for the vectorised kernel `te_elementwise8` (CPU devices, operands read
// contiguously or as uniforms): the same semantics lane by lane. Relational ops on vectors give
// -1 for true, which is what select() tests; results meant as 0/1 are negated.
inline float8 te_sign8(float8 x) {
    float8 s = select(select((float8)(0.0f), (float8)(-1.0f), x < 0.0f), (float8)(1.0f), x > 0.0f);
    return select(s, x, isnan(x));
}
inline float8 te_sigmoid8(float8 x) {
    float8 e = exp(x);
    return select(e / (1.0f + e), 1.0f / (1.0f + exp(-x)), x >= 0.0f);
}
inline float8 te_relu8(float8 x) { return select(x, (float8)(0.0f), (float8)(0.0f) >= x); }
inline float8 te_min8(float8 a, float8 b) { return select(select(a, b, b < a), (float8)(NAN), isnan(a) | isnan(b)); }
inline float8 te_max8(float8 a, float8 b) { return select(select(a, b, b >= a), (float8)(NAN), isnan(a) | isnan(b)); }
inline int8 te_ineg8(int8 x) { return as_int8((uint8)(0u) - as_uint8(x)); }
inline int8 te_iadd8(int8 a, int8 b) { return as_int8(as_uint8(a) + as_uint8(b)); }
inline int8 te_isub8(int8 a, int8 b) { return as_int8(as_uint8(a) - as_uint8(b)); }
inline int8 te_imul8(int8 a, int8 b) { return as_int8(as_uint8(a) * as_uint8(b)); }
inline int8 te_idiv8(int8 a, int8 b) {
    int8 zero = b == 0;
    int8 overflow = (a == INT_MIN) & (b == -1);
    int8 q = a / select(b, (int8)(1), zero | overflow);
    return select(select(q, (int8)(0), zero), (int8)(INT_MIN), overflow);
}
inline float8 te_round_half8(float8 x) {
    ushort8 bits;
    vstore_half8_rte(x, 0, (__private half*)&bits);
    return vload_half8(0, (__private const half*)&bits);
}
// sin and cos lane by lane: PoCL 3.1's float8 sin/cos are wrong for small arguments
// (sin(1e-3) gave 8e-3), found by the parity tests.
inline float8 te_lanes_sin8(float8 x) {
    return (float8)(sin(x.s0), sin(x.s1), sin(x.s2), sin(x.s3), sin(x.s4), sin(x.s5), sin(x.s6), sin(x.s7));
}
inline float8 te_lanes_cos8(float8 x) {
    return (float8)(cos(x.s0), cos(x.s1), cos(x.s2), cos(x.s3), cos(x.s4), cos(x.s5), cos(x.s6), cos(x.s7));
}
