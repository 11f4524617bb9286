// CPU instructions the CPU kernels use that Swift has no spelling for: streaming (non-temporal)
// stores, the reciprocal estimate and the spin-wait hint. Header-only: each function is `static
// inline`, so the Clang importer compiles it into its Swift caller, where it becomes one
// instruction (or a short portable fallback where the instruction is missing).
#ifndef TENSORENGINE_INTRINSICS_H
#define TENSORENGINE_INTRINSICS_H

/// Eight floats, imported into Swift as SIMD8<Float>.
typedef float te_float8 __attribute__((ext_vector_type(8)));

/// Stores eight floats at `address`, which must be 32-byte aligned, bypassing the caches
/// (`vmovntps` with AVX): for outputs too large to stay cached, this saves the read of each
/// line that a plain store fetches first.
static inline void te_stream_store8(float *address, te_float8 value) {
    __builtin_nontemporal_store(value, (te_float8 *)address);
}

/// Orders earlier streaming stores before any later store (`sfence` on x86-64): streaming stores
/// are weakly ordered, so a thread fences before it reports its work done.
static inline void te_store_fence(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/// An estimate of 1/x per lane, to within 1.5 * 2^-12 relative (`vrcpps` with AVX); callers refine
/// it with a Newton step. Without AVX it is the exact quotient.
static inline te_float8 te_reciprocal_estimate8(te_float8 x) {
#if defined(__AVX__)
    return __builtin_ia32_rcpps256(x);
#else
    return 1.0f / x;
#endif
}

/// Tells the CPU the thread is in a spin-wait loop (`pause` on x86-64, `yield` on ARM): it frees
/// the core's resources for its sibling and avoids the pipeline flush when the awaited store lands.
static inline void te_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// Splits the `count` floats from `source` into its even-indexed elements (`even[j] = source[2j]`)
/// and its odd-indexed ones (`odd[j] = source[2j + 1]`), 8 of each from every 16 read: the two
/// phase rows of a stride-2 pooling in one pass over the input row.
static inline void te_deinterleave2(const float *source, long count, float *even, float *odd) {
    typedef float te_float8 __attribute__((ext_vector_type(8)));
    typedef float te_float8u __attribute__((ext_vector_type(8), aligned(4)));
    long j = 0;
    for (; 2 * j + 16 <= count; j += 8) {
        const te_float8 low = *(const te_float8u *)(source + 2 * j), high = *(const te_float8u *)(source + 2 * j + 8);
        *(te_float8u *)(even + j) = __builtin_shufflevector(low, high, 0, 2, 4, 6, 8, 10, 12, 14);
        *(te_float8u *)(odd + j) = __builtin_shufflevector(low, high, 1, 3, 5, 7, 9, 11, 13, 15);
    }
    for (; 2 * j < count; j++) {
        even[j] = source[2 * j];
        if (2 * j + 1 < count) odd[j] = source[2 * j + 1];
    }
}

/// `target[j] = source[2j]` for j < count, 8 at a time from 16 read, reading no further than
/// source[2(count - 1)]: a phase row of a stride-2 convolution's input (the scalar gather was
/// most of the time to fill an image's phase planes).
static inline void te_every_second(const float *source, long count, float *target) {
    typedef float te_float8 __attribute__((ext_vector_type(8)));
    typedef float te_float8u __attribute__((ext_vector_type(8), aligned(4)));
    long j = 0;
    for (; j + 9 <= count; j += 8) {
        const te_float8 low = *(const te_float8u *)(source + 2 * j), high = *(const te_float8u *)(source + 2 * j + 8);
        *(te_float8u *)(target + j) = __builtin_shufflevector(low, high, 0, 2, 4, 6, 8, 10, 12, 14);
    }
    for (; j < count; j++) target[j] = source[2 * j];
}

#endif
