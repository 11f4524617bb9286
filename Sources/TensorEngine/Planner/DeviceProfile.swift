import Foundation

/// What one backend's device achieves: the figures the cost model turns work into time with.
///
/// A table: one row per ``CostClass`` (the kind of work an op's cost rule says it does), one
/// column per cost term (``CostTerms``). A new kind of work or a new device is new rows of data,
/// not new properties; a class with no row of its own is priced by the row of its
/// ``CostClass/fallback``. Made by a backend (``Backend/defaultProfile``) or measured by
/// `tensorplan calibrate` (`Calibration`, its probes as a list).
public struct DeviceProfile: Sendable, Hashable, Codable {
    /// The backend the profile describes.
    public var backend: BackendID
    /// The device's name.
    public var deviceName: String
    /// Threads the backend runs on.
    public var threads: Int
    /// Whether the numbers come from a calibration run on this machine (else documented defaults).
    public var calibrated: Bool
    /// The terms of each kind of work.
    public var rows: [CostClass: CostTerms]
    /// Copies between the host and the device; `nil` when the device works on host memory.
    public var transfer: TransferTerms?
    /// Seconds of the engine's own work per recorded operation (``Cost/operations``): recording
    /// it, walking and planning the graph, and the executor's bookkeeping, whatever its kernel.
    public var secondsPerOperation: Double
    /// Seconds of the engine's fixed work per evaluation that runs on this device, beyond its
    /// operations: finding the plan, starting the executor, reading the results back.
    public var secondsPerEvaluation: Double
    /// Memory beyond the device's last-level cache. The rows' GB/s are rates of work whose bytes
    /// fit in that cache (a calibration measures them there); work that moves twice
    /// ``MemoryTerms/cacheBytes`` or more reads and writes at the memory's rates at most, and
    /// work between one and two caches at a blend of the two, or at the blend the calibration's
    /// reads measured (``MemoryTerms/cachedShares``). `nil`: the rows' rates hold at every size.
    public var memory: MemoryTerms?
    /// When the calibration that made the profile ran while other work held some of the machine's
    /// cores (``CoreAvailability``), the time it ran: its figures describe the contended machine,
    /// so a later process measures the device again once ``Calibration/busyRetrySeconds`` have
    /// passed. `nil` for a calibration on a quiet machine, and for defaults.
    public var measuredOnBusyMachine: Date?

    /// A profile of the given rows.
    public init(
        backend: BackendID, deviceName: String, threads: Int, calibrated: Bool, rows: [CostClass: CostTerms],
        transfer: TransferTerms?, secondsPerOperation: Double = 0, secondsPerEvaluation: Double = 0,
        memory: MemoryTerms? = nil
    ) {
        self.backend = backend
        self.deviceName = deviceName
        self.threads = threads
        self.calibrated = calibrated
        self.rows = rows
        self.transfer = transfer
        self.secondsPerOperation = secondsPerOperation
        self.secondsPerEvaluation = secondsPerEvaluation
        self.memory = memory
    }

    /// Whether a first-use calibration measures the device (again): the profile is a default, or
    /// was measured on a busy machine at least ``Calibration/busyRetrySeconds`` before `now`.
    func wantsCalibration(at now: Date = Date()) -> Bool {
        guard calibrated else { return true }
        guard let measuredOnBusyMachine else { return false }
        return now.timeIntervalSince(measuredOnBusyMachine) >= Calibration.busyRetrySeconds
    }

    /// The row that prices a class of work: its own, else its fallback's.
    public func row(_ costClass: CostClass) -> CostTerms {
        var current: CostClass? = costClass
        while let candidate = current {
            if let row = rows[candidate] { return row }
            current = candidate.fallback
        }
        return .unknown
    }

    /// Seconds a cost of this class takes on this device by a roofline estimate: compute and
    /// memory time overlapped, plus a fixed cost per launch (and per operand beyond the first,
    /// which devices bind one by one), per line and per operation. `streamedBytes` of the work's
    /// operands are read from memory beyond the cache (at ``memory``'s read rate; the planner
    /// passes a model's weights when they outgrow the cache together), overlapped as well.
    func seconds(for cost: Cost, costClass: CostClass, operands: Int = 1, streamedBytes: Double = 0) -> Double {
        let bookkeeping = cost.operations * secondsPerOperation
        guard cost.launches > 0 || cost.flops > 0 || cost.bytesMoved > 0 else { return bookkeeping }
        let row = row(costClass)
        let compute = cost.flops / (row.gflops(forFLOPs: cost.flops) * 1e9)
        let memory = movingSeconds(cost, row)
        let streaming = self.memory.map {
            Swift.max($0.seconds(reading: streamedBytes), streamedBytes / (row.gbPerSecond * 1e9))
        } ?? 0
        let launch = row.launchSeconds + Double(Swift.max(0, operands - 1)) * row.secondsPerOperand
        return Swift.max(compute, memory, streaming) + cost.lines * row.secondsPerLine + cost.launches * launch
            + bookkeeping
    }

    /// Seconds the work of this row takes to read and write its bytes: at the row's own GB/s
    /// while they fit in the cache, from memory (``MemoryTerms``, or the row's own memory rate)
    /// beyond it, in the shares ``MemoryTerms/cachedShare(of:)`` gives: measured by the
    /// calibration's reads, else all from memory from twice the cache's size and a straight
    /// blend between (a last-level cache keeps much of a working set its size). Never faster
    /// than in the cache.
    func movingSeconds(_ cost: Cost, _ row: CostTerms) -> Double {
        let bytes = cost.bytesMoved
        let inCache = bytes / (row.gbPerSecond * 1e9)
        guard let memory, bytes > memory.cacheBytes else { return inCache }
        let cached = memory.cachedShare(of: bytes)
        let fromMemory = row.memoryGBPerSecond.map { bytes / ($0 * 1e9) }
            ?? memory.seconds(reading: cost.bytesRead, writing: cost.bytesWritten)
        return cached * inCache + (1 - cached) * Swift.max(inCache, fromMemory)
    }

    /// Seconds to move bytes between the host and this device (zero for host memory).
    func transferSeconds(bytes: Double) -> Double {
        guard let transfer, bytes > 0 else { return 0 }
        return bytes / (transfer.gbPerSecond * 1e9) + transfer.launchSeconds
    }
}

/// The terms of one kind of work on one device: one row of a ``DeviceProfile``.
public struct CostTerms: Sendable, Hashable, Codable {
    /// Achieved GFLOP/s by the size of the work, as points (FLOPs of a probe, GFLOP/s) in
    /// increasing FLOPs: piecewise linear in log FLOPs between them, flat beyond. One point is a
    /// flat rate; matrix products have three (a device fills only with work enough: PoCL runs a
    /// 64³ product at 2-4 GFLOP/s and a 512³ one at ~80).
    public var gflops: [RatePoint]
    /// Achieved GB/s of the bytes the work reads and writes.
    public var gbPerSecond: Double
    /// Fixed seconds per launch.
    public var launchSeconds: Double
    /// Seconds per line beyond the bytes (``Cost/lines``: a device kernel that gives each row a
    /// work-group pays this per row).
    public var secondsPerLine: Double
    /// Seconds per operand beyond the first (a device binds each buffer a kernel reads).
    public var secondsPerOperand: Double
    /// GB/s of this work through memory far beyond the cache, where it is not the stream's
    /// (``MemoryTerms/gbPerSecond``): a transpose reads and writes lines far apart, and ran at
    /// 60% of the stream's rate on the EPYC machine. `nil`: the stream's.
    public var memoryGBPerSecond: Double?

    /// A row of the given terms.
    public init(
        gflops: [RatePoint], gbPerSecond: Double, launchSeconds: Double, secondsPerLine: Double = 0,
        secondsPerOperand: Double = 0, memoryGBPerSecond: Double? = nil
    ) {
        self.gflops = gflops
        self.gbPerSecond = gbPerSecond
        self.launchSeconds = launchSeconds
        self.secondsPerLine = secondsPerLine
        self.secondsPerOperand = secondsPerOperand
        self.memoryGBPerSecond = memoryGBPerSecond
    }

    /// A row at one rate whatever the size.
    public init(
        gflops: Double, gbPerSecond: Double, launchSeconds: Double, secondsPerLine: Double = 0,
        secondsPerOperand: Double = 0
    ) {
        self.init(
            gflops: [RatePoint(flops: 1, gflops: gflops)], gbPerSecond: gbPerSecond, launchSeconds: launchSeconds,
            secondsPerLine: secondsPerLine, secondsPerOperand: secondsPerOperand)
    }

    /// A row for a class no profile describes: slow, so that nothing is placed by it.
    static let unknown = CostTerms(gflops: 0.1, gbPerSecond: 0.1, launchSeconds: 1e-4)

    /// The rate at `flops` of work.
    public func gflops(forFLOPs flops: Double) -> Double {
        guard let first = gflops.first, let last = gflops.last else { return 1 }
        guard flops > first.flops else { return first.gflops }
        guard flops < last.flops else { return last.gflops }
        for (lower, upper) in zip(gflops, gflops.dropFirst()) where flops < upper.flops {
            return lower.gflops + log(flops / lower.flops) / log(upper.flops / lower.flops)
                * (upper.gflops - lower.gflops)
        }
        return last.gflops
    }
}

/// A measured rate: `gflops` GFLOP/s on work of `flops` FLOPs.
public struct RatePoint: Sendable, Hashable, Codable {
    public var flops: Double
    public var gflops: Double

    /// A point of a rate curve.
    public init(flops: Double, gflops: Double) {
        self.flops = flops
        self.gflops = gflops
    }

    /// The point of a cube product of this edge (2·n³ FLOPs).
    public static func cube(_ edge: Int, gflops: Double) -> RatePoint {
        RatePoint(flops: 2 * pow(Double(edge), 3), gflops: gflops)
    }
}

/// The device's memory beyond its last-level cache.
public struct MemoryTerms: Sendable, Hashable, Codable {
    /// Bytes of the last-level cache that the device's work keeps: work moving more than this
    /// streams partly from memory, and from twice this wholly.
    public var cacheBytes: Double
    /// GB/s of a stream through memory, far beyond the cache: two operands read, one written.
    public var gbPerSecond: Double
    /// GB/s of reading alone through memory (a reduction's), far beyond the cache; `nil`: the
    /// stream's. A write usually costs more than a read (its line is read before it is written,
    /// and written back later), so a stream's bytes tell reads and writes apart only with a
    /// read rate beside it.
    public var readGBPerSecond: Double?
    /// How much of a working set beyond ``cacheBytes`` still comes from the cache, measured by
    /// reads of a few sizes, in order of size; `nil` or empty: a straight fall from all of it at
    /// ``cacheBytes`` to none at twice that. A last-level cache that is not strictly LRU keeps
    /// part of a larger working set: on a 32 MiB one a 64 MiB sum read at 55 GB/s, beside 37
    /// from far beyond and 169 in the cache.
    public var cachedShares: [CachedShare]?

    /// Memory past a cache of `cacheBytes`, streamed at `gbPerSecond` and read alone at
    /// `readGBPerSecond` (`nil`: the stream's rate), with the measured `cachedShares` beyond it.
    public init(
        cacheBytes: Double, gbPerSecond: Double, readGBPerSecond: Double? = nil, cachedShares: [CachedShare]? = nil
    ) {
        self.cacheBytes = cacheBytes
        self.gbPerSecond = gbPerSecond
        self.readGBPerSecond = readGBPerSecond
        self.cachedShares = cachedShares
    }

    /// The share of a working set of `bytes` that comes from the cache: all of it up to
    /// ``cacheBytes``; beyond, the measured ``cachedShares`` interpolated over the logarithm of
    /// the size (from all of it at ``cacheBytes`` to the first, and the last one's beyond it),
    /// else a straight fall to none at twice ``cacheBytes``.
    public func cachedShare(of bytes: Double) -> Double {
        guard bytes > cacheBytes else { return 1 }
        // In order of size whatever a stored file says, finite, and each larger than the last.
        let points = (cachedShares ?? []).filter { $0.bytes > cacheBytes && $0.bytes.isFinite && $0.share.isFinite }
            .sorted { $0.bytes < $1.bytes }
        guard !points.isEmpty else { return Swift.min(1, Swift.max(0, 2 - bytes / Swift.max(cacheBytes, 1))) }
        var (lowBytes, lowShare) = (Swift.max(cacheBytes, 1), 1.0)
        for point in points where point.bytes > lowBytes {
            let share = Swift.min(lowShare, Swift.max(0, point.share))
            if bytes <= point.bytes {
                let t = log(bytes / lowBytes) / log(point.bytes / lowBytes)
                return lowShare + (share - lowShare) * t
            }
            (lowBytes, lowShare) = (point.bytes, share)
        }
        return lowShare
    }

    /// GB/s of reads from memory: the read probe's, and at least the stream's, so that writes
    /// are never priced faster than reads (on the shared Xeon of 2026-12-07 reads alone ran at
    /// 22-28 GB/s beside a stream at 28-33, and both take the stream's).
    public var readRate: Double { Swift.max(readGBPerSecond ?? gbPerSecond, gbPerSecond) }

    /// GB/s of writes to memory: the stream's time less its two reads', over its one write.
    /// The stream's rate when reads are no faster.
    public var writeRate: Double { 1 / (3 / gbPerSecond - 2 / readRate) }

    /// Seconds to read and write these bytes from and to memory, beyond the cache.
    public func seconds(reading bytesRead: Double, writing bytesWritten: Double = 0) -> Double {
        bytesRead / (readRate * 1e9) + bytesWritten / (writeRate * 1e9)
    }
}

/// The share of a working set of one size that a device's reads still find in its cache.
public struct CachedShare: Sendable, Hashable, Codable {
    /// The working set's bytes.
    public var bytes: Double
    /// The share of its bytes read at the in-cache rate, from 0 (all from memory) to 1.
    public var share: Double

    /// A working set of `bytes`, `share` of it read from the cache.
    public init(bytes: Double, share: Double) {
        self.bytes = bytes
        self.share = share
    }

    /// The share a read at `rate` GB/s finds in the cache, between reads at `inCache` and at
    /// `memory` GB/s: the weight of the in-cache rate in its time per byte, from 0 to 1; `nil`
    /// when the cache is no faster than the memory.
    public static func share(rate: Double, inCache: Double, memory: Double) -> Double? {
        guard inCache > memory, rate > 0, memory > 0 else { return nil }
        let share = (1 / rate - 1 / memory) / (1 / inCache - 1 / memory)
        return Swift.min(1, Swift.max(0, share))
    }
}

/// Copies between the host and a device.
public struct TransferTerms: Sendable, Hashable, Codable {
    /// Host ↔ device bandwidth.
    public var gbPerSecond: Double
    /// Fixed seconds per copy.
    public var launchSeconds: Double

    /// Copies at this bandwidth and fixed cost.
    public init(gbPerSecond: Double, launchSeconds: Double) {
        self.gbPerSecond = gbPerSecond
        self.launchSeconds = launchSeconds
    }
}

extension CostClass {
    /// The class whose row prices this one when a profile has no row for it.
    var fallback: CostClass? {
        switch self {
        case .elementwise: nil
        case .reduction, .movement: .elementwise
        case .lineWise: .reduction
        case .runMovement: .movement
        case .window: .elementwise
        case .pointwise: .matmul
        case .matrixVector: .matmul
        case .matmul: .elementwise
        }
    }
}

extension DeviceProfile {
    /// The cube edges of the small, medium and large matrix-product probes.
    static let matmulProbeEdges = (small: 64, medium: 192, large: 512)

    /// A profile from a device's headline figures, every class priced by them: what backends give
    /// as defaults before a calibration (and tests build synthetic devices with).
    ///
    /// - Parameters:
    ///   - matmul: GFLOP/s of 64³, 192³ (when known) and 512³ products: the rate curve of matrix
    ///     products.
    ///   - matrixVector: GFLOP/s of products with a dimension under 16.
    ///   - stream: GB/s of elementwise work and data movement.
    ///   - reduction: GB/s of reductions and line-wise work.
    ///   - arithmetic: GFLOP/s of elementwise arithmetic (and of reductions' and lines' arithmetic).
    ///   - launch: seconds per launch of any kind.
    ///   - transfer: host ↔ device GB/s, `nil` for host memory.
    ///   - operation: the engine's seconds per recorded operation (about a microsecond on a 2-core
    ///     server: `dispatch-1000` runs a thousand tiny ops in 0.8-1.2 ms; none by default, as for
    ///     synthetic devices).
    ///   - evaluation: the engine's fixed seconds per evaluation (a few microseconds).
    static func headline(
        backend: BackendID, deviceName: String, threads: Int, matmul: (small: Double, medium: Double?, large: Double),
        matrixVector: Double, stream: Double, reduction: Double, arithmetic: Double, launch: Double, transfer: Double?,
        operation: Double = 0, evaluation: Double = 0
    ) -> DeviceProfile {
        let edges = matmulProbeEdges
        let rate = CostTerms(gflops: arithmetic, gbPerSecond: stream, launchSeconds: launch)
        let lines = CostTerms(gflops: arithmetic, gbPerSecond: reduction, launchSeconds: launch)
        let rows: [CostClass: CostTerms] = [
            .elementwise: rate, .movement: rate, .runMovement: rate, .window: rate, .reduction: lines, .lineWise: lines,
            .matmul: CostTerms(
                gflops: [.cube(edges.small, gflops: matmul.small)]
                    + (matmul.medium.map { [.cube(edges.medium, gflops: $0)] } ?? [])
                    + [.cube(edges.large, gflops: matmul.large)], gbPerSecond: stream, launchSeconds: launch),
            .matrixVector: CostTerms(gflops: matrixVector, gbPerSecond: stream, launchSeconds: launch),
        ]
        return DeviceProfile(
            backend: backend, deviceName: deviceName, threads: threads, calibrated: false, rows: rows,
            transfer: transfer.map { TransferTerms(gbPerSecond: $0, launchSeconds: launch) },
            secondsPerOperation: operation, secondsPerEvaluation: evaluation)
    }
}
