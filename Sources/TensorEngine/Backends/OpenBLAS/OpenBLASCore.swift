#if canImport(Glibc)
import Glibc
#endif
import COpenBLAS
import Foundation

/// Which of OpenBLAS's per-CPU kernel sets runs, and the widest one this CPU can run.
///
/// Debian's OpenBLAS (0.3.21) is built with `DYNAMIC_ARCH`: when the library loads it reads the
/// CPU's family and model and picks a kernel set. Its choice can waste half the CPU:
/// - a CPU newer than the release (Emerald Rapids, family 6 model 207) matches nothing, and it
///   falls back to Prescott (SSE3): a 256³ `sgemm` took 1.36 ms instead of 0.24 ms;
/// - an AMD Zen 5, whose AVX-512 units are full width, gets the Haswell kernels (AVX2): a 1024³
///   `sgemm` on 2 threads took 9.8 ms instead of 5.3 ms with the SkylakeX kernels.
///
/// OpenBLAS reads `OPENBLAS_CORETYPE` while it loads, before any Swift code runs. Its
/// `DYNAMIC_ARCH` builds also export the function that makes that choice
/// (`gotoblas_dynamic_init`) and the one that forgets it, so ``selectWidestKernels()`` makes the
/// choice again in the running process, before the engine's first BLAS call, with the variable
/// set for that moment. OpenBLAS itself checks that the CPU supports the set it is asked for.
package enum OpenBLASCore {
    /// OpenBLAS's configuration (version, build options, kernels), read once: `openblas_get_config`
    /// writes it into one static buffer on every call, so two threads calling it at once (two
    /// backends made side by side) read each other's half-written text ("SkylakeXSkylakeX"), and
    /// the device name, the key of its stored profile, with it.
    package static let configuration: String = openblas_get_config().map { String(cString: $0) } ?? "OpenBLAS"

    /// The kernel set OpenBLAS runs (`Haswell`, `SkylakeX`, `Prescott`, ...).
    package static var name: String { openblas_get_corename().map { String(cString: $0) } ?? "unknown" }

    /// The widest kernel set for this CPU's vector instructions (`SkylakeX` with AVX-512, else
    /// `Haswell` with AVX2 and FMA) when OpenBLAS runs a narrower one and `OPENBLAS_CORETYPE` was
    /// not set by the user; `nil` when its choice stands.
    package static var recommended: String? {
        guard getenv("OPENBLAS_CORETYPE") == nil, let cpu = widestForCPU else { return nil }
        return vectorBits(of: name) < vectorBits(of: cpu) ? cpu : nil
    }

    /// A sentence for device descriptions when OpenBLAS runs narrower kernels than the CPU has and
    /// the engine could not change them, else `nil`.
    package static var warning: String? {
        recommended.map { "OpenBLAS runs its \(name) kernels on a CPU for \($0); set OPENBLAS_CORETYPE=\($0)" }
    }

    /// Switches OpenBLAS to ``recommended``'s kernel set, once per process; later calls only return
    /// the first one's outcome. The openblas backend calls it before its first BLAS call, and so do
    /// the tools that call BLAS themselves. Returns the kernel set that runs afterwards.
    ///
    /// It must not run beside a BLAS call: a program that calls BLAS on other threads before making
    /// its first engine should call this first, or set `OPENBLAS_CORETYPE` before it starts.
    @discardableResult
    package static func selectWidestKernels() -> String { selection }

    private static let selection: String = {
        #if canImport(Glibc)
        guard let core = recommended,
            let forget = symbol("gotoblas_dynamic_quit"), let choose = symbol("gotoblas_dynamic_init")
        else { return name }
        setenv("OPENBLAS_CORETYPE", core, 1)
        forget()
        choose()
        unsetenv("OPENBLAS_CORETYPE")
        #endif
        return name
    }()

    #if canImport(Glibc)
    /// A `void f(void)` function of the loaded OpenBLAS, found by name; `nil` in builds without it.
    private static func symbol(_ name: String) -> (@convention(c) () -> Void)? {
        // RTLD_DEFAULT: every library the process has loaded.
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: (@convention(c) () -> Void).self)
    }
    #endif

    /// The widest kernel set the CPU's flags allow; `nil` when they are unknown.
    private static var widestForCPU: String? {
        if CPUFlags.current.isSuperset(of: CPUFlags.avx512) { return "SkylakeX" }
        if CPUFlags.current.isSuperset(of: CPUFlags.avx2) { return "Haswell" }
        return nil
    }

    /// The vector width, in bits, of the single-precision products of OpenBLAS's x86-64 kernel
    /// sets with FMA (AVX2 or AVX-512); 128 for the others.
    private static func vectorBits(of core: String) -> Int {
        let widths = ["skylakex": 512, "cooperlake": 512, "sapphirerapids": 512, "haswell": 256, "zen": 256, "excavator": 256]
        return widths[core.lowercased()] ?? 128
    }
}
