/// Elementwise operations of one operand.
enum UnaryOp: String, Sendable, Hashable, CaseIterable {
    case negate, abs, sign, exp, log, squareRoot, rsqrt, square, reciprocal
    case sin, cos, tanh, floor, ceil, round, sigmoid, relu, erf
    case logicalNot

    /// The scalar types the op accepts.
    var acceptedTypes: ScalarTypeSet {
        switch self {
        case .negate, .abs, .sign, .square, .relu: [.float32, .float16, .int32]
        case .exp, .log, .squareRoot, .rsqrt, .reciprocal, .sin, .cos, .tanh, .floor, .ceil, .round,
            .sigmoid, .erf:
            [.float32, .float16]
        case .logicalNot: [.bool]
        }
    }

    /// Floating-point operations per element, for the cost model (transcendentals count as several).
    var flopsPerElement: Double {
        switch self {
        case .negate, .abs, .sign, .square, .relu, .floor, .ceil, .round, .logicalNot: 1
        case .reciprocal, .squareRoot, .rsqrt: 4
        case .exp, .log, .sigmoid: 10
        case .sin, .cos, .tanh, .erf: 16
        }
    }
}

/// Elementwise operations of two operands of the same shape and scalar type.
enum BinaryOp: String, Sendable, Hashable, CaseIterable {
    case add, subtract, multiply, divide, pow, minimum, maximum
    case equal, notEqual, less, lessEqual, greater, greaterEqual
    case logicalAnd, logicalOr

    /// The scalar types the op accepts for its operands.
    var acceptedTypes: ScalarTypeSet {
        switch self {
        case .add, .subtract, .multiply, .divide, .minimum, .maximum, .less, .lessEqual, .greater,
            .greaterEqual:
            [.float32, .float16, .int32]
        case .pow: [.float32, .float16]
        case .equal, .notEqual: [.float32, .float16, .int32, .bool]
        case .logicalAnd, .logicalOr: [.bool]
        }
    }

    /// Whether the result is `Bool` rather than the operands' type.
    var producesBool: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual, .logicalAnd, .logicalOr: true
        case .add, .subtract, .multiply, .divide, .pow, .minimum, .maximum: false
        }
    }

    /// Floating-point operations per element, for the cost model.
    var flopsPerElement: Double {
        switch self {
        case .pow: 20
        case .divide: 4
        case .add, .subtract, .multiply, .minimum, .maximum, .equal, .notEqual, .less, .lessEqual,
            .greater, .greaterEqual, .logicalAnd, .logicalOr:
            1
        }
    }
}

/// Reductions that combine the values along some axes into one.
enum ReductionOp: String, Sendable, Hashable, CaseIterable {
    case sum, mean, max, min, product
}

/// Reductions that return the index of the extreme value along one axis.
enum ArgReductionOp: String, Sendable, Hashable, CaseIterable {
    case argmax, argmin
}

/// Which of the two results of a top-k selection a node holds.
enum TopKOutput: String, Sendable, Hashable, CaseIterable {
    case values, indices
}

/// One axis of a strided slice: `count` elements starting at `start`, `step` apart (negative steps
/// walk backwards, as `reversed(alongAxes:)` does).
struct SliceDimension: Sendable, Hashable {
    var start: Int
    var count: Int
    var step: Int
}

/// Padding added before and after one axis.
struct Padding: Sendable, Hashable {
    var before: Int
    var after: Int
}

/// A primitive operation with its attributes: what a graph node computes.
///
/// Every user-facing ``Tensor`` operation records one of these (composite operations such as
/// `gelu` record several). Attributes are normalised by the front end (axes non-negative and
/// sorted, shapes validated), so backends trust them.
enum Op: Sendable, Hashable {
    /// Data supplied by the user; held by the node, never executed by a backend.
    case constant
    case unary(UnaryOp)
    case binary(BinaryOp)
    /// `select(mask, whereTrue, whereFalse)`: operands of one shape, the mask `Bool`.
    case select
    case cast(ScalarType)
    case reduce(ReductionOp, axes: [Int], keepRank: Bool)
    case argReduce(ArgReductionOp, axis: Int, keepRank: Bool)
    case cumulativeSum(axis: Int)
    /// The `k` largest values along the last axis, in descending order (ties: lower index first).
    case topK(k: Int, output: TopKOutput)
    /// `[..., m, k] · [..., k, n]` with identical batch dimensions (the front end broadcasts them).
    case matmul
    case softmax(axis: Int)
    case logSoftmax(axis: Int)
    /// `(x - mean) / sqrt(variance + epsilon)` along one axis; scale and bias are composed.
    case layerNorm(axis: Int, epsilon: Float)
    /// A view with a new shape of the same element count.
    case reshape([Int])
    /// A view with the axes reordered: output axis `i` is input axis `permutation[i]`.
    case permute([Int])
    /// A view repeating size-1 axes (and new leading axes) up to a shape, without copying.
    case broadcast([Int])
    /// A strided view of a sub-range of every axis.
    case slice([SliceDimension])
    /// A row-major copy of a (possibly strided) view.
    case contiguous
    case pad([Padding], value: Double)
    /// Concatenation of all operands along an axis.
    case concat(axis: Int)
    /// `gather(values, indices)`: values along `axis` picked by `Int32` indices.
    case gather(axis: Int)

    /// The table entry this op belongs to.
    var kind: OpKind {
        switch self {
        case .constant: .constant
        case .unary(let op): .unary(op)
        case .binary(let op): .binary(op)
        case .select: .select
        case .cast: .cast
        case .reduce(let op, _, _): .reduce(op)
        case .argReduce(let op, _, _): .argReduce(op)
        case .cumulativeSum: .cumulativeSum
        case .topK: .topK
        case .matmul: .matmul
        case .softmax: .softmax
        case .logSoftmax: .logSoftmax
        case .layerNorm: .layerNorm
        case .reshape: .reshape
        case .permute: .permute
        case .broadcast: .broadcast
        case .slice: .slice
        case .contiguous: .contiguous
        case .pad: .pad
        case .concat: .concat
        case .gather: .gather
        }
    }

    /// The op's name in errors, plans and dumps (`add`, `sum`, `matmul`, ...).
    var name: String { kind.name }
}
