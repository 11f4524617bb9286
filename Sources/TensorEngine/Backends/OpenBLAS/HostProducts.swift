#if canImport(Glibc)
import Glibc
#endif
import CIntrinsics
import COpenBLAS
import Foundation

/// The single-precision matrix-product kernel of the openblas backend: the engine's own AVX-512
/// kernel (`Sources/CIntrinsics/products.h`) on CPUs with AVX-512, else OpenBLAS's `sgemm`.
///
/// OpenBLAS chooses its kernels by CPU model, and an environment may pin them (this project's
/// machines set `OPENBLAS_CORETYPE=Haswell`): on an AMD Zen 5 its AVX2 kernels then run products at
/// half the rate the CPU's full-width AVX-512 units reach. The engine's kernel packs A and B
/// into cache blocks (a small row-major B it reads in place) and runs a 12×32 register tile; it
/// is single-threaded, and products are split across the backend's workers (``MatmulSplit``).
/// `TENSORENGINE_AVX512=off` keeps OpenBLAS's `sgemm` for every product (see
/// ``CPUFlags/usesAVX512``).
enum HostProducts {
    /// Which kernel computes general products.
    enum Kernel: Equatable {
        /// The engine's packed AVX-512 kernel.
        case avx512
        /// OpenBLAS's `cblas_sgemm`.
        case openBLAS
    }

    /// The kernel for this process.
    static let kernel: Kernel = CPUFlags.usesAVX512 ? .avx512 : .openBLAS

    /// Products smaller than this many multiply-adds go to OpenBLAS even with the engine's kernel:
    /// there its packing and edge handling cost more than the arithmetic (`[17, 15] · [15, 3]`:
    /// 0.5 µs against OpenBLAS's 0.1 µs; from about `[5, 33] · [33, 77]` on they are level).
    static let minimumKernelMultiplyAdds = 16_384

    /// `C = A·B`, or `C += A·B` when `accumulate`, with C row-major (rows `ldc` apart) and A and B
    /// row-major or transposed (`lda`, `ldb`: their leading dimensions as BLAS reads them).
    /// Single-threaded with the engine's kernel; OpenBLAS's uses its current thread count.
    /// Sizes must fit BLAS's 32-bit indices (checked by the callers).
    static func multiply(transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int,
                         _ a: UnsafePointer<Float>, lda: Int, _ b: UnsafePointer<Float>, ldb: Int,
                         _ c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool) {
        switch kernel {
        case .avx512 where m * n * k >= minimumKernelMultiplyAdds:
            // false: its packing space could not be allocated; OpenBLAS then computes the product.
            if multiplyWithEngineKernel(transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, a, lda: lda,
                                        b, ldb: ldb, c, ldc: ldc, accumulate: accumulate) {
                return
            }
        case .avx512, .openBLAS:
            break
        }
        cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k), 1, a, Int32(lda), b, Int32(ldb), accumulate ? 1 : 0, c, Int32(ldc))
    }
}

extension HostProducts {
    /// The engine's AVX-512 kernel on one thread, whatever the size; `false`, with C untouched,
    /// when the space to pack B cannot be allocated. Only for a CPU with AVX-512 (``CPUFlags``).
    static func multiplyWithEngineKernel(transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int,
                                         _ a: UnsafePointer<Float>, lda: Int, _ b: UnsafePointer<Float>, ldb: Int,
                                         _ c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool) -> Bool {
        te_sgemm_avx512(transposeA ? 1 : 0, transposeB ? 1 : 0, m, n, k, a, lda, b, ldb, c, ldc, accumulate ? 1 : 0) == 0
    }

    /// One product `C = A·B` (or `+=`) computed by the engine's kernel on the backend's workers
    /// from B packed whole, split as `split` says:
    /// - B kept packed by ``PackedWeights`` (a weight seen before in `source`, the buffer holding
    ///   it), whatever the size of A;
    /// - else, where the kernel packs B (more than a few rows of A) and the product is cut into
    ///   pieces, B packed once into a buffer the pieces share: the workers first pack disjoint
    ///   panels of it. Each piece packing its own copy cost 4 of them a third of a 256³ product.
    ///
    /// Returns `false`, having done nothing, otherwise (or when another kernel is chosen); the
    /// caller then computes the product its own way.
    static func multiplyFromPackedB(transposeA: Bool, transposeB: Bool, m: Int, n: Int, k: Int,
                                    _ a: UnsafePointer<Float>, lda: Int, _ b: UnsafePointer<Float>, ldb: Int,
                                    source: HostBuffer?, _ c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool,
                                    split: MatmulSplit, epilogue: LinearEpilogue = .none) throws(TensorError) -> Bool {
        guard kernel == .avx512, m > 1, n > 1, k > 0, m * n * k >= minimumKernelMultiplyAdds, split.axis != .batch
        else { return false }
        if let source,
            let kept = PackedWeights.shared.packed(
                b, in: source, transposed: transposeB, k: k, n: n, ldb: ldb, workers: Parallel.workers)
        {
            multiply(transposeA: transposeA, m: m, n: n, k: k, a, lda: lda, packedB: kept, c, ldc: ldc,
                     accumulate: accumulate, split: split, epilogue: epilogue)
            return true
        }
        guard split.parts > 1, te_sgemm_packs_b(transposeA ? 1 : 0, transposeB ? 1 : 0, m) != 0 else { return false }
        let packed = try HostBuffer(byteCount: te_packed_b_floats(k, n) * MemoryLayout<Float>.stride, op: "matmul")
        let panels = (n + TE_NR - 1) / TE_NR
        let packedB = packed.elements(as: Float.self)
        Parallel.forEachRange(panels, parts: min(split.parts, panels)) { range in
            te_pack_b_panels(transposeB ? 1 : 0, k, n, b, ldb, packedB, range.lowerBound, range.upperBound)
        }
        multiply(transposeA: transposeA, m: m, n: n, k: k, a, lda: lda, packedB: packed, c, ldc: ldc,
                 accumulate: accumulate, split: split, epilogue: epilogue)
        return true
    }

    /// `C = A·B` (or `+=`) with B packed whole (``te_pack_b_panels``: by `HostProducts` for one
    /// product, or kept by ``PackedWeights``), in the row or column pieces of `split` on the
    /// backend's workers; each piece then finishes its part of C (``LinearEpilogue``).
    static func multiply(transposeA: Bool, m: Int, n: Int, k: Int, _ a: UnsafePointer<Float>, lda: Int,
                         packedB: HostBuffer, _ c: UnsafeMutablePointer<Float>, ldc: Int, accumulate: Bool,
                         split: MatmulSplit, epilogue: LinearEpilogue = .none) {
        let shared = UnsafePointer(packedB.elements(as: Float.self))
        Parallel.forEachRange(split.extent, parts: split.parts, alignment: split.alignment) { range in
            switch split.axis {
            case .rows:
                let rowOffset = transposeA ? range.lowerBound : range.lowerBound * lda
                te_sgemm_packed(transposeA ? 1 : 0, range.count, n, k, a + rowOffset, lda, shared, 0, n,
                                c + range.lowerBound * ldc, ldc, accumulate ? 1 : 0)
                epilogue.apply(
                    to: c + range.lowerBound * ldc, rows: range.count, columns: 0..<n, ldc: ldc,
                    firstRow: range.lowerBound)
            case .columns:
                te_sgemm_packed(transposeA ? 1 : 0, m, n, k, a, lda, shared, range.lowerBound, range.upperBound,
                                c, ldc, accumulate ? 1 : 0)
                epilogue.apply(to: c, rows: m, columns: range, ldc: ldc)
            case .batch:
                // One product is never split by batch.
                te_sgemm_packed(transposeA ? 1 : 0, m, n, k, a, lda, shared, 0, n, c, ldc, accumulate ? 1 : 0)
                epilogue.apply(to: c, rows: m, columns: 0..<n, ldc: ldc)
            }
        }
        withExtendedLifetime(packedB) {}
    }
}

/// The CPU's feature flags as Linux lists them (`/proc/cpuinfo`): what the CPU has and the kernel
/// lets programs use.
enum CPUFlags {
    /// AVX-512 as OpenBLAS's SkylakeX kernels and the engine's product kernel use it.
    static let avx512: Set<String> = ["avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"]
    /// AVX2 with fused multiply-add.
    static let avx2: Set<String> = ["avx2", "fma"]

    /// Whether the openblas backend runs its AVX-512 code (products, softmax rows, depthwise
    /// convolutions, pooling): on a CPU with AVX-512, unless `TENSORENGINE_AVX512=off` asks for
    /// the AVX2 build's kernels and OpenBLAS's `sgemm` throughout (to compare them, or to rule the
    /// AVX-512 code out).
    static let usesAVX512: Bool = {
        if let setting = getenv("TENSORENGINE_AVX512"), String(cString: setting) == "off" { return false }
        return current.isSuperset(of: avx512)
    }()

    /// This machine's flags; empty where `/proc/cpuinfo` cannot be read.
    static let current: Set<String> = {
        guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let flagsLine = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
        else { return [] }
        return Set(flagsLine.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init))
    }()
}
