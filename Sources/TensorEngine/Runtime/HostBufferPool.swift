#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Large host blocks kept after their buffers go, for the next allocation of the same size.
///
/// A fresh large allocation comes from `mmap` and faults in one page at a time on first touch:
/// measured here, that costs more than the kernel writing it (a 64 MiB output took 36 ms to produce
/// from a fresh buffer, against 13 ms from a reused one). Evaluating a same-shaped graph again asks
/// for the same sizes, so blocks of 128 KiB and more are kept, by exact size, up to a budget
/// (`TENSORENGINE_HOST_POOL_BYTES`, default 1 GiB or a quarter of memory, whichever is smaller);
/// the least recently returned go first when it is full.
final class HostBufferPool: Sendable {
    static let shared = HostBufferPool()

    /// Blocks smaller than this go straight back to `free`: the C allocator recycles them well.
    /// From glibc's first `mmap` threshold (128 KiB) on, it does not: blocks freed by the workers'
    /// arenas go back to the system, and attention's 768 KiB scores faulted in every evaluation
    /// (a fifth of the `attention` workload's time with a 1 MiB threshold).
    static let minimumPooledBytes = 128 << 10

    let budget: Int
    private let state = Guarded(State())

    /// Blocks are held as addresses (`UInt`), which are `Sendable`; nothing else touches them.
    private struct State {
        var blocks: [Int: [UInt]] = [:]
        var order: [(size: Int, address: UInt)] = []
        var bytes = 0
    }

    init() {
        let configured = ProcessInfo.processInfo.environment["TENSORENGINE_HOST_POOL_BYTES"].flatMap(MemoryLimit.parse)
        budget = configured ?? Swift.min(1 << 30, Int(clamping: ProcessInfo.processInfo.physicalMemory / 4))
    }

    /// The size a request is served with: exact below the pooling threshold, else whole pages.
    static func capacity(for byteCount: Int) -> Int {
        let size = Swift.max(byteCount, 64)
        return size < minimumPooledBytes ? size : (size + 4095) / 4096 * 4096
    }

    /// A kept block of exactly `capacity` bytes, if any.
    func take(_ capacity: Int) -> UnsafeMutableRawPointer? {
        guard capacity >= Self.minimumPooledBytes else { return nil }
        let address: UInt? = state.withLock { state in
            guard let address = state.blocks[capacity]?.popLast() else { return nil }
            state.bytes -= capacity
            if let index = state.order.firstIndex(where: { $0.address == address }) { state.order.remove(at: index) }
            return address
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
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
                if let index = state.blocks[oldest.size]?.firstIndex(of: oldest.address) { state.blocks[oldest.size]?.remove(at: index) }
                state.bytes -= oldest.size
                evicted.append(oldest.address)
            }
            state.blocks[capacity, default: []].append(address)
            state.order.append((capacity, address))
            state.bytes += capacity
            return evicted
        }
        for block in evicted { free(UnsafeMutableRawPointer(bitPattern: block)) }
    }

    /// Bytes held for reuse.
    var pooledBytes: Int { state.withLock { $0.bytes } }
}
