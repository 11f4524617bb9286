#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Large host blocks kept after their buffers go, for the next allocations.
///
/// A fresh large allocation comes from `mmap` and faults in one page at a time on first touch:
/// measured here, that costs more than the kernel writing it (a 64 MiB output took 36 ms to produce
/// from a fresh buffer, against 13 ms from a reused one). So blocks of 128 KiB and more are kept,
/// up to a budget (`TENSORENGINE_HOST_POOL_BYTES`, default 1 GiB or a quarter of memory, whichever
/// is smaller); the least recently returned go first when it is full.
///
/// A request takes the most recently returned block that holds it and is at most
/// ``largestReuseFactor`` times its size, not only a block of its exact size: the memory a step
/// writes is then, as far as can be, memory an earlier step of the same evaluation just freed,
/// still in cache. Kept by exact size, SqueezeNet's evaluation wrote its activations into 16 sizes
/// of blocks (10.3 MiB at least, beside 5 MiB of weights), which the last-level cache shared with
/// other cores no longer held at the next evaluation: the kernel of its first convolution took
/// 500-580 µs there against 287 µs with its buffers warm. By recency the blocks are 5 (6.9 MiB),
/// and that kernel took 380-510 µs.
final class HostBufferPool: Sendable {
    static let shared = HostBufferPool()

    /// Blocks smaller than this go straight back to `free`: the C allocator recycles them well.
    /// From glibc's first `mmap` threshold (128 KiB) on, it does not: blocks freed by the workers'
    /// arenas go back to the system, and attention's 768 KiB scores faulted in every evaluation
    /// (a fifth of the `attention` workload's time with a 1 MiB threshold).
    static let minimumPooledBytes = 128 << 10

    /// How many times a request's size a block it takes may be: more would hold large blocks with
    /// small values while a later step of the evaluation asks for a fresh large block.
    static let largestReuseFactor = 8

    /// The size of a transparent huge page on x86-64 and most arm64 Linux kernels.
    static let hugePageBytes = 2 << 20

    let budget: Int
    private let state = Guarded(State())

    /// Blocks are held as addresses (`UInt`), which are `Sendable`; nothing else touches them.
    private struct State {
        /// The kept blocks, the least recently returned first.
        var order: [(size: Int, address: UInt)] = []
        var bytes = 0
    }

    convenience init() {
        let configured = ProcessInfo.processInfo.environment["TENSORENGINE_HOST_POOL_BYTES"].flatMap(MemoryLimit.parse)
        self.init(budget: configured ?? Swift.min(1 << 30, Int(clamping: ProcessInfo.processInfo.physicalMemory / 4)))
    }

    /// A pool that keeps at most `budget` bytes.
    init(budget: Int) { self.budget = budget }

    deinit {
        let kept = state.withLock { state in state.order.map(\.address) }
        for address in kept { free(UnsafeMutableRawPointer(bitPattern: address)) }
    }

    /// The size a request needs allocated: exact below the pooling threshold, else whole pages.
    static func capacity(for byteCount: Int) -> Int {
        let size = Swift.max(byteCount, 64)
        return size < minimumPooledBytes ? size : (size + 4095) / 4096 * 4096
    }

    /// The most recently returned kept block of at least `capacity` bytes and at most
    /// ``largestReuseFactor`` times that, with its size, if any.
    func take(_ capacity: Int) -> (pointer: UnsafeMutableRawPointer, capacity: Int)? {
        guard capacity >= Self.minimumPooledBytes else { return nil }
        let largest = capacity.multipliedReportingOverflow(by: Self.largestReuseFactor)
        let limit = largest.overflow ? Int.max : largest.partialValue
        let block: (size: Int, address: UInt)? = state.withLock { state in
            guard let index = state.order.lastIndex(where: { $0.size >= capacity && $0.size <= limit }) else {
                return nil
            }
            state.bytes -= state.order[index].size
            return state.order.remove(at: index)
        }
        guard let block, let pointer = UnsafeMutableRawPointer(bitPattern: block.address) else { return nil }
        return (pointer, block.size)
    }

    /// Keeps a block for reuse, or frees it (and older blocks) to stay within the budget.
    func give(_ pointer: UnsafeMutableRawPointer, capacity: Int) {
        guard capacity >= Self.minimumPooledBytes, capacity <= budget else {
            free(pointer)
            return
        }
        let address = UInt(bitPattern: Int(bitPattern: pointer))
        let evicted: [UInt] = state.withLock { state in
            var evicted: [UInt] = []
            while state.bytes + capacity > budget, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= oldest.size
                evicted.append(oldest.address)
            }
            state.order.append((capacity, address))
            state.bytes += capacity
            return evicted
        }
        for block in evicted { free(UnsafeMutableRawPointer(bitPattern: block)) }
    }

    /// Bytes held for reuse.
    var pooledBytes: Int { state.withLock { $0.bytes } }
}
