// Core ML's initializer forms that name the scalar type (`scalarType: Float.self`), and the
// `Float` forms plain literals choose: `Tensor([1.0, 2.0])` is a `Float` tensor, as in MLTensor.

extension Tensor {
    /// Creates a rank-1 `Float` tensor; plain literals choose this form (`Tensor([1.0, 2.0])`).
    public init(_ scalars: some Collection<Float>, file: StaticString = #fileID, line: UInt = #line) {
        self = Tensor.constant(scalars, shape: [scalars.count], op: "init", at: SourceLocation(file, line))
    }

    /// Creates a `Float` tensor of the given shape from scalars in row-major order; plain literals
    /// choose this form.
    public init(shape: [Int], scalars: some Collection<Float>, file: StaticString = #fileID, line: UInt = #line) {
        self = Tensor.constant(scalars, shape: shape, op: "init", at: SourceLocation(file, line))
    }

    /// Creates a `Float` tensor of the given shape with every scalar equal to `repeatedValue`;
    /// plain literals choose this form (`Tensor(repeating: 0.5, shape: [2, 4])`).
    public init(repeating repeatedValue: Float, shape: [Int], file: StaticString = #fileID, line: UInt = #line) {
        self.init(repeating: repeatedValue, shape: shape, scalarType: Float.self, file: file, line: line)
    }

    /// Creates a rank-1 tensor of the given scalar type: `Tensor([1, 2, 3], scalarType: Int32.self)`.
    public init<S: TensorScalar>(
        _ scalars: some Collection<S>, scalarType: S.Type, file: StaticString = #fileID, line: UInt = #line
    ) {
        self = Tensor.constant(scalars, shape: [scalars.count], op: "init", at: SourceLocation(file, line))
    }

    /// Creates a rank-0 tensor holding one scalar: `Tensor(3, scalarType: Float.self)`.
    public init<S: TensorScalar>(_ scalar: S, scalarType: S.Type, file: StaticString = #fileID, line: UInt = #line) {
        self = Tensor.constant([scalar], shape: [], op: "init", at: SourceLocation(file, line))
    }

    /// Creates a tensor of the given shape and scalar type with every scalar equal to
    /// `repeatedValue` (one scalar broadcast: no memory beyond one element until it is used).
    public init<S: TensorScalar>(
        repeating repeatedValue: S, shape: [Int], scalarType: S.Type, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        self.init(repeating: repeatedValue, shape: shape, file: file, line: line)
    }

    /// A rank-1 tensor of the given scalar type holding `start, start + stride, ...` below `end`
    /// (above it for a negative stride). `Float16` values are computed in `Float`, `Double` ones
    /// in `Double`, `Int64` ones exactly.
    public init<S: TensorScalar & Numeric>(
        rangeFrom start: S, to end: S, by stride: S, scalarType: S.Type, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        switch S.scalarType {
        case .int32:
            self.init(
                rangeFrom: Int32(converting: start.doubleValue), to: Int32(converting: end.doubleValue),
                by: Int32(converting: stride.doubleValue), file: file, line: line)
        case .int64:
            // `S` is `Int64`, the one Swift type of this scalar type: read as it is, not through `Double`.
            func exact(_ value: S) -> Int64 { (value as? Int64) ?? Int64(converting: value.doubleValue) }
            self = Tensor.range(exact(start), exact(end), exact(stride), at: SourceLocation(file, line))
        case .float64:
            self = Tensor.range(start.doubleValue, end.doubleValue, stride.doubleValue, at: SourceLocation(file, line))
        case .float32, .float16, .bool:
            let range = Tensor(
                rangeFrom: Float(start.doubleValue), to: Float(end.doubleValue), by: Float(stride.doubleValue),
                file: file, line: line)
            self = S.scalarType == .float32 ? range : range.cast(to: S.self, file: file, line: line)
        }
    }

    /// `Int64` values `start, start + stride, ...` below `end` (above it for a negative stride),
    /// counted in 128 bits so that no bound overflows.
    private static func range(_ start: Int64, _ end: Int64, _ stride: Int64, at location: SourceLocation) -> Tensor {
        let op = "init(rangeFrom:to:by:scalarType:)"
        guard stride != 0 else {
            return Tensor(failed: TensorError(.invalidArgument, op: op, message: "the stride must be non-zero", location: location))
        }
        let span = Int128(end) - Int128(start)
        let steps = Swift.max(0, (span + Int128(stride) - (stride > 0 ? 1 : -1)) / Int128(stride))
        let count = steps < Int128(Int.max) ? Int(steps) : Int.max
        if let failed = Tensor.sizeFailure([count], .int64, op: op, at: location) { return failed }
        // Every value lies between the bounds, so none overflows.
        return Tensor.constant((0..<count).map { start + Int64($0) * stride }, shape: [count], op: op, at: location)
    }

    /// `Double` values `start, start + stride, ...` below `end` (above it for a negative stride).
    private static func range(_ start: Double, _ end: Double, _ stride: Double, at location: SourceLocation) -> Tensor {
        let op = "init(rangeFrom:to:by:scalarType:)"
        guard stride != 0, stride.isFinite, start.isFinite, end.isFinite else {
            return Tensor(
                failed: TensorError(
                    .invalidArgument, op: op, message: "the stride must be finite and non-zero, the bounds finite",
                    location: location))
        }
        let steps = Swift.max(0, ((end - start) / stride).rounded(.up))
        let count = steps < Double(Int.max) ? Int(steps) : Int.max
        if let failed = Tensor.sizeFailure([count], .float64, op: op, at: location) { return failed }
        return Tensor.constant((0..<count).map { start + Double($0) * stride }, shape: [count], op: op, at: location)
    }

    /// A rank-1 tensor of `count` evenly spaced values of the given type from `start` through
    /// `end`. `Float16` values are computed in `Float`.
    public init<S: TensorScalar & BinaryFloatingPoint>(
        linearSpaceFrom start: S, through end: S, count: Int, scalarType: S.Type, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        let values = Tensor(
            linearSpaceFrom: Float(start), through: Float(end), count: count, file: file, line: line)
        self = S.scalarType == .float32 ? values : values.cast(to: S.self, file: file, line: line)
    }

    /// Stacks tensors of one shape along a new axis, as ``init(stacking:alongAxis:file:line:)``.
    public init(_ tensors: [Tensor], alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line) {
        self.init(stacking: tensors, alongAxis: axis, file: file, line: line)
    }
}
