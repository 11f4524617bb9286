import Foundation

/// The shape and scalar type of a tensor: what the front end checks and the planner costs.
struct TensorSignature: Sendable, Hashable {
    var shape: [Int]
    var scalarType: ScalarType

    var elementCount: Int { shape.reduce(1, *) }
    var byteCount: Int { elementCount * scalarType.byteCount }
}

/// A broken rule of an op, before the front end attaches the op name, shapes and call site.
struct RuleViolation: Error {
    var kind: TensorError.Kind
    var message: String

    init(_ kind: TensorError.Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

extension Op {
    /// The output signature of the op for the given operands, or the rule they break.
    ///
    /// This is the only place operand shapes and scalar types are validated; backends trust nodes.
    func outputSignature(for inputs: [TensorSignature]) throws(RuleViolation) -> TensorSignature {
        switch self {
        case .constant:
            throw RuleViolation(.invalidArgument, "constants are created from data, not from operands")
        case .unary(let op):
            let x = inputs[0]
            try Self.require(x.scalarType, in: op.acceptedTypes)
            return x
        case .binary(let op):
            let (a, b) = (inputs[0], inputs[1])
            guard a.scalarType == b.scalarType else {
                throw RuleViolation(.scalarTypeMismatch, "scalar types \(a.scalarType) and \(b.scalarType) differ")
            }
            try Self.require(a.scalarType, in: op.acceptedTypes)
            guard a.shape == b.shape else {
                throw RuleViolation(.shapeMismatch, "shapes \(describe(a.shape)) and \(describe(b.shape)) differ")
            }
            return TensorSignature(shape: a.shape, scalarType: op.producesBool ? .bool : a.scalarType)
        case .select:
            let (mask, a, b) = (inputs[0], inputs[1], inputs[2])
            guard mask.scalarType == .bool else {
                throw RuleViolation(.scalarTypeMismatch, "the mask must be bool, not \(mask.scalarType)")
            }
            guard a.scalarType == b.scalarType else {
                throw RuleViolation(.scalarTypeMismatch, "scalar types \(a.scalarType) and \(b.scalarType) differ")
            }
            guard mask.shape == a.shape, a.shape == b.shape else {
                throw RuleViolation(.shapeMismatch, "shapes \(describe(mask.shape)), \(describe(a.shape)) and \(describe(b.shape)) differ")
            }
            return a
        case .cast(let type):
            return TensorSignature(shape: inputs[0].shape, scalarType: type)
        case .reduce(let op, let axes, let keepRank):
            let x = inputs[0]
            try Self.require(x.scalarType, in: op == .mean ? [.float32, .float16] : [.float32, .float16, .int32])
            try Self.requireAxes(axes, rank: x.shape.count)
            return TensorSignature(shape: Self.reducedShape(x.shape, axes: axes, keepRank: keepRank), scalarType: x.scalarType)
        case .argReduce(_, let axis, let keepRank):
            let x = inputs[0]
            try Self.require(x.scalarType, in: [.float32, .float16, .int32])
            try Self.requireAxes([axis], rank: x.shape.count)
            guard x.shape[axis] > 0 else {
                throw RuleViolation(.invalidArgument, "cannot take the index of an extreme of an empty axis \(axis)")
            }
            return TensorSignature(shape: Self.reducedShape(x.shape, axes: [axis], keepRank: keepRank), scalarType: .int32)
        case .cumulativeSum(let axis):
            let x = inputs[0]
            try Self.require(x.scalarType, in: [.float32, .float16, .int32])
            try Self.requireAxes([axis], rank: x.shape.count)
            return x
        case .topK(let k, let output):
            let x = inputs[0]
            try Self.require(x.scalarType, in: [.float32, .float16, .int32])
            guard let last = x.shape.last else {
                throw RuleViolation(.invalidAxis, "topK needs a tensor of rank 1 or more")
            }
            guard (0...last).contains(k) else {
                throw RuleViolation(.invalidArgument, "k = \(k) is outside 0...\(last) for the last axis")
            }
            let shape = Array(x.shape.dropLast()) + [k]
            return TensorSignature(shape: shape, scalarType: output == .values ? x.scalarType : .int32)
        case .matmul:
            let (a, b) = (inputs[0], inputs[1])
            guard a.scalarType == b.scalarType else {
                throw RuleViolation(.scalarTypeMismatch, "scalar types \(a.scalarType) and \(b.scalarType) differ")
            }
            try Self.require(a.scalarType, in: [.float32, .float16])
            guard a.shape.count >= 2, a.shape.count == b.shape.count,
                a.shape.dropLast(2) == b.shape.dropLast(2), a.shape[a.shape.count - 1] == b.shape[b.shape.count - 2]
            else {
                throw RuleViolation(.shapeMismatch, "shapes \(describe(a.shape)) and \(describe(b.shape)) cannot be multiplied")
            }
            return TensorSignature(shape: a.shape.dropLast() + [b.shape[b.shape.count - 1]], scalarType: a.scalarType)
        case .softmax(let axis), .logSoftmax(let axis), .layerNorm(let axis, _):
            let x = inputs[0]
            try Self.require(x.scalarType, in: [.float32, .float16])
            try Self.requireAxes([axis], rank: x.shape.count)
            return x
        case .reshape(let shape):
            let x = inputs[0]
            guard let count = Shape.elementCount(shape), count == x.elementCount else {
                throw RuleViolation(.invalidReshape, "cannot reshape \(describe(x.shape)) (\(x.elementCount) elements) to \(describe(shape))")
            }
            return TensorSignature(shape: shape, scalarType: x.scalarType)
        case .permute(let permutation):
            let x = inputs[0]
            guard permutation.sorted() == Array(0..<x.shape.count) else {
                throw RuleViolation(.invalidArgument, "\(permutation) is not a permutation of the axes of \(describe(x.shape))")
            }
            return TensorSignature(shape: permutation.map { x.shape[$0] }, scalarType: x.scalarType)
        case .broadcast(let shape):
            let x = inputs[0]
            guard Self.broadcastShape(x.shape, shape) == shape else {
                throw RuleViolation(.shapeMismatch, "\(describe(x.shape)) cannot be broadcast to \(describe(shape))")
            }
            return TensorSignature(shape: shape, scalarType: x.scalarType)
        case .slice(let dimensions):
            let x = inputs[0]
            guard dimensions.count == x.shape.count else {
                throw RuleViolation(.invalidArgument, "a slice of \(describe(x.shape)) needs \(x.shape.count) ranges")
            }
            for (axis, d) in dimensions.enumerated() {
                let last = d.start + (d.count - 1) * d.step
                guard d.count >= 0, d.step != 0,
                    d.count == 0 || ((0..<x.shape[axis]).contains(d.start) && (0..<x.shape[axis]).contains(last))
                else {
                    throw RuleViolation(.indexOutOfRange, "range on axis \(axis) is outside 0..<\(x.shape[axis])")
                }
            }
            return TensorSignature(shape: dimensions.map(\.count), scalarType: x.scalarType)
        case .contiguous:
            return inputs[0]
        case .pad(let padding, _):
            let x = inputs[0]
            guard padding.count == x.shape.count, padding.allSatisfy({ $0.before >= 0 && $0.after >= 0 }) else {
                throw RuleViolation(.invalidArgument, "padding needs \(x.shape.count) non-negative (before, after) pairs")
            }
            return TensorSignature(shape: zip(x.shape, padding).map { $0 + $1.before + $1.after }, scalarType: x.scalarType)
        case .concat(let axis):
            guard let first = inputs.first else {
                throw RuleViolation(.invalidArgument, "concatenation needs at least one tensor")
            }
            try Self.requireAxes([axis], rank: first.shape.count)
            var shape = first.shape
            shape[axis] = 0
            for x in inputs {
                guard x.scalarType == first.scalarType else {
                    throw RuleViolation(.scalarTypeMismatch, "scalar types \(first.scalarType) and \(x.scalarType) differ")
                }
                var other = x.shape
                guard other.count == shape.count else {
                    throw RuleViolation(.shapeMismatch, "shapes \(describe(first.shape)) and \(describe(x.shape)) differ in rank")
                }
                shape[axis] += other[axis]
                other[axis] = 0
                var expected = shape
                expected[axis] = 0
                guard other == expected else {
                    throw RuleViolation(.shapeMismatch, "shapes \(describe(first.shape)) and \(describe(x.shape)) differ off axis \(axis)")
                }
            }
            return TensorSignature(shape: shape, scalarType: first.scalarType)
        case .gather(let axis):
            let (x, indices) = (inputs[0], inputs[1])
            try Self.requireAxes([axis], rank: x.shape.count)
            guard indices.scalarType == .int32 else {
                throw RuleViolation(.scalarTypeMismatch, "indices must be int32, not \(indices.scalarType)")
            }
            let shape = Array(x.shape[..<axis]) + indices.shape + Array(x.shape[(axis + 1)...])
            return TensorSignature(shape: shape, scalarType: x.scalarType)
        }
    }

    private static func require(_ type: ScalarType, in accepted: ScalarTypeSet) throws(RuleViolation) {
        guard accepted.contains(type) else {
            let names = ScalarType.allCases.filter(accepted.contains).map(\.rawValue).joined(separator: ", ")
            throw RuleViolation(.scalarTypeMismatch, "scalar type \(type) is not accepted (expects \(names))")
        }
    }

    /// Checks normalised axes: in range, strictly increasing.
    private static func requireAxes(_ axes: [Int], rank: Int) throws(RuleViolation) {
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
        let rank = max(a.count, b.count)
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
