/// Host-side arithmetic on ``ONNXConstant``s: how the importer folds shape computations
/// (`Shape → Gather → Mul → Concat → Reshape`) without sending them to a backend, at `Int64`
/// precision.
enum ONNXHost {
    /// Row-major strides of a shape.
    static func strides(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var stride = 1
        for axis in shape.indices.reversed() {
            strides[axis] = stride
            stride *= Swift.max(shape[axis], 1)
        }
        return strides
    }

    /// For each element of `target` (row-major), the index of the element of a `source`-shaped
    /// array that broadcasts to it.
    static func broadcastMap(from source: [Int], to target: [Int]) -> [Int] {
        let count = target.reduce(1, *)
        let padded = [Int](repeating: 1, count: target.count - source.count) + source
        let sourceStrides = strides(padded)
        let targetStrides = strides(target)
        return (0..<count).map { flat in
            var index = 0
            for axis in target.indices where padded[axis] != 1 {
                index += (flat / targetStrides[axis]) % target[axis] * sourceStrides[axis]
            }
            return index
        }
    }

    /// A binary elementwise function on host values, broadcasting; `nil` when the shapes do not
    /// broadcast.
    struct Binary: Sendable {
        var integer: (@Sendable (Int64, Int64) -> Int64)?
        var real: (@Sendable (Double, Double) -> Double)?
        var compare: (@Sendable (Double, Double) -> Bool)?
        var logical: (@Sendable (Bool, Bool) -> Bool)?
    }

    static func binary(_ a: ONNXConstant, _ b: ONNXConstant, _ function: Binary) -> ONNXConstant? {
        guard let shape = Op.broadcastShape(a.shape, b.shape), shape.reduce(1, *) <= ONNXConstant.hostElementLimit
        else {
            return nil
        }
        let left = broadcastMap(from: a.shape, to: shape)
        let right = broadcastMap(from: b.shape, to: shape)
        if let logical = function.logical {
            let (x, y) = (a.booleans, b.booleans)
            return ONNXConstant(
                dataType: .bool, shape: shape, values: .booleans(zip(left, right).map { logical(x[$0], y[$1]) }))
        }
        if let compare = function.compare {
            if a.dataType.isInteger && b.dataType.isInteger {
                let (x, y) = (a.integers, b.integers)
                // Exact beyond 2^53 too: the integers' order, compared with 0, answers as they would.
                let values = zip(left, right).map { pair in
                    let (p, q) = (x[pair.0], y[pair.1])
                    return compare(p < q ? -1 : p > q ? 1 : 0, 0)
                }
                return ONNXConstant(dataType: .bool, shape: shape, values: .booleans(values))
            }
            let (x, y) = (a.reals, b.reals)
            return ONNXConstant(
                dataType: .bool, shape: shape, values: .booleans(zip(left, right).map { compare(x[$0], y[$1]) }))
        }
        if a.dataType.isInteger, b.dataType.isInteger, let integer = function.integer {
            let (x, y) = (a.integers, b.integers)
            let values = zip(left, right).map { a.dataType.wrap(integer(x[$0], y[$1])) }
            return ONNXConstant(dataType: a.dataType, shape: shape, values: .integers(values))
        }
        guard a.dataType.isFloatingPoint, let real = function.real else { return nil }
        let (x, y) = (a.reals, b.reals)
        let result = ONNXConstant(
            dataType: a.dataType, shape: shape, values: .reals(zip(left, right).map { real(x[$0], y[$1]) }))
        return result.cast(to: a.dataType)
    }

    /// The elements of `constant` at `indices` (row-major positions), in a new shape.
    static func pick(_ constant: ONNXConstant, _ indices: [Int], shape: [Int]) -> ONNXConstant {
        let values: ONNXConstant.Values
        switch constant.values {
        case .integers(let source): values = .integers(indices.map { source[$0] })
        case .reals(let source): values = .reals(indices.map { source[$0] })
        case .booleans(let source): values = .booleans(indices.map { source[$0] })
        }
        return ONNXConstant(dataType: constant.dataType, shape: shape, values: values)
    }

    /// The row-major positions of a strided slice's elements.
    static func sliceIndices(_ shape: [Int], _ dimensions: [SliceDimension]) -> [Int] {
        let sourceStrides = strides(shape)
        var indices = [0]
        for (axis, dimension) in dimensions.enumerated() {
            var next: [Int] = []
            next.reserveCapacity(indices.count * dimension.count)
            for base in indices {
                for step in 0..<dimension.count {
                    next.append(base + (dimension.start + step * dimension.step) * sourceStrides[axis])
                }
            }
            indices = next
        }
        return indices
    }

    /// The row-major positions of a transposition's elements (output axis `i` is input axis
    /// `permutation[i]`).
    static func permutationIndices(_ shape: [Int], _ permutation: [Int]) -> [Int] {
        let sourceStrides = strides(shape)
        let outShape = permutation.map { shape[$0] }
        let outStrides = strides(outShape)
        return (0..<outShape.reduce(1, *)).map { flat in
            var index = 0
            for axis in outShape.indices {
                index += (flat / outStrides[axis]) % outShape[axis] * sourceStrides[permutation[axis]]
            }
            return index
        }
    }
}
