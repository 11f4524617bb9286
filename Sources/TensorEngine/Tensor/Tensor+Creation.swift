extension Tensor {
    /// A constant tensor holding `scalars` (row-major) in the given shape, or a tensor carrying
    /// the error when the count does not match the shape.
    static func constant<S: TensorScalar>(
        _ scalars: some Collection<S>, shape: [Int], op: String, at location: SourceLocation?
    ) -> Tensor {
        do throws(RuleViolation) {
            try checkSize(shape, S.scalarType)
            let count = shape.reduce(1, *)
            guard scalars.count == count else {
                throw RuleViolation(
                    .shapeMismatch, "\(scalars.count) scalars cannot fill shape \(describe(shape)) (\(count) elements)")
            }
            let buffer: HostBuffer
            do { buffer = try HostBuffer(byteCount: count * S.scalarType.byteCount, op: op) } catch {
                throw RuleViolation(.outOfMemory, error.message)
            }
            let typed = buffer.elements(as: S.self)
            // Arrays and buffers in one copy: called from another module this function is not
            // specialised, and the element loop would cost a generic call per scalar.
            let copied: Void? = scalars.withContiguousStorageIfAvailable { source in
                if let base = source.baseAddress { typed.initialize(from: base, count: source.count) }
            }
            if copied == nil {
                var index = 0
                for scalar in scalars {
                    (typed + index).initialize(to: scalar)
                    index += 1
                }
            }
            let value = Value(buffer: buffer, layout: Layout(contiguous: shape), scalarType: S.scalarType)
            let signature = TensorSignature(shape: shape, scalarType: S.scalarType)
            return Tensor(node: Node(op: .constant, inputs: [], signature: signature, location: location, data: value))
        } catch {
            return Tensor(
                failed: TensorError(error.kind, op: op, operandShapes: [], message: error.message, location: location))
        }
    }

    /// A tensor carrying the error when a tensor of `shape` and `type` cannot exist (a negative
    /// dimension, or more bytes than the machine has), checked before its elements are made.
    static func sizeFailure(
        _ shape: [Int], _ type: ScalarType, op: String, at location: SourceLocation?
    ) -> Tensor? {
        do throws(RuleViolation) {
            try checkSize(shape, type)
            return nil
        } catch {
            return Tensor(
                failed: TensorError(error.kind, op: op, operandShapes: [], message: error.message, location: location))
        }
    }

    /// A one-element constant of the given type, of rank 0 or of `shape` (all ones).
    ///
    /// The constants are shared: a loop of `x * 1.5` steps records one constant, not one per
    /// step (each would be a node and a buffer, the larger part of a tiny op's cost). Constants
    /// are immutable, so sharing them across graphs and threads is safe; the cache keeps the
    /// last of the scalars that fall on each of its slots.
    static func scalar(_ value: Double, _ type: ScalarType, shape: [Int] = []) -> Tensor {
        let key = ScalarConstantKey(bits: value.bitPattern, type: type, rank: shape.count)
        if let shared = scalarConstants.withLock({ $0.node(for: key) }) { return Tensor(node: shared) }
        let made = makeScalar(value, type, shape: shape)
        if let node = made.node { scalarConstants.withLock { $0.keep(node, for: key) } }
        return made
    }

    private static let scalarConstants = Guarded(ScalarConstantCache())

    private static func makeScalar(_ value: Double, _ type: ScalarType, shape: [Int]) -> Tensor {
        switch type {
        case .float32: constant([Float(converting: value)], shape: shape, op: "scalar", at: nil)
        case .float16: constant([Float16(converting: value)], shape: shape, op: "scalar", at: nil)
        case .int32: constant([Int32(converting: value)], shape: shape, op: "scalar", at: nil)
        case .bool: constant([Bool(converting: value)], shape: shape, op: "scalar", at: nil)
        case .int64: constant([Int64(converting: value)], shape: shape, op: "scalar", at: nil)
        case .float64: constant([value], shape: shape, op: "scalar", at: nil)
        }
    }

    /// Creates a rank-1 tensor from a collection of scalars.
    ///
    /// ```swift
    /// let x = Tensor([1, 2, 3] as [Float])
    /// ```
    @_disfavoredOverload
    public init<S: TensorScalar>(_ scalars: some Collection<S>, file: StaticString = #fileID, line: UInt = #line) {
        self = Tensor.constant(scalars, shape: [scalars.count], op: "init", at: SourceLocation(file, line))
    }

    /// Creates a tensor of the given shape from scalars in row-major order.
    ///
    /// A count that does not match the shape gives a tensor carrying a
    /// ``TensorError/Kind/shapeMismatch`` error.
    @_disfavoredOverload
    public init<S: TensorScalar>(
        shape: [Int], scalars: some Collection<S>, file: StaticString = #fileID, line: UInt = #line
    ) {
        self = Tensor.constant(scalars, shape: shape, op: "init", at: SourceLocation(file, line))
    }

    /// Creates a tensor of the given shape and explicit scalar type from scalars in row-major order.
    public init<S: TensorScalar>(
        shape: [Int], scalars: some Collection<S>, scalarType: S.Type, file: StaticString = #fileID, line: UInt = #line
    ) {
        self = Tensor.constant(scalars, shape: shape, op: "init", at: SourceLocation(file, line))
    }

    /// Creates a tensor from a shaped array, sharing its scalars without a copy (a later write
    /// to the array copies them first, so the tensor keeps the values it was made with).
    public init<S: TensorScalar>(_ shapedArray: ShapedArray<S>) {
        let (owner, start) = shapedArray.sharedMemory
        let buffer = HostBuffer(
            borrowing: UnsafeMutableRawPointer(start), byteCount: shapedArray.scalarCount * S.scalarType.byteCount,
            owner: owner)
        let value = Value(buffer: buffer, layout: Layout(contiguous: shapedArray.shape), scalarType: S.scalarType)
        self = Tensor.constant(value: value, op: "init")
    }

    /// Creates a tensor of the given shape with every scalar equal to `repeatedValue`.
    @_disfavoredOverload
    public init<S: TensorScalar>(
        repeating repeatedValue: S, shape: [Int], file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        do throws(RuleViolation) {
            try Tensor.checkSize(shape, S.scalarType)
        } catch {
            self = Tensor(
                failed: TensorError(
                    error.kind, op: "init(repeating:shape:)", message: error.message, location: location))
            return
        }
        let count = shape.reduce(1, *)
        // One scalar broadcast to the shape: no memory beyond one element until it is used.
        let one = Tensor.constant([repeatedValue], shape: [], op: "init(repeating:shape:)", at: location)
        self = count == 1 && shape.isEmpty ? one : Tensor.record(.broadcast(shape), [one], at: location)
    }

    /// Creates a tensor of zeros.
    public init<S: TensorScalar>(
        zeros shape: [Int], scalarType: S.Type = Float.self, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.init(repeating: S(converting: 0), shape: shape, file: file, line: line)
    }

    /// Creates a tensor of ones.
    public init<S: TensorScalar>(
        ones shape: [Int], scalarType: S.Type = Float.self, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.init(repeating: S(converting: 1), shape: shape, file: file, line: line)
    }

    /// A rank-1 tensor of the values `start, start + stride, ...` below `end` (above it for a
    /// negative stride), like NumPy's `arange`.
    public init(
        rangeFrom start: Float, to end: Float, by stride: Float, file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        guard stride != 0, stride.isFinite, start.isFinite, end.isFinite else {
            self = Tensor(
                failed: TensorError(
                    .invalidArgument, op: "init(rangeFrom:to:by:)",
                    message: "the stride must be finite and non-zero, the bounds finite", location: location))
            return
        }
        // Counted in Float, as the values are; an infinite or huge count (the bounds' difference
        // may overflow) is refused before any element is made, as is a range of 10¹² values.
        let steps = Swift.max(0, ((end - start) / stride).rounded(.up))
        let op = "init(rangeFrom:to:by:)"
        let count = steps < Float(Int.max) ? Int(steps) : Int.max
        if let failed = Tensor.sizeFailure([count], .float32, op: op, at: location) {
            self = failed
            return
        }
        self = Tensor.constant((0..<count).map { start + Float($0) * stride }, shape: [count], op: op, at: location)
    }

    /// A rank-1 `Int32` tensor of the values `start, start + stride, ...` below `end` (above it for
    /// a negative stride). With plain literals the `Float` form is chosen, as in MLTensor.
    @_disfavoredOverload
    public init(
        rangeFrom start: Int32, to end: Int32, by stride: Int32, file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        guard stride != 0 else {
            self = Tensor(
                failed: TensorError(
                    .invalidArgument, op: "init(rangeFrom:to:by:)", message: "the stride must be non-zero",
                    location: location))
            return
        }
        let span = Int(end) - Int(start)
        let count = Swift.max(0, (span + Int(stride) - (stride > 0 ? 1 : -1)) / Int(stride))
        if let failed = Tensor.sizeFailure([count], .int32, op: "init(rangeFrom:to:by:)", at: location) {
            self = failed
            return
        }
        let values = Swift.stride(from: Int(start), to: Int(end), by: Int(stride)).map { Int32($0) }
        self = Tensor.constant(values, shape: [values.count], op: "init(rangeFrom:to:by:)", at: location)
    }

    /// A rank-1 tensor of `count` evenly spaced values from `start` through `end`, like NumPy's
    /// `linspace`.
    public init(
        linearSpaceFrom start: Float, through end: Float, count: Int, file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        guard count >= 0 else {
            self = Tensor(
                failed: TensorError(
                    .invalidArgument, op: "init(linearSpaceFrom:through:count:)", message: "count \(count) is negative",
                    location: location))
            return
        }
        if let failed = Tensor.sizeFailure([count], .float32, op: "init(linearSpaceFrom:through:count:)", at: location)
        {
            self = failed
            return
        }
        let step = count > 1 ? (Double(end) - Double(start)) / Double(count - 1) : 0
        let values = (0..<count).map { $0 == count - 1 && count > 1 ? end : Float(Double(start) + Double($0) * step) }
        self = Tensor.constant(values, shape: [count], op: "init(linearSpaceFrom:through:count:)", at: location)
    }

    /// Concatenates tensors along an axis; all other dimensions must match.
    public init(
        concatenating tensors: [Tensor], alongAxis axis: Int = 0, file: StaticString = #fileID, line: UInt = #line
    ) {
        self = Tensor.record("concatenate", tensors, at: SourceLocation(file, line)) {
            signatures throws(RuleViolation) in
            guard let first = signatures.first else {
                throw RuleViolation(.invalidArgument, "concatenation needs at least one tensor")
            }
            return .alongAxis(.concat, try Tensor.normalize(axis: axis, rank: first.shape.count))
        }
    }

    /// The concatenation of this tensor and `others` along `axis`, kept in storage that grows in
    /// place: the result is a prefix of a buffer with room after it along the axis, and appending
    /// to such a result again writes only the new part, in the same buffer, while it has room (the
    /// capacity doubles when it has not). A decoder's key/value cache grows this way, one step at
    /// a time, without copying the past. Values are those of ``init(concatenating:alongAxis:file:line:)``.
    package func appending(
        _ others: [Tensor], alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        Tensor.record("appending", [self] + others, at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.append, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }

    /// Stacks tensors of one shape along a new axis.
    public init(stacking tensors: [Tensor], alongAxis axis: Int = 0, file: StaticString = #fileID, line: UInt = #line) {
        let location = SourceLocation(file, line)
        guard let first = tensors.first else {
            self = Tensor(
                failed: TensorError(
                    .invalidArgument, op: "stack", message: "stacking needs at least one tensor", location: location))
            return
        }
        if let failed = tensors.first(where: { $0.error != nil }) {
            self = failed
            return
        }
        guard tensors.allSatisfy({ $0.shape == first.shape }) else {
            self = Tensor(
                failed: TensorError(
                    .shapeMismatch, op: "stack", operandShapes: tensors.map(\.shape),
                    message: "stacked tensors must have one shape", location: location))
            return
        }
        let expanded = tensors.map { $0.expandingShape(at: axis, file: file, line: line) }
        self = Tensor(concatenating: expanded, alongAxis: axis, file: file, line: line)
    }
}

/// Array literals make rank-1 `Float` tensors. Scalar literals are deliberately not supported:
/// a `Tensor` that is `ExpressibleByIntegerLiteral` makes ordinary code such as
/// `[Float].reduce(0, +)` ambiguous wherever the module is imported. Scalars mix with tensors
/// through the `Tensor`–`Float` operators instead (`x - 3`, `2 * x`), which take the tensor's type.
extension Tensor: ExpressibleByArrayLiteral {
    /// A rank-1 `Float` tensor: `let x: Tensor = [1, 2, 3]`.
    public init(arrayLiteral elements: Float...) {
        self = Tensor.constant(elements, shape: [elements.count], op: "literal", at: nil)
    }
}

/// A shared one-element constant's identity: the value's bits (so -0 and NaNs stay apart), its
/// type and its rank (its shape is all ones).
private struct ScalarConstantKey: Sendable {
    let bits: UInt64
    /// The scalar type's case number and the rank, in one word.
    let tag: UInt64

    init(bits: UInt64, type: ScalarType, rank: Int) {
        self.bits = bits
        self.tag = UInt64(truncatingIfNeeded: rank) << 3 | UInt64(type.caseNumber)
    }
}

/// The shared one-element constants, direct-mapped: a key's slot comes from a multiplicative hash
/// of its bits, and a new constant takes the place of the one there. A lookup is one probe and
/// one comparison; a `Dictionary` of them (SipHash, a probe sequence) was a fifth of the time a
/// chain of scalar steps took to record.
private struct ScalarConstantCache {
    private static var slotBits: Int { 9 }
    private var keys = [ScalarConstantKey](repeating: ScalarConstantKey(bits: 0, type: .float32, rank: -1),
                                           count: 1 << slotBits)
    private var nodes = [Node?](repeating: nil, count: 1 << slotBits)

    private func slot(_ key: ScalarConstantKey) -> Int {
        let mixed = (key.bits ^ (key.tag &* 0xC2B2_AE3D_27D4_EB4F)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt64(64 - Self.slotBits))
    }

    func node(for key: ScalarConstantKey) -> Node? {
        let index = slot(key)
        let held = keys[index]
        return held.bits == key.bits && held.tag == key.tag ? nodes[index] : nil
    }

    mutating func keep(_ node: Node, for key: ScalarConstantKey) {
        let index = slot(key)
        keys[index] = key
        nodes[index] = node
    }
}
