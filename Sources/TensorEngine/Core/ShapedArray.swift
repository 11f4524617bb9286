/// A multidimensional array of scalars held in host memory, in row-major (C) order.
///
/// `ShapedArray` is the engine's counterpart of Core ML's `MLShapedArray`, with its forms:
/// `a[scalarAt: 1, 2]` is a scalar, `a[1]` a slice (an array of rank one less), `scalars` reads
/// and writes every scalar, and `withUnsafeShapedBufferPointer` reads them in place.
///
/// ```swift
/// var array = ShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])!
/// array[scalarAt: 1, 2]        // 6
/// array[1].scalars             // [4, 5, 6]
/// array[scalarAt: 0, 0] = 10   // copy-on-write: other copies keep their values
/// ```
///
/// The array a tensor's ``Tensor/shapedArray(of:file:line:)`` returns shares the tensor's result
/// instead of copying it, so reading a result costs the same at any size; the first write to it
/// (or to any array sharing memory with another holder) copies the scalars first.
public struct ShapedArray<Scalar: TensorScalar>: Sendable {
    /// The extent of each dimension.
    public private(set) var shape: [Int]
    /// The number of scalars, the product of the shape (1 for rank 0).
    public private(set) var scalarCount: Int
    private var storage: ShapedArrayStorage<Scalar>
    /// Where this array's first scalar is in ``storage`` (a slice starts past the beginning).
    private var offset: Int

    private init(storage: ShapedArrayStorage<Scalar>, offset: Int, shape: [Int], count: Int) {
        self.storage = storage
        self.offset = offset
        self.shape = shape
        self.scalarCount = count
    }

    /// Creates an array from scalars in row-major order.
    ///
    /// Returns `nil` when the number of scalars is not the product of `shape`, or a dimension is
    /// negative (Core ML traps instead; a port writes `!` or `guard let`).
    public init?(scalars: some Sequence<Scalar>, shape: [Int]) {
        let array = Array(scalars)
        guard let count = Shape.elementCount(shape), count == array.count else { return nil }
        let storage = array.withUnsafeBufferPointer { ShapedArrayStorage(copying: $0) }
        self.init(storage: storage, offset: 0, shape: shape, count: count)
    }

    /// Creates an array of the given shape filled with one value.
    ///
    /// A negative dimension, or a shape whose element count overflows, gives an empty array of
    /// shape `[0]`.
    public init(repeating value: Scalar, shape: [Int]) {
        guard let count = Shape.elementCount(shape) else {
            self.init(storage: ShapedArrayStorage(uninitializedCount: 0), offset: 0, shape: [0], count: 0)
            return
        }
        let storage = ShapedArrayStorage<Scalar>(uninitializedCount: count)
        storage.base.initialize(repeating: value, count: count)
        self.init(storage: storage, offset: 0, shape: shape, count: count)
    }

    /// Creates a rank-0 array holding one scalar.
    public init(scalar: Scalar) {
        self.init(repeating: scalar, shape: [])
    }

    /// Creates an array of the given shape whose scalars `initializer` writes, given the buffer
    /// (uninitialised; every element must be written) and the row-major strides.
    ///
    /// A negative dimension, or a shape whose element count overflows, gives an empty array of
    /// shape `[0]` and an empty buffer.
    public init(
        unsafeUninitializedShape shape: [Int],
        initializingWith initializer: (inout UnsafeMutableBufferPointer<Scalar>, [Int]) throws -> Void
    ) rethrows {
        let valid = Shape.elementCount(shape)
        let shape = valid == nil ? [0] : shape
        let count = valid ?? 0
        let storage = ShapedArrayStorage<Scalar>(uninitializedCount: count)
        storage.base.initialize(repeating: Scalar.zero, count: count)
        var buffer = UnsafeMutableBufferPointer(start: storage.base, count: count)
        try initializer(&buffer, Shape.contiguousStrides(shape))
        self.init(storage: storage, offset: 0, shape: shape, count: count)
    }

    /// Wraps `count` scalars of an engine result in `buffer`, from element `offset`, without a copy.
    init(sharing buffer: HostBuffer, offset: Int, shape: [Int], count: Int) {
        let storage = ShapedArrayStorage<Scalar>(sharing: buffer, offset: offset, count: count)
        self.init(storage: storage, offset: 0, shape: shape, count: count)
    }

    /// An array of `shape` over scalars the caller has counted.
    init(unchecked scalars: [Scalar], shape: [Int]) {
        let storage = scalars.withUnsafeBufferPointer { ShapedArrayStorage(copying: $0) }
        self.init(storage: storage, offset: 0, shape: shape, count: scalars.count)
    }

    /// The number of dimensions.
    public var rank: Int { shape.count }

    /// Whether the array has rank 0.
    public var isScalar: Bool { shape.isEmpty }

    /// The row-major strides, in elements: how far apart neighbours along each axis are.
    public var strides: [Int] { Shape.contiguousStrides(shape) }

    /// The scalars in row-major order. Reading makes an `Array` (a copy); writing replaces every
    /// scalar, and traps when the count is not ``scalarCount``, as Core ML's does.
    public var scalars: [Scalar] {
        get { withUnsafeShapedBufferPointer { buffer, _, _ in Array(buffer) } }
        set {
            precondition(newValue.count == scalarCount, "\(newValue.count) scalars for \(scalarCount) elements")
            withUnsafeMutableShapedBufferPointer { buffer, _, _ in
                newValue.withUnsafeBufferPointer { source in
                    if let from = source.baseAddress, let to = buffer.baseAddress {
                        to.update(from: from, count: source.count)
                    }
                }
            }
        }
    }

    /// The only scalar of a rank-0 or one-element array, else `nil`; setting writes it there
    /// (setting `nil`, or setting an array of more than one element, does nothing).
    public var scalar: Scalar? {
        get { scalarCount == 1 ? storage.base[offset] : nil }
        set {
            guard let newValue, scalarCount == 1 else { return }
            withUnsafeMutableShapedBufferPointer { buffer, _, _ in buffer[0] = newValue }
        }
    }

    /// Sets every scalar to `value`.
    public mutating func fill(with value: Scalar) {
        withUnsafeMutableShapedBufferPointer { buffer, _, _ in buffer.update(repeating: value) }
    }

    /// Calls `body` with the scalars in place (row-major), the shape and the strides.
    public func withUnsafeShapedBufferPointer<R>(
        _ body: (UnsafeBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        try withExtendedLifetime(storage) {
            try body(UnsafeBufferPointer(start: storage.base + offset, count: scalarCount), shape, strides)
        }
    }

    /// Calls `body` with the scalars in place for writing, the shape and the strides, after
    /// copying them if this array shares its memory with another holder.
    public mutating func withUnsafeMutableShapedBufferPointer<R>(
        _ body: (inout UnsafeMutableBufferPointer<Scalar>, [Int], [Int]) throws -> R
    ) rethrows -> R {
        makeUnique()
        var buffer = UnsafeMutableBufferPointer(start: storage.base + offset, count: scalarCount)
        return try withExtendedLifetime(storage) { try body(&buffer, shape, strides) }
    }

    /// Gives the array memory of its own, unshared, before a write.
    private mutating func makeUnique() {
        guard
            !(storage.isOwnMemory && isKnownUniquelyReferenced(&storage) && offset == 0
                && storage.count == scalarCount)
        else { return }
        storage = ShapedArrayStorage(copying: UnsafeBufferPointer(start: storage.base + offset, count: scalarCount))
        offset = 0
    }

    /// The memory of the scalars, for a tensor that wraps them without copying: the object to
    /// keep alive and where the scalars start.
    var sharedMemory: (owner: ShapedArrayStorage<Scalar>, start: UnsafeMutablePointer<Scalar>) {
        (storage, storage.base + offset)
    }
}

// Subscripts in Core ML's forms.
extension ShapedArray {
    /// The scalar at a full multi-index. Traps on an index out of range, as `Array` does.
    public subscript(scalarAt indices: Int...) -> Scalar {
        get { self[scalarAt: indices] }
        set { self[scalarAt: indices] = newValue }
    }

    /// The scalar at a full multi-index given as an array.
    public subscript(scalarAt indices: [Int]) -> Scalar {
        get { storage.base[offset + linearIndex(indices, leading: false)] }
        set {
            let index = linearIndex(indices, leading: false)
            withUnsafeMutableShapedBufferPointer { buffer, _, _ in buffer[index] = newValue }
        }
    }

    /// The slice at leading indices: `a[1]` of a `[2, 3]` array is its second row, shape `[3]`;
    /// as many indices as the rank give a rank-0 array. The slice shares the scalars (no copy).
    public subscript(_ leadingIndices: Int...) -> ShapedArray<Scalar> {
        let start = linearIndex(leadingIndices, leading: true)
        let rest = Array(shape.dropFirst(leadingIndices.count))
        let count = rest.reduce(1, *)
        return ShapedArray(storage: storage, offset: offset + start * count, shape: rest, count: count)
    }

    /// The rows `range` of the first axis, sharing the scalars (no copy).
    public subscript(_ range: Range<Int>) -> ShapedArray<Scalar> {
        precondition(rank > 0, "a rank-0 array has no axis to slice")
        precondition(
            range.lowerBound >= 0 && range.upperBound <= shape[0], "rows \(range) out of range 0..<\(shape[0])")
        let rowCount = shape.dropFirst().reduce(1, *)
        var sliced = shape
        sliced[0] = range.count
        return ShapedArray(
            storage: storage, offset: offset + range.lowerBound * rowCount, shape: sliced,
            count: range.count * rowCount)
    }

    /// The row-major position of `indices` (all of them, or the leading ones when `leading`),
    /// in units of the remaining axes' block.
    private func linearIndex(_ indices: [Int], leading: Bool) -> Int {
        precondition(
            leading ? indices.count <= rank : indices.count == rank,
            "\(indices.count) indices for an array of rank \(rank)")
        var position = 0
        for (axis, index) in indices.enumerated() {
            precondition((0..<shape[axis]).contains(index), "index \(index) out of range for axis \(axis)")
            position = position * shape[axis] + index
        }
        return position
    }
}

extension ShapedArray: Equatable {
    /// Equal shapes and equal scalars (compared with `==`, so NaN differs from NaN).
    public static func == (lhs: ShapedArray, rhs: ShapedArray) -> Bool {
        guard lhs.shape == rhs.shape else { return false }
        return lhs.withUnsafeShapedBufferPointer { a, _, _ in
            rhs.withUnsafeShapedBufferPointer { b, _, _ in a.elementsEqual(b) }
        }
    }
}

extension ShapedArray: CustomStringConvertible {
    /// A nested-bracket rendering like NumPy's, e.g. `[[1.0, 2.0], [3.0, 4.0]]`.
    public var description: String {
        withUnsafeShapedBufferPointer { scalars, shape, _ in
            func render(_ axis: Int, _ start: Int, _ block: Int) -> String {
                if axis == shape.count { return "\(scalars[start])" }
                let inner = block / Swift.max(shape[axis], 1)
                let items = (0..<shape[axis]).map { render(axis + 1, start + $0 * inner, inner) }
                return "[" + items.joined(separator: ", ") + "]"
            }
            return render(0, 0, scalars.count)
        }
    }
}
