import COpenBLAS
import Dispatch
import Foundation
import TensorEngine
import TensorEngineChecks

/// The bare kernels reference rows time: what the machine does without the engine around it.
///
/// Each owns its buffers (allocated and filled once, outside the timed region) and runs on every
/// active core: BLAS calls with OpenBLAS's threads set to the core count before each run (the
/// engine changes that setting per product, see `MatmulSplit`), and the triad with one worker per
/// core via `DispatchQueue.concurrentPerform`, as the engine splits its streaming loops.
final class BareKernel: @unchecked Sendable {
    /// What runs, as the report's `detail` names it.
    let name: String
    private let buffers: [UnsafeMutablePointer<Float>]
    private let counts: [Int]
    private let body: ([UnsafeMutablePointer<Float>]) -> Void

    private init(name: String, counts: [Int], body: @escaping ([UnsafeMutablePointer<Float>]) -> Void) {
        self.name = name
        self.counts = counts
        self.body = body
        buffers = counts.enumerated().map { index, count in
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1))
            // Deterministic, non-trivial values (no denormals, no zeros that could shortcut work).
            for element in 0..<count { buffer[element] = Float((element &* 7 &+ index &* 13) % 97) / 97 + 0.01 }
            return buffer
        }
    }

    deinit {
        for buffer in buffers { buffer.deallocate() }
    }

    /// Runs the kernel once.
    func run() { body(buffers) }

    /// Sets OpenBLAS's threads to the active core count (a no-op when already so).
    private static func useEveryCore() {
        let cores = Int32(ProcessInfo.processInfo.activeProcessorCount)
        if openblas_get_num_threads() != cores { openblas_set_num_threads(cores) }
    }

    /// Whether a workload has a reference row.
    static func hasReference(_ reference: TensorEngineChecks.ReferenceKernel) -> Bool {
        switch reference {
        case .sgemm, .sgemv, .triad: true
        case .none: false
        }
    }

    /// The reference for a workload, or `nil` when it has none.
    static func make(for reference: TensorEngineChecks.ReferenceKernel) -> BareKernel? {
        switch reference {
        case .sgemm(let m, let n, let k, let batch):
            return BareKernel(name: "cblas_sgemm", counts: [batch * m * k, batch * k * n, batch * m * n]) { b in
                BareKernel.useEveryCore()
                for item in 0..<batch {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(m), Int32(n), Int32(k), 1,
                                b[0] + item * m * k, Int32(k), b[1] + item * k * n, Int32(n), 0, b[2] + item * m * n, Int32(n))
                }
            }
        case .sgemv(let k, let n):
            // y = xᵀ·A for x of k and A of k×n, row-major: A transposed times x.
            return BareKernel(name: "cblas_sgemv", counts: [k, k * n, n]) { b in
                BareKernel.useEveryCore()
                cblas_sgemv(CblasRowMajor, CblasTrans, Int32(k), Int32(n), 1, b[1], Int32(n), b[0], 1, 0, b[2], 1)
            }
        case .triad(let bytes):
            // a = b + s·c reads two floats and writes one: 12 bytes an element.
            let count = max(1, bytes / 12)
            return BareKernel(name: "triad", counts: [count, count, count]) { b in
                Triad.run(a: b[0], b: b[1], c: b[2], count: count, scalar: 0.5)
            }
        case .none:
            return nil
        }
    }
}

/// The memory triad `a = b + s·c`: a simple loop the compiler vectorises, split across cores.
enum Triad {
    /// Workers: one per active core, as the engine's streaming kernels use.
    static let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)

    static func run(a: UnsafeMutablePointer<Float>, b: UnsafeMutablePointer<Float>, c: UnsafeMutablePointer<Float>, count: Int, scalar: Float) {
        let pointers = Pointers(a: a, b: b, c: c)
        let chunk = (count + workers - 1) / workers
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let start = worker * chunk
            let end = min(count, start + chunk)
            guard start < end else { return }
            kernel(pointers.a + start, pointers.b + start, pointers.c + start, end - start, scalar)
        }
    }

    /// The loop itself, on one thread's range.
    @inline(never)
    static func kernel(_ a: UnsafeMutablePointer<Float>, _ b: UnsafeMutablePointer<Float>, _ c: UnsafeMutablePointer<Float>, _ count: Int, _ scalar: Float) {
        for index in 0..<count { a[index] = b[index] + scalar * c[index] }
    }

    /// The three arrays, shared by workers that write disjoint ranges of `a`.
    private struct Pointers: @unchecked Sendable {
        let a: UnsafeMutablePointer<Float>
        let b: UnsafeMutablePointer<Float>
        let c: UnsafeMutablePointer<Float>
    }
}
