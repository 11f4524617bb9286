// window.cl: sliding windows over the spatial axes of [N, C, D, H, W] (1-D and 2-D windows come
// with leading extents of 1): convolutions and pooling.
//
// The geometry travels in three int8 vectors:
//   g0 = (inD, inH, inW, kD, kH, kW, outD, outH)
//   g1 = (outW, strideD, strideH, strideW, dilationD, dilationH, dilationW, padBeforeD)
//   g2 = (padBeforeH, padBeforeW, padAfterD, padAfterH, padAfterW, countsPadding, 0, 0)
// Operands are row-major from their offsets.
//
// Kernels:
//   convolution_direct(x, xOffset, w, wOffset, bias, biasOffset, hasBias, residual, residualOffset,
//                      hasResidual, g0, g1, g2, channels, outChannels, inPerGroup, total, lower, upper, y)
//       One output y[n, m, od, oh, ow] per work-item: bias[m] plus the sum over the group's input
//       channels and the kernel taps inside the input of x · w, w [M, C/groups, kD, kH, kW], plus
//       residual[n, m, od, oh, ow] (of y's shape, when hasResidual), bounded to [lower, upper]
//       (te_clamp; -INFINITY and INFINITY for no bound).
//   im2col(x, xOffset, g0, g1, g2, channels, inPerGroup, groups, total, cols)
//       cols[n, g, (c, kd, kh, kw), (od, oh, ow)] = x[n, g·C/g + c, od·s - pad + kd·d, ...], 0 in the
//       padding: the right operand of the product W[g] · cols[n, g] that gives the convolution.
//       Moves bit patterns (E_T).
//   convolution_epilogue(y, bias, biasOffset, hasBias, residual, residualOffset, hasResidual, planeSize,
//                        channels, total, lower, upper)
//       y[i] = te_clamp(y[i] + bias[(i / planeSize) % channels] + residual[i]) (no bias added when
//       hasBias is 0, no residual when hasResidual is 0).
//   max_pool(x, xOffset, g0, g1, g2, total, y)
//       The maximum of each window's taps inside the input; a NaN wins (floats); a window that
//       misses the input gives -infinity (int32: INT_MIN).
//   average_pool(x, xOffset, g0, g1, g2, total, y)
//       The sum of each window's taps inside the input over their count, or over the count of
//       taps inside the padded input when countsPadding is 1.
// Tuning macros: IN_T, IN_LOAD, OUT_T, OUT_STORE, ACC_T, ACC_IS_FLOAT (the element types, see
// common.cl), E_T (im2col's bit type, default uint).
#ifndef E_T
#define E_T uint
#endif
#ifndef IN_T
#define IN_T float
#define IN_LOAD TE_LOAD_F32
#define OUT_T float
#define OUT_STORE TE_STORE_F32
#define ACC_T float
#define ACC_IS_FLOAT 1
#endif

// min(max(v, lower), upper) with a NaN kept: an activation fused into a convolution (ReLU is
// lower 0, upper INFINITY; upper wins where lower > upper, as ONNX's Clip).
inline float te_clamp(float v, float lower, float upper) {
    float raised = v <= lower ? lower : v;
    return raised >= upper ? upper : raised;
}

// The taps t in 0..<k whose position start + t·d lies in [low, high).
inline int te_tap_count(int start, int k, int d, int low, int high) {
    int count = 0;
    for (int t = 0; t < k; t++) {
        int p = start + t * d;
        count += (p >= low && p < high) ? 1 : 0;
    }
    return count;
}

__kernel void convolution_direct(__global const IN_T* x, int xOffset, __global const IN_T* w, int wOffset,
                                 __global const IN_T* bias, int biasOffset, int hasBias,
                                 __global const IN_T* residual, int residualOffset, int hasResidual, int8 g0, int8 g1,
                                 int8 g2,
                                 int channels, int outChannels, int inPerGroup, int total, float lower, float upper,
                                 __global OUT_T* y) {
    int g = get_global_id(0);
    if (g >= total) return;
    int ow = g % g1.s0;
    int rest = g / g1.s0;
    int oh = rest % g0.s7;
    rest /= g0.s7;
    int od = rest % g0.s6;
    rest /= g0.s6;
    int m = rest % outChannels;
    int n = rest / outChannels;
    int outPerGroup = outChannels / (channels / inPerGroup);
    int group = m / outPerGroup;
    int kernelCount = g0.s3 * g0.s4 * g0.s5;
    float acc = hasBias ? (float)IN_LOAD(bias, biasOffset + m) : 0.0f;
    for (int c = 0; c < inPerGroup; c++) {
        int plane = xOffset + (n * channels + group * inPerGroup + c) * g0.s0 * g0.s1 * g0.s2;
        int filter = wOffset + (m * inPerGroup + c) * kernelCount;
        for (int kd = 0; kd < g0.s3; kd++) {
            int id = od * g1.s1 - g1.s7 + kd * g1.s4;
            if (id < 0 || id >= g0.s0) continue;
            for (int kh = 0; kh < g0.s4; kh++) {
                int ih = oh * g1.s2 - g2.s0 + kh * g1.s5;
                if (ih < 0 || ih >= g0.s1) continue;
                int row = plane + (id * g0.s1 + ih) * g0.s2;
                int taps = filter + (kd * g0.s4 + kh) * g0.s5;
                for (int kw = 0; kw < g0.s5; kw++) {
                    int iw = ow * g1.s3 - g2.s1 + kw * g1.s6;
                    if (iw < 0 || iw >= g0.s2) continue;
                    acc += (float)IN_LOAD(x, row + iw) * (float)IN_LOAD(w, taps + kw);
                }
            }
        }
    }
    if (hasResidual) acc += (float)IN_LOAD(residual, residualOffset + g);
    OUT_STORE(y, g, te_clamp(acc, lower, upper));
}

__kernel void im2col(__global const E_T* x, int xOffset, int8 g0, int8 g1, int8 g2, int channels, int inPerGroup,
                     int groups, int total, __global E_T* cols) {
    int g = get_global_id(0);
    if (g >= total) return;
    int outCount = g0.s6 * g0.s7 * g1.s0;
    int kernelCount = g0.s3 * g0.s4 * g0.s5;
    int o = g % outCount;
    int rest = g / outCount;
    int r = rest % (inPerGroup * kernelCount);
    rest /= inPerGroup * kernelCount;
    int group = rest % groups;
    int n = rest / groups;
    int c = r / kernelCount;
    int tap = r % kernelCount;
    int kw = tap % g0.s5;
    int kh = tap / g0.s5 % g0.s4;
    int kd = tap / (g0.s4 * g0.s5);
    int ow = o % g1.s0;
    int oh = o / g1.s0 % g0.s7;
    int od = o / (g1.s0 * g0.s7);
    int id = od * g1.s1 - g1.s7 + kd * g1.s4;
    int ih = oh * g1.s2 - g2.s0 + kh * g1.s5;
    int iw = ow * g1.s3 - g2.s1 + kw * g1.s6;
    E_T value = 0;
    if (id >= 0 && id < g0.s0 && ih >= 0 && ih < g0.s1 && iw >= 0 && iw < g0.s2) {
        int plane = (n * channels + group * inPerGroup + c) * g0.s0 * g0.s1 * g0.s2;
        value = x[xOffset + plane + (id * g0.s1 + ih) * g0.s2 + iw];
    }
    cols[g] = value;
}

__kernel void convolution_epilogue(__global OUT_T* y, __global const IN_T* bias, int biasOffset, int hasBias,
                                   __global const IN_T* residual, int residualOffset, int hasResidual,
                                   int planeSize, int channels, int total, float lower, float upper) {
    int g = get_global_id(0);
    if (g >= total) return;
    float value = (float)IN_LOAD(y, g);
    if (hasBias) value += (float)IN_LOAD(bias, biasOffset + (g / planeSize) % channels);
    if (hasResidual) value += (float)IN_LOAD(residual, residualOffset + g);
    OUT_STORE(y, g, te_clamp(value, lower, upper));
}

// The output position of work-item g and the first input position of its window per axis.
#define TE_WINDOW_POSITION                                  \
    int ow = g % g1.s0;                                     \
    int rest = g / g1.s0;                                   \
    int oh = rest % g0.s7;                                  \
    rest /= g0.s7;                                          \
    int od = rest % g0.s6;                                  \
    int plane = rest / g0.s6;                               \
    int startD = od * g1.s1 - g1.s7;                        \
    int startH = oh * g1.s2 - g2.s0;                        \
    int startW = ow * g1.s3 - g2.s1;                        \
    int base = xOffset + plane * g0.s0 * g0.s1 * g0.s2;

__kernel void max_pool(__global const IN_T* x, int xOffset, int8 g0, int8 g1, int8 g2, int total, __global OUT_T* y) {
    int g = get_global_id(0);
    if (g >= total) return;
    TE_WINDOW_POSITION
#if ACC_IS_FLOAT
    float best = -INFINITY;
#else
    int best = INT_MIN;
#endif
    for (int kd = 0; kd < g0.s3; kd++) {
        int id = startD + kd * g1.s4;
        if (id < 0 || id >= g0.s0) continue;
        for (int kh = 0; kh < g0.s4; kh++) {
            int ih = startH + kh * g1.s5;
            if (ih < 0 || ih >= g0.s1) continue;
            int row = base + (id * g0.s1 + ih) * g0.s2;
            for (int kw = 0; kw < g0.s5; kw++) {
                int iw = startW + kw * g1.s6;
                if (iw < 0 || iw >= g0.s2) continue;
                ACC_T value = IN_LOAD(x, row + iw);
#if ACC_IS_FLOAT
                // Once NaN, best stays NaN: nothing compares above it.
                if (value > best || isnan(value)) best = value;
#else
                best = max(best, value);
#endif
            }
        }
    }
    OUT_STORE(y, g, best);
}

__kernel void average_pool(__global const IN_T* x, int xOffset, int8 g0, int8 g1, int8 g2, int total,
                           __global OUT_T* y) {
    int g = get_global_id(0);
    if (g >= total) return;
    TE_WINDOW_POSITION
    float sum = 0.0f;
    for (int kd = 0; kd < g0.s3; kd++) {
        int id = startD + kd * g1.s4;
        if (id < 0 || id >= g0.s0) continue;
        for (int kh = 0; kh < g0.s4; kh++) {
            int ih = startH + kh * g1.s5;
            if (ih < 0 || ih >= g0.s1) continue;
            int row = base + (id * g0.s1 + ih) * g0.s2;
            for (int kw = 0; kw < g0.s5; kw++) {
                int iw = startW + kw * g1.s6;
                if (iw < 0 || iw >= g0.s2) continue;
                sum += (float)IN_LOAD(x, row + iw);
            }
        }
    }
    int counted = g2.s5;
    int count = te_tap_count(startD, g0.s3, g1.s4, counted ? -g1.s7 : 0, counted ? g0.s0 + g2.s2 : g0.s0)
              * te_tap_count(startH, g0.s4, g1.s5, counted ? -g2.s0 : 0, counted ? g0.s1 + g2.s3 : g0.s1)
              * te_tap_count(startW, g0.s5, g1.s6, counted ? -g2.s1 : 0, counted ? g0.s2 + g2.s4 : g0.s2);
    OUT_STORE(y, g, sum / (float)count);
}
