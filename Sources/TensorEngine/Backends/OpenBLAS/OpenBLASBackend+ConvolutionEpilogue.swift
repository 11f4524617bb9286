/// What a convolution does to its results once their sums are complete: the bias and a fused
/// residual added, and the bound of an activation fused into the convolution (``OutputClamp``).
/// The engine's product kernel applies them as it stores each tile (its epilogue); OpenBLAS's
/// `sgemm` accumulates onto the bias and residual written first, and each piece bounds its own
/// part of the output after, while it is in cache.
extension OutputClamp {
    typealias Lanes = SIMD16<Float>

    /// `count` floats at `values` bounded in place. A run of a vector or more ends with a whole
    /// vector that overlaps the one before it (bounding twice changes nothing).
    func apply(to values: UnsafeMutablePointer<Float>, count: Int) {
        guard count >= Lanes.scalarCount else {
            for index in 0..<count { values[index] = apply(values[index]) }
            return
        }
        let (low, high) = (Lanes(repeating: lower), Lanes(repeating: upper))
        let raw = UnsafeMutableRawPointer(values)
        var index = 0
        while true {
            let offset = Swift.min(index, count &- Lanes.scalarCount) &* MemoryLayout<Float>.stride
            let bounded = Self.bound(raw.loadUnaligned(fromByteOffset: offset, as: Lanes.self), low, high)
            raw.storeBytes(of: bounded, toByteOffset: offset, as: Lanes.self)
            index &+= Lanes.scalarCount
            if index >= count { return }
        }
    }

    /// `rows` runs of `count` floats, `rowStride` floats apart, bounded in place.
    func apply(to values: UnsafeMutablePointer<Float>, rows: Int, count: Int, rowStride: Int) {
        for row in 0..<rows { apply(to: values + row * rowStride, count: count) }
    }

    /// `min(max(v, low), high)` lane by lane, a NaN kept (as ``apply(_:)-(Float)``).
    @inline(__always)
    static func bound(_ v: Lanes, _ low: Lanes, _ high: Lanes) -> Lanes {
        let raised = v.replacing(with: low, where: v .<= low)
        return raised.replacing(with: high, where: raised .>= high)
    }
}

/// What a convolution adds to its sums and how it bounds them: a bias (one value per output
/// channel), a residual of the output's shape (contiguous), and a fused activation's bound.
struct ConvolutionSums {
    let bias: UnsafePointer<Float>?
    let residual: UnsafePointer<Float>?
    let clamp: OutputClamp?
}

extension OpenBLASBackend {
    /// `count` floats at `target` set to `shift` (a channel's bias, or 0) plus, with a residual,
    /// the residual's floats at the same place: where a product then accumulates.
    @inline(__always)
    static func startSums(
        _ target: UnsafeMutablePointer<Float>, count: Int, shift: Float, residual: UnsafePointer<Float>?
    ) {
        guard let residual else {
            target.update(repeating: shift, count: count)
            return
        }
        for index in 0..<count { target[index] = residual[index] + shift }
    }

    /// `count` results plus the residual's, then bounded by `clamp`, by all cores: for the kernels
    /// whose sums start from the bias alone (the striped depthwise one).
    static func addResidual(
        _ residual: UnsafePointer<Float>, to values: UnsafeMutablePointer<Float>, count: Int, clamp: OutputClamp?
    ) {
        let chunk = 1 << 14
        let chunks = (count + chunk - 1) / chunk
        Parallel.forEachRange(chunks, parts: Parallel.workerCount(forElements: count)) { range in
            for index in range {
                let (first, end) = (index * chunk, Swift.min(count, (index + 1) * chunk))
                for element in first..<end { values[element] += residual[element] }
                clamp?.apply(to: values + first, count: end - first)
            }
        }
    }
}

/// Runs `body` with a product kernel's epilogue bounds: `[lower, upper]` of the clamp, or NULL
/// without one.
@inline(__always)
func withBounds<Result>(_ clamp: OutputClamp?, _ body: (UnsafePointer<Float>?) -> Result) -> Result {
    guard let clamp else { return body(nil) }
    let bounds = (clamp.lower, clamp.upper)
    return withUnsafeBytes(of: bounds) { body($0.baseAddress?.assumingMemoryBound(to: Float.self)) }
}
