// CLBlast's sgemm for the comparison column, opened at run time: nothing in the package links it or
// needs its header, and the column is skipped where the library is not installed (Debian:
// libclblast-dev, optional).
import Foundation
import TensorEngine
import TensorEngineChecks

/// `CLBlastSgemm` from `clblast_c.h`: layout, transposes, m, n, k, alpha, (buffer, offset, leading
/// dimension) for a and b, beta, the same for c, the queue by address and an optional event.
typealias CLBlastSgemmFunction = @convention(c) (
    Int32, Int32, Int32, Int, Int, Int, Float,
    OpaquePointer?, Int, Int, OpaquePointer?, Int, Int, Float, OpaquePointer?, Int, Int,
    UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<OpaquePointer?>?
) -> Int32

enum CLBlast {
    static let layoutRowMajor: Int32 = 101
    static let transposeNo: Int32 = 111
    static let libraryNames = ["libclblast.so.1", "libclblast.so"]

    /// `CLBlastSgemm`, or why it is not available.
    static let sgemm: Result<CLBlastSgemmFunction, CLBlastUnavailable> = {
        var failures: [String] = []
        for name in libraryNames {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                failures.append(dlerror().map { String(cString: $0) } ?? name)
                continue
            }
            guard let symbol = dlsym(handle, "CLBlastSgemm") else {
                failures.append("\(name) has no CLBlastSgemm")
                continue
            }
            return .success(unsafeBitCast(symbol, to: CLBlastSgemmFunction.self))
        }
        return .failure(CLBlastUnavailable(reason: failures.joined(separator: "; ")))
    }()

    /// The row-major `c = a · b` of n x n matrices on `queue`, as ``OpenCLBenchmarks`` calls it.
    static func product(_ function: CLBlastSgemmFunction) -> OpenCLBenchmarks.ExternalSgemm {
        { queue, a, b, c, n in
            function(layoutRowMajor, transposeNo, transposeNo, n, n, n, 1, a, 0, n, b, 0, n, 0, c, 0, n, queue, nil)
        }
    }
}

/// Why the CLBlast column is skipped.
struct CLBlastUnavailable: Error, CustomStringConvertible {
    let reason: String
    var description: String { "CLBlast is not installed (\(reason)); the clblast column is skipped (Debian: apt-get install libclblast-dev)" }
}
