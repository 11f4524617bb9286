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

    @Test func takesTheMostRecentlyReturnedBlockThatFits() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        let (older, newer, tooSmall) = (try block(256 * kib), try block(512 * kib), try block(192 * kib))
        pool.give(older, capacity: 256 * kib)
        pool.give(newer, capacity: 512 * kib)
        pool.give(tooSmall, capacity: 192 * kib)
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
        let large = try block(4 << 20)
        pool.give(large, capacity: 4 << 20)
        #expect(pool.take(128 * kib) == nil, "4 MiB is more than \(HostBufferPool.largestReuseFactor) × 128 KiB")
        let taken = try #require(pool.take(512 * kib))
        #expect(taken.pointer == large && pool.pooledBytes == 0)
        free(taken.pointer)
    }

    @Test func smallRequestsAreNotPooled() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        pool.give(try block(256 * kib), capacity: 256 * kib)
        #expect(pool.take(64 * kib) == nil)
        #expect(pool.pooledBytes == 256 * kib)
    }

    @Test func freesTheLeastRecentlyReturnedBeyondTheBudget() throws {
        let pool = HostBufferPool(budget: 1 << 20)
        let (first, second, third) = (try block(512 * kib), try block(512 * kib), try block(256 * kib))
        pool.give(first, capacity: 512 * kib)
        pool.give(second, capacity: 512 * kib)
        pool.give(third, capacity: 256 * kib)
        #expect(pool.pooledBytes == 768 * kib, "the first block is freed to make room")
        let taken = try #require(pool.take(512 * kib))
        #expect(taken.pointer == second)
        #expect(pool.take(512 * kib) == nil)
        free(taken.pointer)
    }

    @Test func aReusedLargerBlockGoesBackWhole() throws {
        let pool = HostBufferPool(budget: 64 << 20)
        pool.give(try block(1 << 20), capacity: 1 << 20)
        let taken = try #require(pool.take(HostBufferPool.capacity(for: 200 * kib)))
        #expect(taken.capacity == 1 << 20)
        pool.give(taken.pointer, capacity: taken.capacity)
        #expect(pool.pooledBytes == 1 << 20)
    }
}
