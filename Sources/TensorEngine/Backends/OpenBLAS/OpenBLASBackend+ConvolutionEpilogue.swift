/// What a convolution does to its results once their sums are complete: the bias added while the
/// product's scratch is copied out, and the bound of an activation fused into the convolution
/// (``OutputClamp``), applied by each piece to its own part of the output while it is in cache,
/// so the results are never read again by a separate pass.
extension OutputClamp {
    typealias Lanes = SIMD16<Float>

    /// `count` floats at `values` bounded in place.
    func apply(to values: UnsafeMutablePointer<Float>, count: Int) {
        let (low, high) = (Lanes(repeating: lower), Lanes(repeating: upper))
        let raw = UnsafeMutableRawPointer(values)
        var index = 0
        while index &+ Lanes.scalarCount <= count {
            let offset = index &* MemoryLayout<Float>.stride
            let bounded = Self.bound(raw.loadUnaligned(fromByteOffset: offset, as: Lanes.self), low, high)
            raw.storeBytes(of: bounded, toByteOffset: offset, as: Lanes.self)
            index &+= Lanes.scalarCount
        }
        while index < count {
            values[index] = apply(values[index])
            index &+= 1
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

extension OpenBLASBackend {
    /// `count` floats from `source` to `target`, each plus `shift` and bounded by `clamp`.
    static func copyOut(
        _ source: UnsafePointer<Float>, _ target: UnsafeMutablePointer<Float>, count: Int, shift: Float,
        _ clamp: OutputClamp?
    ) {
        guard let clamp else {
            for column in 0..<count { target[column] = source[column] + shift }
            return
        }
        typealias Lanes = OutputClamp.Lanes
        let (low, high, add) = (Lanes(repeating: clamp.lower), Lanes(repeating: clamp.upper), Lanes(repeating: shift))
        let (from, to) = (UnsafeRawPointer(source), UnsafeMutableRawPointer(target))
        var index = 0
        while index &+ Lanes.scalarCount <= count {
            let offset = index &* MemoryLayout<Float>.stride
            let sum = from.loadUnaligned(fromByteOffset: offset, as: Lanes.self) + add
            to.storeBytes(of: OutputClamp.bound(sum, low, high), toByteOffset: offset, as: Lanes.self)
            index &+= Lanes.scalarCount
        }
        while index < count {
            target[index] = clamp.apply(source[index] + shift)
            index &+= 1
        }
    }
}
