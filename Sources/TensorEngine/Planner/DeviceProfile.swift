import Foundation

/// What one backend's device achieves, the numbers the cost model turns work into time with.
public struct DeviceProfile: Sendable, Hashable, Codable {
    /// The backend the profile describes.
    public var backend: BackendKind
    /// The device's name.
    public var deviceName: String
    /// Achieved GFLOP/s for a 512×512×512 product (the large end of ``matmulGFLOPS(flops:m:n:)``).
    public var matmulLargeGFLOPS: Double
    /// Achieved GFLOP/s for a 64×64×64 product (the small end of ``matmulGFLOPS(flops:m:n:)``).
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
    /// Achieved GFLOP/s for a 192×192×192 product, between the small and large ones; `nil`: the
    /// rate is interpolated between those two alone.
    public var matmulMediumGFLOPS: Double? = nil

    /// The cube edges of the small, medium and large matrix-product probes.
    static let matmulProbeEdges = (small: 64, medium: 192, large: 512)

    /// The rate of a matrix product of `flops`: a rate that grows with the product's size,
    /// piecewise linear in log FLOPs through the calibrated probes and flat beyond them. A device
    /// reaches its peak only on work enough to fill it: PoCL's kernels run a 64³ product at 2-4
    /// GFLOP/s, a 128×384×384 one at ~45, and a 512³ one at ~80.
    func matmulGFLOPS(flops: Double) -> Double {
        func point(_ edge: Int, _ gflops: Double) -> (flops: Double, gflops: Double) { (2 * pow(Double(edge), 3), gflops) }
        func between(_ lower: (flops: Double, gflops: Double), _ upper: (flops: Double, gflops: Double)) -> Double {
            lower.gflops + log(flops / lower.flops) / log(upper.flops / lower.flops) * (upper.gflops - lower.gflops)
        }
        let small = point(Self.matmulProbeEdges.small, matmulSmallGFLOPS)
        let large = point(Self.matmulProbeEdges.large, matmulLargeGFLOPS)
        guard flops > small.flops else { return small.gflops }
        guard flops < large.flops else { return large.gflops }
        guard let matmulMediumGFLOPS else { return between(small, large) }
        let medium = point(Self.matmulProbeEdges.medium, matmulMediumGFLOPS)
        return flops < medium.flops ? between(small, medium) : between(medium, large)
    }

    /// Seconds a cost of this class takes on this device by a roofline estimate: compute and
    /// memory time overlapped, plus launch latency and, for line-wise ops and reductions, a cost
    /// per line. `operands`: distinct operands an elementwise kernel reads (see
    /// ``launchSecondsPerOperand``).
    func seconds(for cost: Cost, costClass: CostClass, operands: Int = 1) -> Double {
        guard cost.launches > 0 || cost.flops > 0 || cost.bytesMoved > 0 else { return 0 }
        let gflops: Double
        let bandwidth: Double
        let launch: Double
        var perLine = 0.0
        switch costClass {
        case .matmul:
            gflops = matmulGFLOPS(flops: cost.flops)
            bandwidth = streamGBPerSecond
            launch = launchSeconds
        case .matrixVector:
            gflops = matmulSkinnyGFLOPS
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
        case .movement, .runMovement:
            gflops = elementwiseGFLOPS
            bandwidth = (costClass == .runMovement ? runMovementGBPerSecond : nil) ?? movementGBPerSecond ?? streamGBPerSecond
            launch = movementLaunchSeconds ?? launchSeconds
        case .elementwise:
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
