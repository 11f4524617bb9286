#if canImport(Glibc)
import Glibc
#endif
import COpenBLAS
import Foundation

/// Which of OpenBLAS's per-CPU kernel sets runs, and a way out when OpenBLAS picked the wrong one.
///
/// Debian's OpenBLAS (0.3.21) is built with `DYNAMIC_ARCH`: when the library loads it reads the
/// CPU's family and model and picks a kernel set. A CPU newer than the release (Emerald Rapids,
/// family 6 model 207, for one) matches none, and OpenBLAS falls back to its Prescott kernels
/// (SSE3): measured on such a machine, a 256³ `sgemm` then takes 1.36 ms instead of 0.24 ms with
/// the SkylakeX kernels, and every product of the engine is that much slower. OpenBLAS reads
/// `OPENBLAS_CORETYPE` only while loading, so a process can only be told before it starts.
package enum OpenBLASCore {
    /// The kernel set OpenBLAS runs (`Haswell`, `SkylakeX`, `Prescott`, ...).
    package static var name: String { openblas_get_corename().map { String(cString: $0) } ?? "unknown" }

    /// The kernel set to ask for when OpenBLAS fell back to Prescott on a CPU with AVX2 and FMA
    /// (`SkylakeX` with AVX-512, else `Haswell`); `nil` when its choice stands or was set.
    package static var recommended: String? {
        guard name.lowercased() == "prescott", ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] == nil else { return nil }
        guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let flagsLine = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
        else { return nil }
        let flags = Set(flagsLine.split(separator: " ").map(String.init))
        if flags.isSuperset(of: ["avx512f", "avx512bw", "avx512dq", "avx512vl"]) { return "SkylakeX" }
        if flags.isSuperset(of: ["avx2", "fma"]) { return "Haswell" }
        return nil
    }

    /// A sentence for device descriptions when OpenBLAS fell back, else `nil`.
    package static var warning: String? {
        recommended.map { "OpenBLAS does not know this CPU and runs its Prescott kernels; set OPENBLAS_CORETYPE=\($0)" }
    }

    /// For the engine's command-line tools, first thing in `main`: when OpenBLAS fell back to
    /// Prescott on a CPU with better kernels, runs the same program again with
    /// `OPENBLAS_CORETYPE` set (the only moment OpenBLAS reads it). Does nothing otherwise, or when
    /// the new process cannot be started (the program then goes on, slower).
    package static func restartWithBetterKernelsIfNeeded() {
        #if canImport(Glibc)
        guard let core = recommended else { return }
        setenv("OPENBLAS_CORETYPE", core, 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // execv returns only on failure: keep going with the kernels loaded.
        #endif
    }
}
