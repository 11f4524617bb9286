/// The memory beyond the cache: how much of the cache the device's work keeps, and the rates of
/// reads and writes past it.
///
/// The cache's size comes from the device (sysfs for the host backends,
/// `CL_DEVICE_GLOBAL_MEM_CACHE_SIZE` for OpenCL), but a virtual machine's sysfs gives its
/// socket's cache (260 MiB on one shared server), of which its cores keep far less: sums of 32 to
/// 128 MiB find the working set where the rate falls
/// (``effectiveCacheBytes(inCache:memory:base:probes:stated:)``).
/// Past it, a stream (two operands read, one written) and a sum (reads alone) of 192 MiB give
/// the rates of reads and of writes (``MemoryTerms``). None of these run on the naive loops,
/// which would take seconds, and the reads and the transpose run on host memory alone: a device's
/// terms are its stream's, beyond the cache it states.
extension Calibration {
    /// The probes of memory beyond the cache.
    static let memoryProbes: [Probe] = [
        Probe(name: .memoryStream, runs: 5, slowRuns: nil, budget: 0.5) { _ throws(TensorError) in
            let (x, y) = (try filled(Sizes.memoryStreamCount, 1), try filled(Sizes.memoryStreamCount, 2))
            return { x + y }
        },
        // The stream's bytes read alone: a sum, whose one result is written in no time.
        Probe(name: .memoryRead, runs: 5, slowRuns: nil, budget: 0.5, hostMemoryOnly: true) {
            _ throws(TensorError) in
            let x = try filled(Sizes.memoryReadCount, 3)
            return { x.sum() }
        },
    ] + Sizes.cacheReadCounts.map { count in
        // Five runs in a row to warm up, then five: how much of a working set the cache keeps
        // grows over runs in a row (a 64 MiB sum read below the threshold after one run, as the
        // benchmark's mean then read it at 50 GB/s).
        Probe(
            name: .cacheRead(count), runs: 5, slowRuns: nil, budget: 0.3, keepsBest: true, hostMemoryOnly: true,
            warmUpRuns: 5, splitAcrossPasses: false
        ) { _ throws(TensorError) in
            let x = try filled(count, 4)
            return { x.sum() }
        }
    } + [
        // A transpose far beyond the cache (64 MiB each way): lines read and written far apart,
        // which run below the memory stream's rate. Its rate settles only after many runs in a
        // row (on one shared server from 9 ms a run to 4.2 over fifteen, after other work), as a
        // benchmark of it runs: twelve runs to warm up, then eight, all in the first pass. On host
        // memory only: PoCL's CPU device moves 64 MiB at its in-cache rate (6 GB/s, below the
        // memory's), and spent 0.3 s a calibration on it; a device's movement beyond its cache is
        // priced at its stream's rate.
        Probe(
            name: .memoryMovement, runs: 8, slowRuns: nil, budget: 0.3, hostMemoryOnly: true, warmUpRuns: 12,
            splitAcrossPasses: false
        ) { _ throws(TensorError) in
            let edge = Sizes.memoryMovementEdge
            let square = try filled(edge * edge, 6).reshaped(to: [edge, edge])
            return { square.transposed().reshaped(to: [edge * edge]) }
        },
    ]

    /// The memory terms from the memory probes' times, or `nil` where they did not run (the naive
    /// backend). `stated`: the cache's size as the device gives it.
    static func memoryTerms(_ measured: Measurements, stated: Int?) -> MemoryTerms? {
        guard let stream = measured.rate(.memoryStream, bytes: Sizes.streamBytes(Sizes.memoryStreamCount)) else {
            return nil
        }
        let read = measured.rate(.memoryRead, bytes: Sizes.memoryReadCount * 4, launch: .reductionLaunch)
        let base = Sizes.longReductionRows(measured.scale) * 1024 * 4
        let inCache = measured.rate(.reduceLong, bytes: base, launch: .reductionLaunch)
        let probes = Sizes.cacheReadCounts.map { count in
            (bytes: count * 4, rate: measured.rate(.cacheRead(count), bytes: count * 4, launch: .reductionLaunch))
        }
        let cache = effectiveCacheBytes(
            inCache: inCache, memory: read ?? stream, base: base, probes: probes, stated: stated)
        return MemoryTerms(
            cacheBytes: Double(cache), gbPerSecond: stream, readGBPerSecond: read,
            cachedShares: cachedShares(
                inCache: inCache, memory: read ?? stream,
                probes: probes + [(Sizes.memoryReadCount * 4, read)]))
    }

    /// The shares of the read probes' working sets read from the cache
    /// (``CachedShare/share(rate:inCache:memory:)``), in order of size; `nil` when a rate is
    /// missing or the cache is no faster than the memory. The memory read's own share is 0 by
    /// construction: beyond it, reads are priced wholly at the memory's rate.
    static func cachedShares(
        inCache: Double?, memory: Double, probes: [(bytes: Int, rate: Double?)]
    ) -> [CachedShare]? {
        guard let inCache else { return nil }
        var shares: [CachedShare] = []
        for (bytes, rate) in probes.sorted(by: { $0.bytes < $1.bytes }) {
            guard let rate, let share = CachedShare.share(rate: rate, inCache: inCache, memory: memory) else {
                return nil
            }
            shares.append(CachedShare(bytes: Double(bytes), share: share))
        }
        return shares.isEmpty ? nil : shares
    }

    /// GB/s of the transpose far beyond the cache, its bytes read and written.
    static func movementMemoryRate(_ measured: Measurements) -> Double? {
        let edge = Sizes.memoryMovementEdge
        return measured.rate(.memoryMovement, bytes: 2 * edge * edge * 4, launch: .movementLaunch)
    }

    /// The bytes of cache the memory terms start beyond: the largest working set of the read
    /// probes whose best run (after runs in a row) still read nearer the in-cache rate than the
    /// memory's (at or above their geometric mean), at most the size the device states; the
    /// stated size (or the in-cache probe's bytes, where it states none) when the rates do not
    /// tell. Reads, not a
    /// stream: on one shared server a stream of 24 MiB already slowed while a sum of 64 MiB read
    /// at 45 GB/s, near the 54 of 12 MiB; the memory terms price the stream's writes apart.
    static func effectiveCacheBytes(
        inCache: Double?, memory: Double, base: Int, probes: [(bytes: Int, rate: Double?)], stated: Int?
    ) -> Int {
        guard let inCache, inCache > memory, !probes.isEmpty else { return stated ?? base }
        let threshold = (inCache * memory).squareRoot()
        var largest = base
        for (bytes, rate) in probes {
            guard let rate else { return stated ?? base }
            guard rate >= threshold else { return Swift.min(stated ?? largest, largest) }
            largest = bytes
        }
        // Every probe ran in the cache: it is at least as large as the largest.
        return Swift.max(stated ?? largest, largest)
    }

    /// A host constant of `count` copies of `value`: a stream's input, whose values do not
    /// matter, made without drawing random numbers (the memory probes' take seconds to draw).
    static func filled(_ count: Int, _ value: Float) throws(TensorError) -> Tensor {
        let t = Tensor(shape: [count], scalars: repeatElement(value, count: count))
        if let error = t.error { throw error }
        return t
    }
}

extension Calibration.Sizes {
    /// Floats of each operand of the memory stream: three of them (192 MiB) are far beyond the
    /// last-level cache of most CPUs.
    static let memoryStreamCount = 1 << 24
    /// Floats the memory read sums: the memory stream's 192 MiB.
    static let memoryReadCount = 3 << 24
    /// Floats of the reads that find how much of the cache is the device's: 32, 64 and 128 MiB,
    /// between the in-cache reduction's 12 MiB and the memory read's 192 MiB.
    static let cacheReadCounts = [1 << 23, 1 << 24, 1 << 25]
    /// The edge of the square the memory movement probe transposes: 2²⁴ floats.
    static let memoryMovementEdge = 1 << 12
}
