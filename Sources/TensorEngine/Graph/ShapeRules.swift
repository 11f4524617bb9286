/// The shape and scalar type of a tensor: what the front end checks and the planner costs.
package struct TensorSignature: Sendable, Hashable {
    package var shape: [Int]
    package var scalarType: ScalarType

    package init(shape: [Int], scalarType: ScalarType) {
        self.shape = shape
        self.scalarType = scalarType
    }

    var elementCount: Int { shape.reduce(1, *) }
    var byteCount: Int { elementCount * scalarType.byteCount }
}

/// A broken rule of an op, before the front end attaches the op name, shapes and call site.
package struct RuleViolation: Error {
    var kind: TensorError.Kind
    var message: String

    init(_ kind: TensorError.Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

extension Op {
    /// The output signature of the op for the given operands, or the rule they break: the
    /// table's arity, operand types and shape rule, in that order.
    ///
    /// This is where normalised ops are validated; backends trust nodes. (The front end also
    /// reports what it cannot normalise: shapes that do not broadcast, a matrix product of
    /// vectors that do not line up, axes out of range.)
    func outputSignature(for inputs: [TensorSignature]) throws(RuleViolation) -> TensorSignature {
        let descriptor = self.descriptor
        guard descriptor.arity.accepts(inputs.count) else {
            throw RuleViolation(.invalidArgument, "\(name) takes \(descriptor.arity) operands, not \(inputs.count)")
        }
        try Self.check(inputs, descriptor.operandTypes)
        return try descriptor.shape(self, inputs)
    }

    private static func check(_ inputs: [TensorSignature], _ rule: OperandTypes) throws(RuleViolation) {
        switch rule {
        case .uniform(let accepted):
            guard let first = inputs.first else { return }
            for input in inputs.dropFirst() where input.scalarType != first.scalarType {
                throw RuleViolation(
                    .scalarTypeMismatch, "scalar types \(first.scalarType) and \(input.scalarType) differ")
            }
            try require(first.scalarType, in: accepted)
        case .first(let accepted):
            guard let first = inputs.first else { return }
            try require(first.scalarType, in: accepted)
        case .masked(let accepted):
            guard let mask = inputs.first else { return }
            guard mask.scalarType == .bool else {
                throw RuleViolation(.scalarTypeMismatch, "the mask must be bool, not \(mask.scalarType)")
            }
            try check(Array(inputs.dropFirst()), .uniform(accepted))
        }
    }

    static func require(_ type: ScalarType, in accepted: ScalarTypeSet) throws(RuleViolation) {
        guard accepted.contains(type) else {
            let names = accepted.types.map(\.rawValue).joined(separator: ", ")
            throw RuleViolation(.scalarTypeMismatch, "scalar type \(type) is not accepted (expects \(names))")
        }
    }

    /// Checks normalised axes: in range, strictly increasing.
    static func requireAxes(_ axes: [Int], rank: Int) throws(RuleViolation) {
        guard axes.allSatisfy({ (0..<rank).contains($0) }), zip(axes, axes.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw RuleViolation(.invalidAxis, "axes \(axes) are invalid for rank \(rank)")
        }
    }

    static func reducedShape(_ shape: [Int], axes: [Int], keepRank: Bool) -> [Int] {
        shape.indices.compactMap { axis in
            axes.contains(axis) ? (keepRank ? 1 : nil) : shape[axis]
        }
    }

    /// NumPy's broadcasting of two shapes, or `nil` if they are incompatible.
    static func broadcastShape(_ a: [Int], _ b: [Int]) -> [Int]? {
        // Equal shapes, the common case, share the operand's array instead of building one.
        if a == b { return a }
        let rank = Swift.max(a.count, b.count)
        var result = [Int](repeating: 1, count: rank)
        for i in 0..<rank {
            let x = i < rank - a.count ? 1 : a[i - (rank - a.count)]
            let y = i < rank - b.count ? 1 : b[i - (rank - b.count)]
            guard x == y || x == 1 || y == 1 else { return nil }
            result[i] = x == 1 ? y : x
        }
        return result
    }
}

/// The shape rules of the op table, one per kind of op. Arity and operand types are checked
/// before a rule runs.
enum ShapeRules {
    static let constant: ShapeRule = { _, _ throws(RuleViolation) in
        throw RuleViolation(.invalidArgument, "constants are created from data, not from operands")
    }

    /// Operands of one shape (the front end broadcasts them); the result type as the op says.
    static func elementwise(_ result: ElementwiseResult) -> ShapeRule {
        { op, inputs throws(RuleViolation) in
            guard let last = inputs.last else { return TensorSignature(shape: [], scalarType: .float32) }
            guard inputs.allSatisfy({ $0.shape == last.shape }) else {
                let shapes = inputs.map { describe($0.shape) }
                throw RuleViolation(.shapeMismatch, "shapes \(shapes.joined(separator: " and ")) differ")
            }
            let type: ScalarType =
                switch result {
                case .operandType: last.scalarType
                case .bool: .bool
                case .castTarget: op.castType
                }
            return TensorSignature(shape: last.shape, scalarType: type)
        }
    }

    /// The reduced axes removed (or kept as size 1).
    static let reduction: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        try Op.requireAxes(op.axes, rank: x.shape.count)
        return TensorSignature(
            shape: Op.reducedShape(x.shape, axes: op.axes, keepRank: op.keepRank), scalarType: x.scalarType)
    }

    /// The index of an extreme along one non-empty axis, as `Int32`.
    static let argReduction: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        try Op.requireAxes(op.axes, rank: x.shape.count)
        guard op.axes.count == 1, x.shape[op.axis] > 0 else {
            throw RuleViolation(.invalidArgument, "cannot take the index of an extreme of an empty axis \(op.axis)")
        }
        return TensorSignature(
            shape: Op.reducedShape(x.shape, axes: op.axes, keepRank: op.keepRank), scalarType: .int32)
    }

    /// Work along one axis that keeps the operand's signature.
    static let alongAxis: ShapeRule = { op, inputs throws(RuleViolation) in
        try Op.requireAxes(op.axes, rank: inputs[0].shape.count)
        return inputs[0]
    }

    static let topK: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        guard let last = x.shape.last else {
            throw RuleViolation(.invalidAxis, "topK needs a tensor of rank 1 or more")
        }
        guard (0...last).contains(op.k) else {
            throw RuleViolation(.invalidArgument, "k = \(op.k) is outside 0...\(last) for the last axis")
        }
        return TensorSignature(
            shape: Array(x.shape.dropLast()) + [op.k], scalarType: op.topKOutput == .values ? x.scalarType : .int32)
    }

    /// `[..., m, k] · [..., k, n]` with identical batch dimensions (the front end broadcasts them).
    static let matmul: ShapeRule = { _, inputs throws(RuleViolation) in
        let (a, b) = (inputs[0], inputs[1])
        let rank = a.shape.count
        // Index by index, without slices: this rule runs on every product recorded.
        guard rank >= 2, rank == b.shape.count, (0..<rank - 2).allSatisfy({ a.shape[$0] == b.shape[$0] }),
            a.shape[rank - 1] == b.shape[rank - 2]
        else {
            throw RuleViolation(
                .shapeMismatch, "shapes \(describe(a.shape)) and \(describe(b.shape)) cannot be multiplied")
        }
        var shape = a.shape
        shape[rank - 1] = b.shape[rank - 1]
        return TensorSignature(shape: shape, scalarType: a.scalarType)
    }

    static let sameAsOperand: ShapeRule = { _, inputs throws(RuleViolation) in inputs[0] }

    static let reshape: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        let shape = op.targetShape
        guard let count = Shape.elementCount(shape), count == x.elementCount else {
            throw RuleViolation(
                .invalidReshape,
                "cannot reshape \(describe(x.shape)) (\(x.elementCount) elements) to \(describe(shape))")
        }
        return TensorSignature(shape: shape, scalarType: x.scalarType)
    }

    static let permute: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        guard op.permutation.sorted() == Array(0..<x.shape.count) else {
            throw RuleViolation(
                .invalidArgument, "\(op.permutation) is not a permutation of the axes of \(describe(x.shape))")
        }
        return TensorSignature(shape: op.permutation.map { x.shape[$0] }, scalarType: x.scalarType)
    }

    static let broadcast: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        guard Op.broadcastShape(x.shape, op.targetShape) == op.targetShape else {
            throw RuleViolation(
                .shapeMismatch, "\(describe(x.shape)) cannot be broadcast to \(describe(op.targetShape))")
        }
        return TensorSignature(shape: op.targetShape, scalarType: x.scalarType)
    }

    static let slice: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        let dimensions = op.sliceDimensions
        guard dimensions.count == x.shape.count else {
            throw RuleViolation(.invalidArgument, "a slice of \(describe(x.shape)) needs \(x.shape.count) ranges")
        }
        for (axis, d) in dimensions.enumerated() {
            let (span, spanOverflow) = (d.count - 1).multipliedReportingOverflow(by: d.step)
            let (last, lastOverflow) = d.start.addingReportingOverflow(span)
            guard d.count >= 0, d.step != 0, !spanOverflow, !lastOverflow,
                d.count == 0 || ((0..<x.shape[axis]).contains(d.start) && (0..<x.shape[axis]).contains(last))
            else {
                throw RuleViolation(.indexOutOfRange, "range on axis \(axis) is outside 0..<\(x.shape[axis])")
            }
        }
        return TensorSignature(shape: dimensions.map(\.count), scalarType: x.scalarType)
    }

    static let pad: ShapeRule = { op, inputs throws(RuleViolation) in
        let x = inputs[0]
        let padding = op.padding
        guard padding.count == x.shape.count, padding.allSatisfy({ $0.before >= 0 && $0.after >= 0 }) else {
            throw RuleViolation(.invalidArgument, "padding needs \(x.shape.count) non-negative (before, after) pairs")
        }
        var shape: [Int] = []
        for (extent, pad) in zip(x.shape, padding) {
            let (sum, overflow) = extent.addingReportingOverflow(pad.before)
            let (total, overflowAgain) = sum.addingReportingOverflow(pad.after)
            guard !overflow, !overflowAgain else {
                throw RuleViolation(.tooLarge, "padding \(padding) overflows the shape")
            }
            shape.append(total)
        }
        // Each extent may fit while their product does not (the strides would overflow).
        guard Shape.elementCount(shape) != nil else {
            let pairs = padding.map { "(\($0.before), \($0.after))" }.joined(separator: ", ")
            throw RuleViolation(.tooLarge, "padding [\(pairs)] of \(describe(x.shape)) gives more elements than an Int counts")
        }
        return TensorSignature(shape: shape, scalarType: x.scalarType)
    }

    static let concat: ShapeRule = { op, inputs throws(RuleViolation) in
        let first = inputs[0]
        let axis = op.axis
        try Op.requireAxes([axis], rank: first.shape.count)
        var shape = first.shape
        shape[axis] = 0
        for x in inputs {
            var other = x.shape
            guard other.count == shape.count else {
                throw RuleViolation(
                    .shapeMismatch, "shapes \(describe(first.shape)) and \(describe(x.shape)) differ in rank")
            }
            let (sum, overflow) = shape[axis].addingReportingOverflow(other[axis])
            guard !overflow else { throw RuleViolation(.tooLarge, "the concatenation's axis \(axis) overflows") }
            shape[axis] = sum
            other[axis] = 0
            var expected = shape
            expected[axis] = 0
            guard other == expected else {
                throw RuleViolation(
                    .shapeMismatch, "shapes \(describe(first.shape)) and \(describe(x.shape)) differ off axis \(axis)")
            }
        }
        return TensorSignature(shape: shape, scalarType: first.scalarType)
    }

    /// `gather(values, indices)`: values along the axis picked by `Int32` or `Int64` indices.
    static let gather: ShapeRule = { op, inputs throws(RuleViolation) in
        let (x, indices) = (inputs[0], inputs[1])
        let axis = op.axis
        try Op.requireAxes([axis], rank: x.shape.count)
        guard ScalarTypeSet.integers.contains(indices.scalarType) else {
            throw RuleViolation(.scalarTypeMismatch, "indices must be int32 or int64, not \(indices.scalarType)")
        }
        let shape = Array(x.shape[..<axis]) + indices.shape + Array(x.shape[(axis + 1)...])
        return TensorSignature(shape: shape, scalarType: x.scalarType)
    }

    /// A scatter along an axis (Core ML's `replacing(with:atIndices:alongAxis:)`): `Int32`
    /// indices and updates of one shape, the data's but along the axis; the result is the data's.
    static let scatter: ShapeRule = { op, inputs throws(RuleViolation) in
        let (x, indices, updates) = (inputs[0], inputs[1], inputs[2])
        let axis = op.axis
        try Op.requireAxes([axis], rank: x.shape.count)
        guard ScalarTypeSet.integers.contains(indices.scalarType) else {
            throw RuleViolation(.scalarTypeMismatch, "indices must be int32 or int64, not \(indices.scalarType)")
        }
        guard updates.scalarType == x.scalarType else {
            throw RuleViolation(.scalarTypeMismatch, "updates of \(updates.scalarType) cannot go into \(x.scalarType)")
        }
        var expected = x.shape
        expected[axis] = indices.shape.count == x.shape.count ? indices.shape[axis] : -1
        guard indices.shape == expected else {
            throw RuleViolation(
                .shapeMismatch,
                "indices of shape \(describe(indices.shape)) must have the shape \(describe(x.shape)) but along axis \(axis)")
        }
        guard updates.shape == indices.shape else {
            throw RuleViolation(
                .shapeMismatch, "updates of shape \(describe(updates.shape)) must have the indices' shape \(describe(indices.shape))")
        }
        return x
    }
}
