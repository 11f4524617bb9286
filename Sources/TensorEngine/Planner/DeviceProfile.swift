/// What one backend's device achieves, the numbers the cost model turns work into time with.
public struct DeviceProfile: Sendable, Hashable, Codable {
    /// The backend the profile describes.
    public var backend: BackendKind
    /// The device's name.
    public var deviceName: String
    /// Achieved GFLOP/s for matrix products whose smallest dimension is at least 256.
    public var matmulLargeGFLOPS: Double
    /// Achieved GFLOP/s for small matrix products (all dimensions below 256).
    public var matmulSmallGFLOPS: Double
    /// Achieved GFLOP/s for skinny products (one of m, n under 16: matrix·vector).
    public var matmulSkinnyGFLOPS: Double
    /// Achieved GB/s for streaming work (elementwise ops, copies).
    public var streamGBPerSecond: Double
    /// Achieved GB/s for reductions and line-wise ops (softmax, layer norm).
    public var reduceGBPerSecond: Double
    /// Achieved GFLOP/s of arithmetic in elementwise and line-wise ops.
    public var elementwiseGFLOPS: Double
    /// Fixed cost of one op or kernel launch, in seconds.
    public var launchSeconds: Double
    /// Host ↔ device bandwidth in GB/s; `nil` when the device works on host memory directly.
    public var transferGBPerSecond: Double?
    /// Threads the backend runs on.
    public var threads: Int
    /// Whether the numbers come from a calibration run on this machine (else documented defaults).
    public var calibrated: Bool
    /// Achieved GB/s for line-wise ops (softmax, log-softmax, layer norm); `nil`: as reductions.
    public var lineWiseGBPerSecond: Double? = nil
    /// Achieved GB/s for data movement (copies of strided views, transposes, gathers,
    /// concatenation); `nil`: as streams.
    public var movementGBPerSecond: Double? = nil
    /// Achieved GB/s for data movement in runs of at least a cache line on both sides (a permute
    /// that keeps the last axis, a gather of rows); `nil`: as ``movementGBPerSecond``.
    public var runMovementGBPerSecond: Double? = nil
    /// Seconds an elementwise launch costs per operand beyond the first (a device binds each
    /// buffer it reads; a fused region of many operands pays it many times); `nil`: nothing.
    public var launchSecondsPerOperand: Double? = nil
    /// Fixed cost of one reduction, in seconds (a two-stage device reduction is two launches and
    /// more); `nil`: ``launchSeconds``.
    public var reductionLaunchSeconds: Double? = nil
    /// Fixed cost of one line-wise op, in seconds; `nil`: ``launchSeconds``.
    public var lineWiseLaunchSeconds: Double? = nil
    /// Fixed cost of one data-movement op, in seconds; `nil`: ``launchSeconds``.
    public var movementLaunchSeconds: Double? = nil
    /// Seconds per line of a line-wise op (``Cost/lines``: a softmax row costs this much beyond
    /// its bytes); `nil`: nothing.
    public var lineWiseSecondsPerLine: Double? = nil
    /// Seconds per output of a reduction beyond its bytes; `nil`: nothing.
    public var reductionSecondsPerLine: Double? = nil

    /// Seconds the op takes on this device by a roofline estimate: compute and memory time
    /// overlapped, plus launch latency and, for line-wise ops and reductions, a cost per line.
    /// `movesRuns`: a data-movement op whose reads and writes come in runs of at least a cache
    /// line (see `Planner.movesRuns(_:op:)`).
    /// `operands`: distinct operands an elementwise kernel reads (see ``launchSecondsPerOperand``).
    func seconds(for cost: Cost, category: OpKind.Category, matmulShape: (m: Int, n: Int, k: Int)? = nil, movesRuns: Bool = false,
                 operands: Int = 1) -> Double {
        guard cost.launches > 0 || cost.flops > 0 || cost.bytesMoved > 0 else { return 0 }
        let gflops: Double
        let bandwidth: Double
        let launch: Double
        var perLine = 0.0
        switch category {
        case .matmul:
            let shape = matmulShape ?? (m: 256, n: 256, k: 256)
            gflops = Swift.min(shape.m, shape.n) < 16 ? matmulSkinnyGFLOPS
                : (Swift.min(shape.m, shape.n, shape.k) >= 256 ? matmulLargeGFLOPS : matmulSmallGFLOPS)
            bandwidth = streamGBPerSecond
            launch = launchSeconds
        case .reduction:
            gflops = elementwiseGFLOPS
            bandwidth = reduceGBPerSecond
            launch = reductionLaunchSeconds ?? launchSeconds
            perLine = reductionSecondsPerLine ?? 0
        case .lineWise:
            gflops = elementwiseGFLOPS
            bandwidth = lineWiseGBPerSecond ?? reduceGBPerSecond
            launch = lineWiseLaunchSeconds ?? launchSeconds
            perLine = lineWiseSecondsPerLine ?? 0
        case .dataMovement:
            gflops = elementwiseGFLOPS
            bandwidth = (movesRuns ? runMovementGBPerSecond : nil) ?? movementGBPerSecond ?? streamGBPerSecond
            launch = movementLaunchSeconds ?? launchSeconds
        case .elementwise, .source, .view:
            gflops = elementwiseGFLOPS
            bandwidth = streamGBPerSecond
            launch = launchSeconds + Double(Swift.max(0, operands - 1)) * (launchSecondsPerOperand ?? 0)
        }
        let compute = cost.flops / (gflops * 1e9)
        let memory = cost.bytesMoved / (bandwidth * 1e9)
        return Swift.max(compute, memory) + cost.lines * perLine + cost.launches * launch
    }

    /// Seconds to move bytes between the host and this device (zero for host memory).
    func transferSeconds(bytes: Double) -> Double {
        guard let transferGBPerSecond, bytes > 0 else { return 0 }
        return bytes / (transferGBPerSecond * 1e9) + launchSeconds
    }
}
