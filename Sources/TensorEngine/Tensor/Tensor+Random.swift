/// A counter-based generator: the n-th number of a stream depends only on the seed and n, so the
/// same seed gives the same tensor on every backend, thread and run.
package struct CounterRandom {
    let seed: UInt64

    package init(seed: UInt64) { self.seed = seed }

    /// SplitMix64's finaliser applied to `seed + n·γ`: a strong 64-bit mix of the counter.
    func bits(_ n: UInt64) -> UInt64 {
        var z = seed &+ (n &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1) from the top 53 bits.
    package func unit(_ n: UInt64) -> Double { Double(bits(n) >> 11) * 0x1p-53 }

    /// A standard normal variate by the Box–Muller transform of counters 2n and 2n+1.
    package func normal(_ n: UInt64) -> Double {
        let u1 = 1 - unit(2 &* n)  // (0, 1]: the logarithm stays finite
        let u2 = unit(2 &* n &+ 1)
        return (-2 * _log(u1)).squareRoot() * _cos(2 * Double.pi * u2)
    }
}

#if canImport(Glibc)
    import Glibc
#endif
private func _log(_ x: Double) -> Double { log(x) }
private func _cos(_ x: Double) -> Double { cos(x) }

extension Tensor {
    static func seedOrRandom(_ seed: UInt64?) -> UInt64 {
        if let seed { return seed }
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// A tensor of normally distributed values, generated on the host from a counter-based
    /// generator: the same `seed` gives the same values on every backend and run.
    public init<S: TensorScalar>(
        randomNormal shape: [Int], mean: Float = 0, standardDeviation: Float = 1, seed: UInt64? = nil,
        scalarType: S.Type = Float.self, file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        guard S.scalarType.isFloatingPoint else {
            self = Tensor(
                failed: TensorError(
                    .scalarTypeMismatch, op: "init(randomNormal:)",
                    message: "normal values need a floating-point type, not \(S.scalarType)", location: location))
            return
        }
        // Sized in bytes before any value is generated (a shape that fits in memory as a count
        // of elements may not as floats).
        if let failed = Tensor.sizeFailure(shape, S.scalarType, op: "init(randomNormal:)", at: location) {
            self = failed
            return
        }
        let count = shape.reduce(1, *)
        let generator = CounterRandom(seed: Tensor.seedOrRandom(seed))
        self = Tensor.generated(shape, count: count, S.scalarType, op: "init(randomNormal:)", at: location) {
            Double(mean) + Double(standardDeviation) * generator.normal(UInt64($0))
        }
    }

    /// A tensor of values uniformly distributed in `range`, generated on the host from a
    /// counter-based generator. For `Int32`, values are whole numbers in the range's bounds.
    public init<S: TensorScalar>(
        randomUniform shape: [Int], in range: Range<Float> = 0..<1, seed: UInt64? = nil,
        scalarType: S.Type = Float.self, file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        // Sized in bytes before any value is generated (a shape that fits in memory as a count
        // of elements may not as floats).
        if let failed = Tensor.sizeFailure(shape, S.scalarType, op: "init(randomUniform:)", at: location) {
            self = failed
            return
        }
        let count = shape.reduce(1, *)
        let generator = CounterRandom(seed: Tensor.seedOrRandom(seed))
        let low = Double(range.lowerBound)
        let width = Double(range.upperBound) - low
        let whole = S.scalarType == .int32
        self = Tensor.generated(shape, count: count, S.scalarType, op: "init(randomUniform:)", at: location) { n in
            let u = low + width * generator.unit(UInt64(n))
            return whole ? u.rounded(.down) : u
        }
    }

    /// A tensor of whole numbers uniformly distributed in a closed range, generated on the host
    /// from a counter-based generator (the same `seed` gives the same values everywhere).
    ///
    /// ```swift
    /// let dice = Tensor(randomUniform: [10], in: Int32(1)...6, seed: 7)
    /// ```
    public init<S: TensorScalar & FixedWidthInteger>(
        randomUniform shape: [Int], in range: ClosedRange<S>, seed: UInt64? = nil, scalarType: S.Type = S.self,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        if let failed = Tensor.sizeFailure(shape, S.scalarType, op: "init(randomUniform:)", at: location) {
            self = failed
            return
        }
        let count = shape.reduce(1, *)
        let generator = CounterRandom(seed: Tensor.seedOrRandom(seed))
        // Counted in Double: the widest range of a 32-bit type has 2³² values, exactly representable.
        let low = Double(range.lowerBound)
        let width = Double(range.upperBound) - low + 1
        self = Tensor.generated(shape, count: count, S.scalarType, op: "init(randomUniform:)", at: location) { n in
            Swift.min(low + (width * generator.unit(UInt64(n))).rounded(.down), Double(range.upperBound))
        }
    }

    /// A constant of `count` values `value(0), value(1), ...` converted to `type`, written straight
    /// into the tensor's buffer (no array between: a large random tensor costs its size once).
    /// Not generic, so that the loop is specialised here for each type even when the caller's
    /// initializer is not. Large tensors are written by the host's workers in contiguous ranges
    /// (``generatedElementsPerWorker`` each at least): each value depends only on its index, so
    /// the split changes no value. A normal value costs a logarithm and a cosine, about 28 ns:
    /// 0.47 s for [4096, 4096] on one core.
    static func generated(
        _ shape: [Int], count: Int, _ type: ScalarType, op: String, at location: SourceLocation?,
        _ value: (Int) -> Double
    ) -> Tensor {
        let buffer: HostBuffer
        do throws(TensorError) { buffer = try HostBuffer(byteCount: count * type.byteCount, op: op) } catch {
            return Tensor(failed: error.locatedIfUnknown(location))
        }
        let parts = Swift.max(1, Swift.min(Parallel.workers, count / generatedElementsPerWorker))
        func fill<S: TensorScalar>(_: S.Type) {
            let target = buffer.elements(as: S.self)
            Parallel.forEachRange(count, parts: parts) { range in
                for n in range { (target + n).initialize(to: S(converting: value(n))) }
            }
        }
        switch type {
        case .float32: fill(Float.self)
        case .float16: fill(Float16.self)
        case .int32: fill(Int32.self)
        case .bool: fill(Bool.self)
        case .int64: fill(Int64.self)
        case .float64: fill(Double.self)
        }
        let value = Value(buffer: buffer, layout: Layout(contiguous: shape), scalarType: type)
        return Tensor.constant(value: value, op: op)
    }

    /// Generated values per worker below which one thread writes them all: 2¹⁶, about 2 ms of
    /// normal values, far beyond a hand-off to the workers.
    static let generatedElementsPerWorker = 1 << 16
}
