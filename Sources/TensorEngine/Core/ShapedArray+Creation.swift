import Foundation

// The rest of Core ML's `MLShapedArray` initializers and shape functions. Where Core ML traps on
// arguments that do not fit (a byte count, a shape, an axis), these return `nil` instead.

extension ShapedArray {
    /// An array of `shape` over a copy of row-major bytes; `nil` when `data.count` is not the
    /// shape's byte size or a size is negative.
    public init?(data: Data, shape: [Int]) {
        self.init(data: data, shape: shape, strides: Shape.contiguousStrides(shape))
    }

    /// An array of `shape` gathered from bytes laid out with `strides` (in elements); `nil` when
    /// the bytes are too few for the strides, a stride is negative or a size is negative.
    public init?(data: Data, shape: [Int], strides: [Int]) {
        guard let count = Shape.elementCount(shape), strides.count == shape.count, strides.allSatisfy({ $0 >= 0 }),
            let span = ShapedArray.span(shape, strides),
            !span.multipliedReportingOverflow(by: MemoryLayout<Scalar>.stride).overflow,
            data.count >= span * MemoryLayout<Scalar>.stride
        else { return nil }
        let gathered: [Scalar] = data.withUnsafeBytes { raw in
            ShapedArray.gather(raw, shape: shape, strides: strides, count: count)
        }
        self.init(unchecked: gathered, shape: shape)
    }

    /// An array over memory the caller owns, without a copy when `strides` are row-major
    /// (gathered into an array of its own otherwise, running `deallocator` at once).
    /// `deallocator` runs when no array shares the memory. Invalid strides or shapes give an
    /// empty array of shape `[0]` and leave the memory the caller's.
    public init(
        bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], strides: [Int], deallocator: Data.Deallocator
    ) {
        guard let count = Shape.elementCount(shape), strides.count == shape.count, strides.allSatisfy({ $0 >= 0 }),
            let span = ShapedArray.span(shape, strides),
            !span.multipliedReportingOverflow(by: MemoryLayout<Scalar>.stride).overflow
        else {
            self.init(repeating: Scalar.zero, shape: [0])
            return
        }
        let byteCount = span * MemoryLayout<Scalar>.stride
        let data = Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), count: byteCount, deallocator: deallocator)
        guard count == 0 || strides == Shape.contiguousStrides(shape),
            Int(bitPattern: bytes) % MemoryLayout<Scalar>.alignment == 0
        else {
            let gathered: [Scalar] = data.withUnsafeBytes {
                ShapedArray.gather($0, shape: shape, strides: strides, count: count)
            }
            self.init(unchecked: gathered, shape: shape)
            return
        }
        let buffer = HostBuffer(
            borrowing: UnsafeMutableRawPointer(mutating: bytes), byteCount: byteCount, owner: LentBytes(data))
        self.init(sharing: buffer, offset: 0, shape: shape, count: count)
    }

    /// The arrays joined along `axis`; `nil` when they are none, differ in rank or in another
    /// axis's size, or `axis` is out of range (negative counts from the end).
    public init?(concatenating arrays: [ShapedArray<Scalar>], alongAxis axis: Int) {
        guard let first = arrays.first else { return nil }
        let rank = first.rank
        let normalized = axis < 0 ? axis + rank : axis
        guard normalized >= 0, normalized < rank,
            arrays.allSatisfy({ array in
                array.rank == rank
                    && array.shape.indices.allSatisfy { $0 == normalized || array.shape[$0] == first.shape[$0] }
            })
        else { return nil }
        var shape = first.shape
        shape[normalized] = arrays.reduce(0) { $0 + $1.shape[normalized] }
        let outer = first.shape[..<normalized].reduce(1, *)
        var scalars: [Scalar] = []
        scalars.reserveCapacity(Shape.elementCount(shape) ?? 0)
        let parts = arrays.map(\.scalars)
        for block in 0..<outer {
            for (array, values) in zip(arrays, parts) {
                let width = array.shape[normalized...].reduce(1, *)
                scalars += values[block * width..<(block + 1) * width]
            }
        }
        self.init(unchecked: scalars, shape: shape)
    }

    /// The same scalars in another shape of as many elements; `nil` otherwise.
    public func reshaped(to newShape: [Int]) -> ShapedArray<Scalar>? {
        guard Shape.elementCount(newShape) == scalarCount else { return nil }
        return ShapedArray(unchecked: scalars, shape: newShape)
    }

    /// The axes in reverse order (a matrix transposed).
    public func transposed() -> ShapedArray<Scalar> {
        transposed(permutation: Array(shape.indices.reversed())) ?? self
    }

    /// The axes reordered: axis `i` of the result is axis `permutation[i]` of this array; `nil`
    /// when `permutation` is not a permutation of the axes.
    public func transposed(permutation: [Int]) -> ShapedArray<Scalar>? {
        guard permutation.sorted() == Array(shape.indices) else { return nil }
        let newShape = permutation.map { shape[$0] }
        let oldStrides = strides
        let permutedStrides = permutation.map { oldStrides[$0] }
        let values = scalars
        let result = values.withUnsafeBytes { raw in
            ShapedArray.gather(raw, shape: newShape, strides: permutedStrides, count: scalarCount)
        }
        return ShapedArray(unchecked: result, shape: newShape)
    }

    /// A size-1 axis inserted at `axis` (`0...rank`; negative counts from the end); `nil` out of range.
    public func expandingShape(at axis: Int) -> ShapedArray<Scalar>? {
        let normalized = axis < 0 ? axis + rank + 1 : axis
        guard normalized >= 0, normalized <= rank else { return nil }
        var newShape = shape
        newShape.insert(1, at: normalized)
        return reshaped(to: newShape)
    }

    /// The array without its size-1 axes.
    public func squeezingShape() -> ShapedArray<Scalar> {
        reshaped(to: shape.filter { $0 != 1 }) ?? self
    }

    /// The elements `strides` reach from the first, plus one; `nil` on overflow.
    static func span(_ shape: [Int], _ strides: [Int]) -> Int? {
        guard !shape.contains(0) else { return 0 }
        var span = 1
        for (size, stride) in zip(shape, strides) {
            let (reach, overflow) = (size - 1).multipliedReportingOverflow(by: stride)
            guard !overflow, !span.addingReportingOverflow(reach).overflow else { return nil }
            span += reach
        }
        return span
    }

    /// Row-major scalars gathered from `raw` at `strides`.
    static func gather(_ raw: UnsafeRawBufferPointer, shape: [Int], strides: [Int], count: Int) -> [Scalar] {
        var result: [Scalar] = []
        result.reserveCapacity(count)
        var index = [Int](repeating: 0, count: shape.count)
        for _ in 0..<count {
            var offset = 0
            for axis in shape.indices { offset += index[axis] * strides[axis] }
            result.append(raw.loadUnaligned(fromByteOffset: offset * MemoryLayout<Scalar>.stride, as: Scalar.self))
            var axis = shape.count - 1
            while axis >= 0 {
                index[axis] += 1
                if index[axis] < shape[axis] { break }
                index[axis] = 0
                axis -= 1
            }
        }
        return result
    }
}

extension ShapedArray where Scalar: Numeric {
    /// The `size`×`size` identity matrix (an empty `[0, 0]` for a negative size).
    public init(identityMatrixOfSize size: Int) {
        let size = Swift.max(size, 0)
        self.init(unsafeUninitializedShape: [size, size]) { buffer, _ in
            for index in 0..<size { buffer[index * size + index] = 1 }
        }
    }
}

extension ShapedArray where Scalar: BinaryFloatingPoint, Scalar.RawSignificand: FixedWidthInteger {
    /// Scalars drawn uniformly from `range`.
    public init(randomScalarsIn range: ClosedRange<Scalar>, shape: [Int]) {
        var generator = SystemRandomNumberGenerator()
        self.init(randomScalarsIn: range, shape: shape, using: &generator)
    }

    /// Scalars drawn uniformly from `range` with `generator` (a seeded one repeats its draws).
    public init(
        randomScalarsIn range: ClosedRange<Scalar>, shape: [Int], using generator: inout some RandomNumberGenerator
    ) {
        self.init(drawing: shape) { Scalar.random(in: range, using: &generator) }
    }
}

extension ShapedArray where Scalar: FixedWidthInteger {
    /// Scalars drawn uniformly from `range`.
    public init(randomScalarsIn range: ClosedRange<Scalar>, shape: [Int]) {
        var generator = SystemRandomNumberGenerator()
        self.init(randomScalarsIn: range, shape: shape, using: &generator)
    }

    /// Scalars drawn uniformly from `range` with `generator`.
    public init(
        randomScalarsIn range: ClosedRange<Scalar>, shape: [Int], using generator: inout some RandomNumberGenerator
    ) {
        self.init(drawing: shape) { Scalar.random(in: range, using: &generator) }
    }
}

extension ShapedArray {
    /// An array of `shape` whose scalars `draw` gives in row-major order (an empty `[0]` for a
    /// shape that cannot exist).
    fileprivate init(drawing shape: [Int], _ draw: () -> Scalar) {
        let count = Shape.elementCount(shape)
        self.init(unchecked: (0..<(count ?? 0)).map { _ in draw() }, shape: count == nil ? [0] : shape)
    }
}

extension ShapedArray: Hashable where Scalar: Hashable {
    /// Hashes the shape and the scalars.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(shape)
        withUnsafeShapedBufferPointer { buffer, _, _ in for scalar in buffer { hasher.combine(scalar) } }
    }
}

extension ShapedArray: Codable where Scalar: Codable {
    private enum CodingKeys: String, CodingKey {
        case shape
        case scalars
    }

    /// Decodes `{"shape": [...], "scalars": [...]}`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the scalars do not fill the shape.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let shape = try container.decode([Int].self, forKey: .shape)
        let scalars = try container.decode([Scalar].self, forKey: .scalars)
        guard let array = ShapedArray(scalars: scalars, shape: shape) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\(scalars.count) scalars for shape \(shape)"))
        }
        self = array
    }

    /// Encodes `{"shape": [...], "scalars": [...]}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(shape, forKey: .shape)
        try container.encode(scalars, forKey: .scalars)
    }
}

/// Memory a caller lent a shaped array, held as the `Data` that runs its deallocator.
private final class LentBytes: @unchecked Sendable {
    // Never read: holding it keeps the memory alive, and releasing it runs the deallocator.
    private let data: Data

    init(_ data: Data) { self.data = data }
}
