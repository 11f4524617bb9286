// elementwise.cl: helpers for the generated elementwise kernels.
//
// Kernels: none written here. The host generates one kernel per elementwise op or fused region
// (`te_elementwise`) from the ops' expressions in the op table (Graph/OpTable.swift, printed by
// OpenCLExpressionPrinter.swift) and appends it to this file; the expressions call the helpers
// below for what C does not say the way the table does:
//   - float values compute in float (float16 is loaded and stored through vload_half/vstore_half_rte);
//   - int32 arithmetic wraps on overflow (computed on uint), x / 0 == 0, INT_MIN / -1 == INT_MIN;
//     remainders truncate (the dividend's sign), x % 0 == 0, INT_MIN % -1 == 0; int64 the same
//     in long (te_l*);
//   - float64 values compute in double, on devices with cl_khr_fp64 (the host sends no float64
//     work to others);
//   - float minimum/maximum propagate NaN;
//   - comparisons give int 0 or 1.
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

inline float te_min(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : (b < a ? b : a); }
inline float te_max(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : (b >= a ? b : a); }

inline int te_ineg(int x) { return as_int(0u - as_uint(x)); }
inline int te_iabs(int x) { return x < 0 ? te_ineg(x) : x; }
inline int te_iadd(int a, int b) { return as_int(as_uint(a) + as_uint(b)); }
inline int te_isub(int a, int b) { return as_int(as_uint(a) - as_uint(b)); }
inline int te_imul(int a, int b) { return as_int(as_uint(a) * as_uint(b)); }
inline int te_idiv(int a, int b) { return b == 0 ? 0 : ((a == INT_MIN && b == -1) ? INT_MIN : a / b); }
inline int te_irem(int a, int b) { return (b == 0 || (a == INT_MIN && b == -1)) ? 0 : a % b; }
inline int te_imin(int a, int b) { return b < a ? b : a; }
inline int te_imax(int a, int b) { return b >= a ? b : a; }

// Conversions between compute domains, as storing into a tensor of the target type does.
inline long te_lneg(long x) { return as_long(0ul - as_ulong(x)); }
inline long te_labs(long x) { return x < 0 ? te_lneg(x) : x; }
inline long te_ladd(long a, long b) { return as_long(as_ulong(a) + as_ulong(b)); }
inline long te_lsub(long a, long b) { return as_long(as_ulong(a) - as_ulong(b)); }
inline long te_lmul(long a, long b) { return as_long(as_ulong(a) * as_ulong(b)); }
inline long te_ldiv(long a, long b) { return b == 0 ? 0 : ((a == LONG_MIN && b == -1) ? LONG_MIN : a / b); }
inline long te_lrem(long a, long b) { return (b == 0 || (a == LONG_MIN && b == -1)) ? 0 : a % b; }
inline long te_lmin(long a, long b) { return b < a ? b : a; }
inline long te_lmax(long a, long b) { return b >= a ? b : a; }
// The low 32 bits, as a store into int32 keeps them.
inline int te_long_to_int(long x) { return as_int((uint)as_ulong(x)); }

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
inline double te_dmin(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (b < a ? b : a); }
inline double te_dmax(double a, double b) { return (isnan(a) || isnan(b)) ? NAN : (b >= a ? b : a); }
#endif

inline int te_float_to_int(float x) { return convert_int_sat_rtz(x); }
inline int te_float_to_bool(float x) { return x != 0.0f ? 1 : 0; }
inline int te_int_to_bool(int x) { return x != 0 ? 1 : 0; }

// Eight-wide versions for the vectorised kernel `te_elementwise8` (CPU devices, operands read
// contiguously or as uniforms): the same semantics lane by lane. Relational ops on vectors give
// -1 for true, which is what select() tests; results meant as 0/1 are negated.
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
inline int8 te_irem8(int8 a, int8 b) {
    int8 undefined = (b == 0) | ((a == INT_MIN) & (b == -1));
    return select(a % select(b, (int8)(1), undefined), (int8)(0), undefined);
}
inline float8 te_round_half8(float8 x) {
    ushort8 bits;
    vstore_half8_rte(x, 0, (__private half*)&bits);
    return vload_half8(0, (__private const half*)&bits);
}
// A math builtin lane by lane, for functions whose float8 forms are not trusted: PoCL 3.1's
// float8 sin and cos are wrong for small arguments (sin(1e-3) gave 8e-3), found by the parity
// tests. The host prints these for every function outside its list of checked vector forms.
#define TE_LANES8(f, x) ((float8)(f((x).s0), f((x).s1), f((x).s2), f((x).s3), \
                                  f((x).s4), f((x).s5), f((x).s6), f((x).s7)))
#define TE_LANES8_2(f, x, y) ((float8)(f((x).s0, (y).s0), f((x).s1, (y).s1), f((x).s2, (y).s2), f((x).s3, (y).s3), \
                                       f((x).s4, (y).s4), f((x).s5, (y).s5), f((x).s6, (y).s6), f((x).s7, (y).s7)))
