/// ONNX operators that select or place elements by position: `Trilu`, `EyeLike`, `OneHot`,
/// `Hardmax`, `CumProd` (with `CumSum`'s scan), `ScatterElements`, `ScatterND`, `GatherND`,
/// `NonZero`, `DepthToSpace`, `SpaceToDepth`, and the thresholds `Shrink` and `Swish`.
extension ONNXOperators {
    static let indexing: [String: ONNXOperator] = [
        "Trilu": ONNXOperator(since: 14, lower: trilu),
        "EyeLike": ONNXOperator(since: 9, lower: eyeLike),
        "OneHot": ONNXOperator(since: 9, lower: oneHot),
        "Hardmax": ONNXOperator(lower: hardmax),
        "CumProd": ONNXOperator(since: 26) { node throws(ModelError) in try scan(node, product: true) },
        "ScatterElements": ONNXOperator(since: 11, lower: scatterElements),
        "ScatterND": ONNXOperator(since: 11, lower: scatterND),
        "GatherND": ONNXOperator(since: 11, lower: gatherND),
        "NonZero": ONNXOperator(since: 9, lower: nonZero),
        "DepthToSpace": ONNXOperator(since: 1, lower: depthToSpace),
        "SpaceToDepth": ONNXOperator(since: 1, lower: spaceToDepth),
        "Shrink": ONNXOperator(since: 9) { node throws(ModelError) in
            let x = try node.tensor(0)
            let lambda = try node.float("lambd", default: 0.5)
            let bias = try node.float("bias", default: 0)
            let zero = Tensor.scalar(0, x.dtype)
            let low = Tensor.binary(.add, x, Tensor.scalar(Double(bias), x.dtype), at: nil)
            let high = Tensor.binary(.subtract, x, Tensor.scalar(Double(bias), x.dtype), at: nil)
            var y = zero.broadcastIfNeeded(to: x.shape, at: nil).replacing(with: low, where: x .< -lambda)
            y = y.replacing(with: high, where: x .> lambda)
            return [try node.output(y, try node.type(0))]
        },
        "Swish": ONNXOperator(since: 24) { node throws(ModelError) in
            let x = try node.tensor(0)
            let alpha = try node.float("alpha", default: 1)
            return [try node.output(x * (x * alpha).sigmoid(), try node.type(0))]
        },
    ]

    /// A host constant mask of a matrix's positions as a tensor of `shape`'s last two axes.
    private static func positionMask(_ shape: [Int], _ keep: (Int, Int) -> Bool) -> Tensor {
        let (rows, columns) = (shape[shape.count - 2], shape[shape.count - 1])
        var values: [Bool] = []
        values.reserveCapacity(rows * columns)
        for row in 0..<rows { for column in 0..<columns { values.append(keep(row, column)) } }
        return Tensor.constant(values, shape: [rows, columns], op: "onnx mask", at: nil)
    }

    static func trilu(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        guard x.rank >= 2 else { throw node.error("needs rank 2 or more, not \(x.rank)") }
        let k = node.hasInput(1) ? Int(clamping: try node.integers(1).first ?? 0) : 0
        let upper = try node.int("upper", default: 1) != 0
        let mask = positionMask(x.shape) { row, column in upper ? column - row >= k : column - row <= k }
        let zero = Tensor.scalar(0, x.dtype)
        return [try node.output(x.replacing(with: zero, where: Tensor.apply(.logicalNot, mask)), try node.type(0))]
    }

    static func eyeLike(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        guard input.shape.count == 2 else { throw node.error("needs a 2-D input") }
        let k = try node.int("k", default: 0)
        var type = input.dataType
        if let number = try node.int("dtype") { type = try castTarget(node, number).0 }
        let (rows, columns) = (input.shape[0], input.shape[1])
        var values: [Int64] = []
        for row in 0..<rows { for column in 0..<columns { values.append(column - row == k ? 1 : 0) } }
        let eye = ONNXConstant(dataType: .int64, shape: [rows, columns], values: .integers(values)).cast(to: type)
        guard eye.count > ONNXConstant.hostElementLimit else { return [.constant(eye)] }
        do { return [.tensor(try eye.tensor(), type)] } catch { throw node.error(error.message, error.kind) }
    }

    /// `OneHot(indices, depth, [off, on])`: a new axis of `depth` positions, `on` at each index
    /// (negative indices count from the end), `off` elsewhere.
    static func oneHot(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let indices = try node.tensor(0)
        let depthValue = try node.constant(1).reals.first ?? 0
        // The output holds `depth` elements per index: beyond memory it could not exist anyway.
        guard depthValue >= 1, depthValue <= Double(Tensor.maximumByteCount / 4), depthValue < Double(Int32.max) else {
            throw node.error("depth \(depthValue) must be at least 1 and fit in memory")
        }
        let depth = Int(depthValue)
        let values = try node.tensor(2)
        guard values.scalarCount == 2 else { throw node.error("values must hold [off, on]") }
        let rank = indices.rank + 1
        let axis = try axis(node, try node.int("axis", default: -1), rank: rank)
        var positions = indices.dtype == .int32 ? indices : indices.converted(to: .int32)
        positions = positions.replacing(
            with: Tensor.binary(.add, positions, Tensor.scalar(Double(depth), .int32), at: nil), where: positions .< 0)
        let hot = Tensor.binary(
            .equal, positions.expandingShape(at: axis), Tensor.iota(depth, alongAxis: axis, rank: rank), at: nil)
        let flat = values.reshaped(to: [2])
        let off = flat.slice(alongAxis: 0, start: 0, count: 1).reshaped(to: [])
        let on = flat.slice(alongAxis: 0, start: 1, count: 1).reshaped(to: [])
        let shape = hot.shape
        let y = off.broadcastIfNeeded(to: shape, at: nil).replacing(
            with: on.broadcastIfNeeded(to: shape, at: nil), where: hot)
        return [try node.output(y, try node.type(2))]
    }

    /// `Hardmax`: 1 at the first maximum along the axis (from opset 13; before, over the input
    /// flattened to 2-D at `axis`), 0 elsewhere.
    static func hardmax(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        var work = x
        var axis: Int
        if node.opset >= 13 {
            axis = try Self.axis(node, try node.int("axis", default: -1), rank: x.rank)
        } else {
            var coerced = try node.int("axis", default: 1)
            if coerced < 0 { coerced += x.rank }
            guard (0...x.rank).contains(coerced) else { throw node.error("axis \(coerced) is out of range") }
            work = x.reshaped(to: [x.shape[..<coerced].reduce(1, *), x.shape[coerced...].reduce(1, *)])
            axis = 1
        }
        let size = work.shape[axis]
        let winner = work.argmax(alongAxis: axis, keepRank: true)
        let y = Tensor.binary(.equal, winner, Tensor.iota(size, alongAxis: axis, rank: work.rank), at: nil).converted(
            to: x.dtype
        ).reshaped(to: x.shape)
        return [try node.output(y, try node.type(0))]
    }

    /// The row-major offsets, in `shape`, of every position of `indexShape` with the coordinate
    /// along `axis` left out (what `GatherElements` and `ScatterElements` add the index to).
    static func offsetsWithoutAxis(_ node: ONNXNodeContext, _ shape: [Int], _ indexShape: [Int], axis: Int)
        throws(ModelError) -> Tensor
    {
        guard let offsets = Tensor.offsetsWithoutAxis(shape, indexShape, axis: axis) else {
            throw node.error("the data is too large to index in 32 bits")
        }
        return offsets
    }

    /// `ScatterElements` (reduction `none`): a scatter on the flattened data at positions from
    /// the indices; of two updates to one element the later one wins.
    static func scatterElements(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        guard try node.string("reduction", default: "none") == "none" else {
            throw node.error("ScatterElements with a reduction is not supported", .unsupportedOperators)
        }
        let data = try node.tensor(0)
        let updates = try node.tensor(2)
        let axis = try axis(node, try node.int("axis", default: 0), rank: data.rank)
        let indexShape = try node.value(1).shape
        guard indexShape.count == data.rank, updates.shape == indexShape else {
            throw node.error("indices and updates must have one shape, of the data's rank")
        }
        let indices = try wrappedIndices(node, index: 1, size: data.shape[axis]).converted(to: .int32)
        let stride = ONNXHost.strides(data.shape)[axis]
        let positions = Tensor.binary(
            .add, try offsetsWithoutAxis(node, data.shape, indexShape, axis: axis),
            Tensor.binary(.multiply, indices, Tensor.scalar(Double(stride), .int32), at: nil), at: nil)
        let count = indexShape.reduce(1, *)
        let flat = data.reshaped(to: [data.scalarCount])
            .replacing(with: updates.reshaped(to: [count]), atIndices: positions.reshaped(to: [count]), alongAxis: 0)
        return [try node.output(flat.reshaped(to: data.shape), try node.type(0))]
    }

    /// The flat positions of `GatherND`/`ScatterND` index tuples (last axis of `indices`) in
    /// `shape`, each followed by the `inner` positions of the slice it names: `[tuples · inner]`.
    private static func tuplePositions(_ node: ONNXNodeContext, _ shape: [Int], indexInput: Int) throws(ModelError) -> (
        Tensor, [Int], Int
    ) {
        let indexShape = try node.value(indexInput).shape
        guard let k = indexShape.last, k >= 1, k <= shape.count else {
            throw node.error("indices' last axis must be 1 to the data's rank")
        }
        let strides = ONNXHost.strides(shape)
        let inner = shape[k...].reduce(1, *)
        let tuples = indexShape.dropLast().reduce(1, *)
        var indices = try node.tensor(indexInput)
        indices = indices.dtype == .int32 ? indices : indices.converted(to: .int32)
        let sizes = Tensor.constant(shape[..<k].map { Int32($0) }, shape: [k], op: node.node.opType, at: nil)
        indices = indices.replacing(with: Tensor.binary(.add, indices, sizes, at: nil), where: indices .< 0)
        let weights = Tensor.constant(
            strides[..<k].map { Int32(clamping: $0) }, shape: [k], op: node.node.opType, at: nil)
        let base = Tensor.binary(.multiply, indices, weights, at: nil).sum(alongAxes: [indices.rank - 1]).reshaped(to: [
            tuples, 1,
        ])
        let within = Tensor.constant(
            (0..<Int32(clamping: inner)).map { $0 }, shape: [1, inner], op: node.node.opType, at: nil)
        let positions = Tensor.binary(.add, base, within, at: nil).reshaped(to: [tuples * inner])
        return (positions, Array(indexShape.dropLast()), inner)
    }

    static func gatherND(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        guard try node.int("batch_dims", default: 0) == 0 else {
            throw node.error("GatherND with batch_dims is not supported", .unsupportedOperators)
        }
        let data = try node.tensor(0)
        let (positions, outer, _) = try tuplePositions(node, data.shape, indexInput: 1)
        let k = try node.value(1).shape.last ?? 0
        let gathered = data.reshaped(to: [data.scalarCount]).gathering(atIndices: positions, alongAxis: 0)
        return [try node.output(gathered.reshaped(to: outer + Array(data.shape[k...])), try node.type(0))]
    }

    static func scatterND(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        guard try node.string("reduction", default: "none") == "none" else {
            throw node.error("ScatterND with a reduction is not supported", .unsupportedOperators)
        }
        let data = try node.tensor(0)
        let (positions, _, _) = try tuplePositions(node, data.shape, indexInput: 1)
        let updates = try node.tensor(2).reshaped(to: [positions.scalarCount])
        let flat = data.reshaped(to: [data.scalarCount]).replacing(with: updates, atIndices: positions, alongAxis: 0)
        return [try node.output(flat.reshaped(to: data.shape), try node.type(0))]
    }

    /// `NonZero`: the output's size depends on the data, which are evaluated now (the graph then
    /// holds for these data only and is not kept prepared).
    static func nonZero(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.constant(0)
        let strides = ONNXHost.strides(x.shape)
        let hits = x.booleans.indices.filter { x.booleans[$0] }
        var values: [Int64] = []
        for axis in x.shape.indices {
            for flat in hits { values.append(Int64((flat / strides[axis]) % x.shape[axis])) }
        }
        let shape = x.shape.isEmpty ? [0, hits.count] : [x.shape.count, hits.count]
        return [
            .constant(ONNXConstant(dataType: .int64, shape: shape, values: .integers(x.shape.isEmpty ? [] : values)))
        ]
    }

    static func depthToSpace(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        guard let block = try node.int("blocksize") else { throw node.error("needs blocksize", .invalidModel) }
        let columnRowDepth: Bool
        switch try node.string("mode", default: "DCR") {
        case "DCR": columnRowDepth = false
        case "CRD": columnRowDepth = true
        case let other: throw node.error("mode '\(other)' is neither DCR nor CRD", .invalidModel)
        }
        return [try node.output(x.depthToSpace(blockSize: block, columnRowDepth: columnRowDepth), try node.type(0))]
    }

    static func spaceToDepth(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        guard let block = try node.int("blocksize") else { throw node.error("needs blocksize", .invalidModel) }
        return [try node.output(x.spaceToDepth(blockSize: block), try node.type(0))]
    }
}
