#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import TensorEngine

/// The host pool hands back the most recently returned block that fits, within its size bound and
/// its budget; a pool frees what it still keeps when it goes.
@Suite("Host buffer pool")
struct HostBufferPoolTests {
    private let kib = 1 << 10

    /// A block the pool may free: allocated as ``HostBuffer`` allocates.
    private func block(_ bytes: Int) throws -> UnsafeMutableRawPointer {
        var raw: UnsafeMutableRawPointer?
        #expect(posix_memalign(&raw, 64, bytes) == 0)
        return try #require(raw)
    }

    /// Blocks of these sizes given to `pool` in order.
    private func given(_ sizes: [Int], to pool: HostBufferPool) throws -> [UnsafeMutableRawPointer] {
        try sizes.map { size in
            let pointer = try block(size)
            pool.give(pointer, capacity: size)
            return pointer
        }
    }

    @Test func takesTheMostRecentlyReturnedBlockThatFits() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        let blocks = try given([256 * kib, 512 * kib, 192 * kib], to: pool)
        let (older, newer) = (blocks[0], blocks[1])
        let first = try #require(pool.take(256 * kib))
        #expect(first.pointer == newer && first.capacity == 512 * kib)
        let second = try #require(pool.take(256 * kib))
        #expect(second.pointer == older && second.capacity == 256 * kib)
        #expect(pool.take(256 * kib) == nil, "the 192 KiB block is too small for 256 KiB")
        #expect(pool.pooledBytes == 192 * kib)
        for pointer in [first.pointer, second.pointer] { free(pointer) }
    }

    @Test func leavesBlocksFarLargerThanTheRequest() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        let large = try given([4 << 20], to: pool)[0]
        #expect(pool.take(128 * kib) == nil, "4 MiB is more than \(HostBufferPool.largestReuseFactor) × 128 KiB")
        let taken = try #require(pool.take(512 * kib))
        #expect(taken.pointer == large && pool.pooledBytes == 0)
        free(taken.pointer)
    }

    @Test func smallRequestsAreNotPooled() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        _ = try given([256 * kib], to: pool)
        #expect(pool.take(64 * kib) == nil)
        #expect(pool.pooledBytes == 256 * kib)
    }

    @Test func freesTheLeastRecentlyReturnedBeyondTheBudget() throws {
        let pool = HostBufferPool(budget: 1 << 20)
        let blocks = try given([512 * kib, 512 * kib, 256 * kib], to: pool)
        #expect(pool.pooledBytes == 768 * kib, "the first block is freed to make room")
        let taken = try #require(pool.take(512 * kib))
        #expect(taken.pointer == blocks[1])
        #expect(pool.take(512 * kib) == nil)
        free(taken.pointer)
    }

    @Test func aReusedLargerBlockGoesBackWhole() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        _ = try given([1 << 20], to: pool)
        let taken = try #require(pool.take(HostBufferPool.capacity(for: 200 * kib)))
        #expect(taken.capacity == 1 << 20)
        pool.give(taken.pointer, capacity: taken.capacity)
        #expect(pool.pooledBytes == 1 << 20)
    }
}
