/// What a convolution does to its results once their sums are complete: the bias added while the
/// product's scratch is copied out, and the bound of an activation fused into the convolution
/// (``OutputClamp``), applied by each piece to its own part of the output while it is in cache,
/// so the results are never read again by a separate pass.
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
