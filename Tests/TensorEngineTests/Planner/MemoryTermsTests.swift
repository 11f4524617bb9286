import Foundation
import Testing

@testable import TensorEngine

/// The memory beyond the cache: reads and writes at their own rates, and the cache's size as the
/// read probes find it. Expected values by hand from the rates given.
@Suite("Memory terms")
struct MemoryTermsTests {
    /// A stream reads two operands and writes one: with reads at 50 GB/s and the stream at 30, its
    /// time per 12 bytes, 0.4 ns, is 0.16 ns of reads and 0.24 ns for the 4 bytes written, so
    /// writes move at 16.7 GB/s, and the stream's own bytes are priced at its measured rate.
    @Test func writesAreTheStreamLessItsReads() {
        let memory = MemoryTerms(cacheBytes: 32e6, gbPerSecond: 30, readGBPerSecond: 50)
        #expect(memory.readRate == 50)
        #expect(abs(memory.writeRate - 50.0 / 3) < 1e-12)
        #expect(abs(memory.seconds(reading: 50e9) - 1) < 1e-12)
        #expect(abs(memory.seconds(reading: 0, writing: 50e9 / 3) - 1) < 1e-12)
        #expect(abs(memory.seconds(reading: 2e9, writing: 1e9) - 3e9 / 30e9) < 1e-12, "the stream at its rate")
    }

    /// Without a read rate, or with one below the stream's (as the shared Xeon measured: reads
    /// alone 22-28 GB/s beside a stream at 28-33), reads and writes both move at the stream's rate.
    @Test func slowOrMissingReadsTakeTheStreamsRate() {
        for read in [nil, 20.0, 30.0] {
            let memory = MemoryTerms(cacheBytes: 32e6, gbPerSecond: 30, readGBPerSecond: read)
            #expect(memory.readRate == 30)
            #expect(abs(memory.writeRate - 30) < 1e-12)
            #expect(abs(memory.seconds(reading: 2e9, writing: 1e9) - 0.1) < 1e-12)
        }
    }

    /// Beyond twice the cache a step's reads go at the read rate and its writes at the write
    /// rate; between one and two caches, a blend with the row's in-cache rate; a row slower than
    /// memory keeps its own; operands streamed from memory (a model's weights) go at the read rate.
    @Test func stepsBeyondTheCacheReadAndWriteAtTheirRates() {
        var profile = PlannerTests.profile(.openblas, gflops: 100, bandwidth: 1, launch: 0, link: nil)
        profile.rows = [
            .elementwise: CostTerms(gflops: 100, gbPerSecond: 100, launchSeconds: 0),
            .movement: CostTerms(gflops: 100, gbPerSecond: 5, launchSeconds: 0),
        ]
        profile.memory = MemoryTerms(cacheBytes: 32e6, gbPerSecond: 30, readGBPerSecond: 50)
        func seconds(read: Double, written: Double = 0, _ costClass: CostClass = .elementwise) -> Double {
            profile.seconds(for: Cost(bytesRead: read, bytesWritten: written), costClass: costClass)
        }
        #expect(abs(seconds(read: 128e6) - 128e6 / 50e9) < 1e-15, "a 128 MB sum: all reads")
        #expect(abs(seconds(read: 128e6, written: 64e6) - (128e6 / 50e9 + 64e6 / (50e9 / 3))) < 1e-15)
        #expect(seconds(read: 16e6, written: 16e6) == 32e6 / 100e9, "the cache's size: in cache")
        // 48 MB read: half in cache at 100 GB/s, half from memory at 50.
        #expect(abs(seconds(read: 48e6) - (24e6 / 100e9 + 24e6 / 50e9)) < 1e-15)
        #expect(abs(seconds(read: 128e6, .movement) - 128e6 / 5e9) < 1e-15, "slower than memory: its own")
        let product = Cost(flops: 2e6, bytesRead: 1e6)
        #expect(profile.seconds(for: product, costClass: .elementwise) == 2e6 / 100e9)
        let streamed = profile.seconds(for: product, costClass: .elementwise, streamedBytes: 4e6)
        #expect(abs(streamed - 4e6 / 50e9) < 1e-15, "a 4 MB weight read at 50 GB/s")
    }

    /// The cache the memory terms start beyond is the largest read probe whose best run was still
    /// nearer the in-cache rate than the memory's (at or above their geometric mean, 40 GB/s for
    /// 80 and 20), at most the stated size; the stated size when every probe read in the cache,
    /// when a rate is missing, or when the rates do not tell the cache from memory.
    @Test func theCacheIsTheLargestReadThatRanInIt() {
        let mib = 1 << 20
        func cache(_ rates: [Double?], stated: Int?) -> Int {
            Calibration.effectiveCacheBytes(
                inCache: 80, memory: 20, base: 12 * mib,
                probes: zip([32 * mib, 64 * mib, 128 * mib], rates).map { ($0, $1) }, stated: stated)
        }
        // A virtual machine's sysfs states its socket's 260 MiB; its share read 64 MiB in cache.
        #expect(cache([70, 45, 25], stated: 260 * mib) == 64 * mib)
        #expect(cache([70, 40, 25], stated: 260 * mib) == 64 * mib, "at the threshold: in cache")
        #expect(cache([30, 25, 22], stated: 260 * mib) == 12 * mib, "none in cache: the in-cache probe's")
        #expect(cache([70, 45, 22], stated: 48 * mib) == 48 * mib, "never above the stated size")
        #expect(cache([70, 45, 22], stated: nil) == 64 * mib)
        #expect(cache([70, 65, 60], stated: 260 * mib) == 260 * mib)
        #expect(cache([70, 65, 60], stated: nil) == 128 * mib)
        #expect(cache([70, nil, 60], stated: 260 * mib) == 260 * mib)
        let flat = Calibration.effectiveCacheBytes(
            inCache: 20, memory: 25, base: 12 * mib, probes: [(32 * mib, 22)], stated: 30 * mib)
        #expect(flat == 30 * mib)
        let unmeasured = Calibration.effectiveCacheBytes(
            inCache: nil, memory: 25, base: 12 * mib, probes: [(32 * mib, 22)], stated: nil)
        #expect(unmeasured == 12 * mib)
    }

    /// A read at 40 GB/s between 100 in the cache and 25 from memory spends 25 ps a byte: half of
    /// its bytes at 10 ps and half at 40. Rates beyond either end are clamped; no share without
    /// a cache faster than the memory.
    @Test func aReadsCachedShareIsItsWeightBetweenTheRates() {
        #expect(CachedShare.share(rate: 40, inCache: 100, memory: 25) == 0.5)
        #expect(CachedShare.share(rate: 25, inCache: 100, memory: 25) == 0)
        #expect(CachedShare.share(rate: 100, inCache: 100, memory: 25) == 1)
        #expect(CachedShare.share(rate: 120, inCache: 100, memory: 25) == 1)
        #expect(CachedShare.share(rate: 20, inCache: 100, memory: 25) == 0)
        #expect(CachedShare.share(rate: 40, inCache: 25, memory: 25) == nil)
        // The calibration's shares, by size, from the read probes' rates.
        let shares = Calibration.cachedShares(
            inCache: 100, memory: 25, probes: [(128, 25), (64, 40), (32, 100)])
        #expect(
            shares == [CachedShare(bytes: 32, share: 1), .init(bytes: 64, share: 0.5), .init(bytes: 128, share: 0)])
        #expect(Calibration.cachedShares(inCache: 100, memory: 25, probes: [(64, 40), (128, nil)]) == nil)
        #expect(Calibration.cachedShares(inCache: nil, memory: 25, probes: [(64, 40)]) == nil)
    }

    /// Measured shares are interpolated over the logarithm of the size, from all of a working set
    /// at the cache's size; a share above a smaller size's is taken as that one; beyond the last,
    /// the last. A 64 MB sum with half its bytes in cache: half at 100 GB/s, half at 25.
    @Test func measuredSharesPriceTheStepsBeyondTheCache() {
        let memory = MemoryTerms(
            cacheBytes: 32e6, gbPerSecond: 25,
            cachedShares: [
                .init(bytes: 16e6, share: 1), .init(bytes: 64e6, share: 0.5), .init(bytes: 128e6, share: 0.2),
            ])
        #expect(memory.cachedShare(of: 32e6) == 1)
        #expect(abs(memory.cachedShare(of: (32e6 * 64e6).squareRoot()) - 0.75) < 1e-12)
        #expect(abs(memory.cachedShare(of: 64e6) - 0.5) < 1e-12)
        #expect(abs(memory.cachedShare(of: (64e6 * 128e6).squareRoot()) - 0.35) < 1e-12)
        #expect(abs(memory.cachedShare(of: 400e6) - 0.2) < 1e-12)
        let rising = MemoryTerms(
            cacheBytes: 32e6, gbPerSecond: 25,
            cachedShares: [.init(bytes: 64e6, share: 0.3), .init(bytes: 128e6, share: 0.5)])
        #expect(abs(rising.cachedShare(of: 128e6) - 0.3) < 1e-12)
        #expect(MemoryTerms(cacheBytes: 32e6, gbPerSecond: 25).cachedShare(of: 48e6) == 0.5, "no shares: straight")
        // Shares as a hand-edited file may hold them: out of order, repeated, not finite.
        let edited = MemoryTerms(
            cacheBytes: 32e6, gbPerSecond: 25,
            cachedShares: [
                .init(bytes: 128e6, share: 0.2), .init(bytes: 64e6, share: 0.5), .init(bytes: 64e6, share: 0.5),
                .init(bytes: .infinity, share: 0), .init(bytes: 96e6, share: .nan),
            ])
        #expect(abs(edited.cachedShare(of: 64e6) - 0.5) < 1e-12)
        #expect(abs(edited.cachedShare(of: (64e6 * 128e6).squareRoot()) - 0.35) < 1e-12)
        #expect(abs(edited.cachedShare(of: 1e12) - 0.2) < 1e-12)
        var profile = PlannerTests.profile(.openblas, gflops: 100, bandwidth: 1, launch: 0, link: nil)
        profile.rows = [.reduction: CostTerms(gflops: 100, gbPerSecond: 100, launchSeconds: 0)]
        profile.memory = memory
        let sum = profile.seconds(for: Cost(bytesRead: 64e6), costClass: .reduction)
        #expect(abs(sum - (32e6 / 100e9 + 32e6 / 25e9)) < 1e-15)
    }

    /// Memory terms stored before reads had a rate of their own decode with none (the stream's).
    @Test func storedTermsWithoutAReadRateDecode() throws {
        let old = try JSONDecoder().decode(MemoryTerms.self, from: Data(#"{"cacheBytes":1,"gbPerSecond":2}"#.utf8))
        #expect(old == MemoryTerms(cacheBytes: 1, gbPerSecond: 2))
        #expect(old.readGBPerSecond == nil && old.cachedShares == nil)
        let new = MemoryTerms(
            cacheBytes: 64, gbPerSecond: 30, readGBPerSecond: 45, cachedShares: [.init(bytes: 128, share: 0.25)])
        #expect(try JSONDecoder().decode(MemoryTerms.self, from: JSONEncoder().encode(new)) == new)
    }

    /// A probe's warm-up runs are left out of its samples; the reads that find the cache (32, 64
    /// and 128 MiB), the memory's read and the transpose beyond the cache run on host memory alone:
    /// a device's terms are its stream's.
    @Test func warmUpRunsAreNotSampled() throws {
        let times = try Calibration.samples(OpenBLASBackend(), runs: 3, warmUpRuns: 2) {
            Tensor(shape: [4], scalars: [1, 2, 3, 4]).softmax()
        }
        #expect(times.count == 3)
        let mib = Double(1 << 20)
        let probes = Calibration.memoryProbes
        let hostOnly = probes.filter(\.hostMemoryOnly).map(\.name)
        #expect(hostOnly.count == 2 + Calibration.Sizes.cacheReadCounts.count)
        #expect(hostOnly.contains(.memoryMovement) && hostOnly.contains(.memoryRead))
        #expect(!hostOnly.contains(.memoryStream))
        #expect(Calibration.Sizes.cacheReadCounts.map { Double($0 * 4) / mib } == [32, 64, 128])
    }
}
