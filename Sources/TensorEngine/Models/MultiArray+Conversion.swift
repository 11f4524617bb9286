import Foundation

// Conversions between `MultiArray`, `ShapedArray` and `Tensor`, sharing memory wherever the
// layouts and element types allow.

extension MultiArray {
    /// An array over a shaped array's scalars, without a copy (the array copies them before its
    /// first write, so the shaped array keeps its values).
    public convenience init<S: TensorScalar & MultiArrayScalar>(_ shapedArray: ShapedArray<S>) {
        let (owner, start) = shapedArray.sharedMemory
        let storage = MultiArrayStorage(
            borrowing: UnsafeMutableRawPointer(start), byteCount: shapedArray.scalarCount * MemoryLayout<S>.stride,
            owner: owner)
        self.init(
            storage: storage, sizes: shapedArray.shape, strides: Shape.contiguousStrides(shapedArray.shape),
            dataType: S.multiArrayDataType)
    }

    /// An array over a tensor's result, evaluating the tensor first (on the calling thread) when
    /// it has not run. The array shares the result without a copy until its first write. A `Bool`
    /// tensor becomes an `int32` array of 0 and 1, and an `Int64` one an `int32` array (copies:
    /// Core ML's arrays have no 64-bit integers).
    ///
    /// - Throws: the ``TensorError`` the tensor carries or its evaluation throws;
    ///   ``TensorError/Kind/tooLarge`` for an `Int64` value outside `Int32`.
    public convenience init(_ tensor: Tensor) throws(TensorError) {
        try Tensor.evaluateNow([tensor])
        guard let value = tensor.node?.storedResult, let buffer = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: "MultiArray(_:)", message: "the evaluated tensor has no host result")
        }
        let shape = tensor.shape
        let count = tensor.scalarCount
        let start = buffer.pointer + value.layout.offset * tensor.dtype.byteCount
        guard tensor.dtype != .bool else {
            let storage = MultiArrayStorage(zeroedByteCount: count * 4)
            let flags = start.assumingMemoryBound(to: Bool.self)
            let target = storage.pointer.assumingMemoryBound(to: Int32.self)
            for index in 0..<count { target[index] = flags[index] ? 1 : 0 }
            self.init(storage: storage, sizes: shape, strides: Shape.contiguousStrides(shape), dataType: .int32)
            return
        }
        guard tensor.dtype != .int64 else {
            let storage = MultiArrayStorage(zeroedByteCount: count * 4)
            let values = start.assumingMemoryBound(to: Int64.self)
            let target = storage.pointer.assumingMemoryBound(to: Int32.self)
            for index in 0..<count {
                guard let narrowed = Int32(exactly: values[index]) else {
                    throw TensorError(
                        .tooLarge, op: "MultiArray(_:)",
                        message: "int64 element \(index) = \(values[index]) does not fit the int32 array Core ML's types allow")
                }
                target[index] = narrowed
            }
            self.init(storage: storage, sizes: shape, strides: Shape.contiguousStrides(shape), dataType: .int32)
            return
        }
        let storage = MultiArrayStorage(borrowing: start, byteCount: count * tensor.dtype.byteCount, owner: buffer)
        self.init(
            storage: storage, sizes: shape, strides: Shape.contiguousStrides(shape),
            dataType: MultiArrayDataType(tensor.dtype))
    }

    /// The sizes as integers.
    public var intShape: [Int] { sizes }
}

extension ShapedArray where Scalar: MultiArrayScalar {
    /// A shaped array of a multi-array's values: its memory is shared when the array is
    /// contiguous and of `Scalar`'s type (and copied before either side writes), else the values
    /// are gathered and converted.
    public init(_ multiArray: MultiArray) {
        if multiArray.isContiguous, multiArray.dataType == Scalar.multiArrayDataType {
            let storage = multiArray.sharedStorage()
            let buffer = HostBuffer(
                borrowing: storage.pointer, byteCount: multiArray.count * MemoryLayout<Scalar>.stride, owner: storage)
            self.init(sharing: buffer, offset: 0, shape: multiArray.sizes, count: multiArray.count)
            return
        }
        let values = (0..<multiArray.count).map { Scalar(multiArrayDouble: multiArray.value(at: $0)) }
        self.init(unchecked: values, shape: multiArray.sizes)
    }
}

extension Tensor {
    /// A tensor over a multi-array's memory, without a copy when the array is contiguous (a
    /// `double` array gives a `Double` tensor); a strided one is gathered (a copy). The array copies its memory before its next write,
    /// so the tensor keeps the values it was made with.
    public init(_ multiArray: MultiArray) {
        let type = multiArray.dataType.scalarType
        let shape = multiArray.sizes
        if multiArray.isContiguous {
            let storage = multiArray.sharedStorage()
            let buffer = HostBuffer(
                borrowing: storage.pointer, byteCount: multiArray.count * type.byteCount, owner: storage)
            self = Tensor.constant(
                value: Value(buffer: buffer, layout: Layout(contiguous: shape), scalarType: type), op: "init(_:)")
            return
        }
        switch type {
        case .float32:
            self = Tensor((0..<multiArray.count).map { Float(multiArray.value(at: $0)) }).reshaped(to: shape)
        case .float16:
            self = Tensor((0..<multiArray.count).map { Float16(multiArray.value(at: $0)) }).reshaped(to: shape)
        case .float64:
            self = Tensor((0..<multiArray.count).map { multiArray.value(at: $0) }).reshaped(to: shape)
        case .int32, .int64, .bool:
            self = Tensor((0..<multiArray.count).map { Int32(multiArrayDouble: multiArray.value(at: $0)) })
                .reshaped(to: shape)
        }
    }
}
