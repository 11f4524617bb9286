/// MIL's tensor operations: shapes, slices, joins, gathers and fills (views and data movement).
extension MILOperators {
    static let tensorOperations: [String: MILOperator] = [
        "reshape": unary { x, context throws(ModelError) in
            // 0 copies the input's size at that position, -1 is inferred.
            let shape = try context.ints("shape").enumerated().map { index, size in
                size == 0 && index < x.rank ? x.shape[index] : size
            }
            return x.reshaped(to: shape)
        },
        "transpose": unary { x, context throws(ModelError) in
            x.transposed(permutation: try axes(try context.ints("perm"), rank: x.rank, context))
        },
        "expand_dims": unary { x, context throws(ModelError) in
            let rank = x.rank + (try context.ints("axes")).count
            return x.expandingShape(at: try axes(try context.ints("axes"), rank: rank, context).sorted())
        },
        "squeeze": unary { x, context throws(ModelError) in
            guard let given = try context.optionalInts("axes") else { return x.squeezingShape() }
            return x.squeezingShape(at: try axes(given, rank: x.rank, context))
        },
        "flatten2d": unary { x, context throws(ModelError) in
            let split = try axis(try context.int("axis", default: 1), rank: x.rank + 1, context)
            return x.reshaped(to: [x.shape[..<split].reduce(1, *), x.shape[split...].reduce(1, *)])
        },
        "tile": unary { x, context throws(ModelError) in x.tiled(multiples: try context.ints("reps")) },
        "reverse": unary { x, context throws(ModelError) in
            x.reversed(
                alongAxes: try axes(try context.optionalInts("axes") ?? Array(0..<x.rank), rank: x.rank, context))
        },
        "slice_by_index": unary(sliceByIndex),
        "slice_update": MILOperator(lower: sliceUpdate),
        "slice_by_size": unary { x, context throws(ModelError) in
            let begin = try context.ints("begin")
            let size = try context.ints("size")
            guard begin.count == x.rank, size.count == x.rank else {
                throw context.error("begin and size need \(x.rank) values each")
            }
            var result = x
            for axis in 0..<x.rank {
                let start = begin[axis] < 0 ? begin[axis] + x.shape[axis] : begin[axis]
                let count = size[axis] == -1 ? x.shape[axis] - start : size[axis]
                guard start >= 0, count >= 0, start <= x.shape[axis], count <= x.shape[axis] - start else {
                    throw context.error("begin \(begin) and size \(size) leave the input \(describe(x.shape))")
                }
                result = result.slice(alongAxis: axis, start: start, count: count)
            }
            return result
        },
        "concat": MILOperator { context throws(ModelError) in
            let parts = try context.values("values").map { value throws(ModelError) in
                try context.tensor(of: value, "values")
            }
            guard let first = parts.first else { throw context.error("concat needs values") }
            let axis = try axis(try context.int("axis"), rank: first.rank, context)
            if try context.bool("interleave", default: false) {
                let stacked = Tensor(stacking: parts, alongAxis: axis + 1)
                var shape = first.shape
                shape[axis] *= parts.count
                return [try context.output(stacked.reshaped(to: shape))]
            }
            return [try context.output(Tensor(concatenating: parts, alongAxis: axis))]
        },
        "stack": MILOperator { context throws(ModelError) in
            let parts = try context.values("values").map { value throws(ModelError) in
                try context.tensor(of: value, "values")
            }
            let rank = (parts.first?.rank ?? 0) + 1
            return [
                try context.output(
                    Tensor(stacking: parts, alongAxis: try axis(try context.int("axis"), rank: rank, context)))
            ]
        },
        "split": MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axis = try axis(try context.int("axis"), rank: x.rank, context)
            let parts: [Tensor]
            if let sizes = try context.optionalInts("split_sizes") {
                parts = x.split(sizes: sizes, alongAxis: axis)
            } else {
                let count = try context.int("num_splits")
                guard count > 0 else { throw context.error("num_splits \(count) must be positive") }
                let size = (x.shape[axis] + count - 1) / count
                let sizes = (0..<count).map { Swift.min(size, Swift.max(x.shape[axis] - $0 * size, 0)) }
                parts = x.split(sizes: sizes, alongAxis: axis)
            }
            return try context.outputs(parts)
        },
        "gather": MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axis = try axis(try context.int("axis", default: 0), rank: x.rank, context)
            guard try context.int("batch_dims", default: 0) == 0 else {
                throw context.error("gather with batch_dims is not supported", .unsupportedOperators)
            }
            let indices = wrapped(try context.tensor("indices"), size: x.shape[axis])
            return [try context.output(x.gathering(atIndices: indices, alongAxis: axis))]
        },
        "gather_along_axis": MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axis = try axis(try context.int("axis", default: 0), rank: x.rank, context)
            let indices = wrapped(try context.tensor("indices"), size: x.shape[axis])
            guard let result = x.gatheringElements(atIndices: indices, alongAxis: axis) else {
                throw context.error("indices \(describe(indices.shape)) do not fit data \(describe(x.shape))")
            }
            return [try context.output(result)]
        },
        "pad": unary { x, context throws(ModelError) in
            let pads = try context.ints("pad")
            guard pads.count % 2 == 0, pads.count / 2 <= x.rank else {
                throw context.error("pad holds \(pads.count) values for a rank-\(x.rank) input")
            }
            let padded = pads.count / 2
            var sizes = [(before: Int, after: Int)](repeating: (0, 0), count: x.rank - padded)
            for axis in 0..<padded { sizes.append((pads[2 * axis], pads[2 * axis + 1])) }
            switch try context.string("mode", default: "constant") {
            case "constant": return x.padded(forSizes: sizes, with: try context.float("constant_val", default: 0))
            case "reflect": return x.padded(forSizes: sizes, mode: .reflection)
            case "replicate": return ONNXOperators.edgePadded(x, sizes)
            case let other: throw context.error("pad mode '\(other)' is not one MIL defines", .invalidModel)
            }
        },
        "shape": unary { x, _ in
            Tensor.constant(x.shape.map { Int32(clamping: $0) }, shape: [x.rank], op: "shape", at: nil)
        },
        "fill": MILOperator { context throws(ModelError) in
            let shape = try context.ints("shape")
            let value = try context.tensor("value")
            return [try context.output(value.reshaped(to: []).broadcast(to: shape).contiguousCopy())]
        },
        "range_1d": MILOperator { context throws(ModelError) in
            let start = try context.constant("start").reals[0]
            let end = try context.constant("end").reals[0]
            let step = try context.constant("step").reals[0]
            guard step != 0, step.isFinite, start.isFinite, end.isFinite else {
                throw context.error("range from \(start) to \(end) by \(step) is not finite")
            }
            let length = ((end - start) / step).rounded(.up)
            guard length <= Double(Int32.max) else { throw context.error("a range of \(length) elements is too long") }
            let count = Swift.max(0, Int(length))
            let values = (0..<count).map { start + Double($0) * step }
            let isInteger = context.declaredType()?.dataType == .int32
            let tensor =
                isInteger
                ? Tensor.constant(
                    values.map { Int32(clamping: Int64(clampingFinite: $0)) }, shape: [count], op: "range", at: nil)
                : Tensor.constant(values.map { Float($0) }, shape: [count], op: "range", at: nil)
            return [try context.output(tensor)]
        },
        "band_part": unary { x, context throws(ModelError) in
            x.bandPart(
                lowerBandCount: try context.int("lower", default: -1),
                upperBandCount: try context.int("upper", default: -1))
        },
        "depth_to_space": unary { x, context throws(ModelError) in
            x.depthToSpace(blockSize: try context.int("block_size"))
        },
        "space_to_depth": unary { x, context throws(ModelError) in
            x.spaceToDepth(blockSize: try context.int("block_size"))
        },
        "pixel_shuffle": unary { x, context throws(ModelError) in
            x.depthToSpace(blockSize: try context.int("upscale_factor"), columnRowDepth: true)
        },
    ]

    /// `slice_by_index`: `begin`, `end` and `stride` per axis, with masks that take an axis from
    /// its start or to its end, and `squeeze_mask` dropping axes.
    private static func sliceByIndex(_ x: Tensor, _ context: MILOperationContext) throws(ModelError) -> Tensor {
        let rank = x.rank
        let begin = try context.ints("begin")
        let end = try context.ints("end")
        let strides = try context.optionalInts("stride") ?? [Int](repeating: 1, count: rank)
        let beginMask = try context.bools("begin_mask") ?? [Bool](repeating: false, count: rank)
        let endMask = try context.bools("end_mask") ?? [Bool](repeating: false, count: rank)
        let squeezeMask = try context.bools("squeeze_mask") ?? [Bool](repeating: false, count: rank)
        guard
            [begin.count, end.count, strides.count, beginMask.count, endMask.count, squeezeMask.count]
                .allSatisfy({ $0 == rank })
        else { throw context.error("slice parameters need \(rank) values each") }
        var dimensions: [SliceDimension] = []
        var squeezed: [Int] = []
        for axis in 0..<rank {
            let size = x.shape[axis]
            let step = strides[axis]
            guard step != 0, step != Int.min else { throw context.error("stride \(step) on axis \(axis)") }
            func clamp(_ index: Int, _ low: Int, _ high: Int) -> Int {
                Swift.min(Swift.max(index < 0 ? index + size : index, low), high)
            }
            if squeezeMask[axis] {
                let index = begin[axis] < 0 ? begin[axis] + size : begin[axis]
                guard (0..<size).contains(index) else {
                    throw context.error("index \(begin[axis]) is outside axis \(axis)")
                }
                dimensions.append(SliceDimension(start: index, count: 1, step: 1))
                squeezed.append(axis)
                continue
            }
            let start: Int
            let stop: Int
            if step > 0 {
                start = beginMask[axis] ? 0 : clamp(begin[axis], 0, size)
                stop = endMask[axis] ? size : clamp(end[axis], 0, size)
            } else {
                start = beginMask[axis] ? size - 1 : clamp(begin[axis], -1, size - 1)
                stop = endMask[axis] ? -1 : clamp(end[axis], -1, size - 1)
            }
            let span = step > 0 ? stop - start : start - stop
            let count = span <= 0 ? 0 : (span + Swift.abs(step) - 1) / Swift.abs(step)
            dimensions.append(SliceDimension(start: count == 0 ? 0 : start, count: count, step: step))
        }
        let sliced = Tensor.record(.slice(dimensions), [x], at: nil)
        return squeezed.isEmpty ? sliced : sliced.squeezingShape(at: squeezed)
    }

    /// `slice_update`: `x` with the slice `slice_by_index` would read replaced by `update`. The
    /// region's shape is the update's (squeezed axes put back); `begin` may be computed from data
    /// (a cache written at a position): the region's flat positions are its offsets from its first
    /// element plus that element's position, computed by the graph.
    private static func sliceUpdate(_ context: MILOperationContext) throws(ModelError) -> [MILValue] {
        let x = try context.tensor("x")
        let update = try context.tensor("update")
        let rank = x.rank
        let steps = try context.optionalInts("stride") ?? [Int](repeating: 1, count: rank)
        let beginMask = try context.bools("begin_mask") ?? [Bool](repeating: false, count: rank)
        let squeezeMask = try context.bools("squeeze_mask") ?? [Bool](repeating: false, count: rank)
        guard steps.count == rank, beginMask.count == rank, squeezeMask.count == rank, steps.allSatisfy({ $0 > 0 })
        else { throw context.error("slice_update needs \(rank) positive strides and masks", .unsupportedOperators) }
        var region = update.shape
        for axis in 0..<rank where squeezeMask[axis] && axis <= region.count { region.insert(1, at: axis) }
        guard region.count == rank,
            (0..<rank).allSatisfy({ region[$0] == 0 || (region[$0] - 1) / steps[$0] < x.shape[$0] })
        else {
            throw context.error("an update of \(describe(update.shape)) does not fit a slice of \(describe(x.shape))")
        }
        let strides = ONNXHost.strides(x.shape)
        var begin = try context.tensor("begin")
        if begin.dtype != .int32 { begin = begin.converted(to: .int32) }
        let sizes = Tensor.constant(x.shape.map { Int32(clamping: $0) }, shape: [rank], op: "slice_update", at: nil)
        begin = begin.replacing(with: Tensor.binary(.add, begin, sizes, at: nil), where: begin .< 0)
        let kept = Tensor.constant(beginMask.map { $0 ? Int32(0) : 1 }, shape: [rank], op: "slice_update", at: nil)
        let elementStrides = Tensor.constant(
            strides.map { Int32(clamping: $0) }, shape: [rank], op: "slice_update", at: nil)
        let first = Tensor.binary(.multiply, Tensor.binary(.multiply, begin, kept, at: nil), elementStrides, at: nil)
            .sum(alongAxes: [0])
        let count = region.reduce(1, *)
        let regionStrides = ONNXHost.strides(region)
        var offsets = [Int32](repeating: 0, count: count)
        for flat in 0..<count {
            var offset = 0
            for axis in 0..<rank {
                let index = (flat / regionStrides[axis]) % region[axis]
                let (stepped, overflow) = index.multipliedReportingOverflow(by: steps[axis])
                guard !overflow, stepped < x.shape[axis] else {
                    throw context.error("the update runs past axis \(axis)")
                }
                offset += stepped * strides[axis]
            }
            guard let exact = Int32(exactly: offset) else {
                throw context.error("the input is too large for 32-bit positions")
            }
            offsets[flat] = exact
        }
        let positions = Tensor.binary(
            .add, Tensor.constant(offsets, shape: [count], op: "slice_update", at: nil), first, at: nil)
        let result = x.reshaped(to: [x.scalarCount])
            .replacing(with: update.reshaped(to: [count]), atIndices: positions, alongAxis: 0)
        return [try context.output(result.reshaped(to: x.shape))]
    }

    /// Negative indices counted from the end of an axis of `size`.
    static func wrapped(_ indices: Tensor, size: Int) -> Tensor {
        let typed = indices.dtype == .int32 ? indices : indices.converted(to: .int32)
        let sized = Tensor.binary(.add, typed, Tensor.scalar(Double(size), .int32), at: nil)
        return typed.replacing(with: sized, where: typed .< 0)
    }
}

extension Tensor {
    /// A contiguous copy of the tensor (a broadcast materialized).
    func contiguousCopy() -> Tensor { Tensor.record(Op(.contiguous), [self], at: nil) }

    /// `out[i][j] = self[indices[i][j]][j]` along `axis` (ONNX's `GatherElements`, MIL's
    /// `gather_along_axis`): a gather on the flattened data at positions computed from the
    /// indices (non-negative `Int32`); `nil` when the ranks differ or positions pass `Int32`.
    func gatheringElements(atIndices indices: Tensor, alongAxis axis: Int) -> Tensor? {
        guard indices.rank == rank, axis >= 0, axis < rank else { return nil }
        guard let base = Tensor.offsetsWithoutAxis(shape, indices.shape, axis: axis) else { return nil }
        let stride = Tensor.scalar(Double(ONNXHost.strides(shape)[axis]), .int32)
        let positions = Tensor.binary(
            .add, base, Tensor.binary(.multiply, indices.converted(to: .int32), stride, at: nil), at: nil)
        return reshaped(to: [scalarCount]).gathering(atIndices: positions, alongAxis: 0)
    }

    /// The row-major offsets, in `shape`, of every position of `indexShape` with the coordinate
    /// along `axis` left out (what element gathers and scatters add the index to); `nil` when an
    /// offset passes `Int32`.
    static func offsetsWithoutAxis(_ shape: [Int], _ indexShape: [Int], axis: Int) -> Tensor? {
        let strides = ONNXHost.strides(shape)
        let indexStrides = ONNXHost.strides(indexShape)
        let count = indexShape.reduce(1, *)
        var offsets = [Int32](repeating: 0, count: count)
        for flat in 0..<count {
            var offset = 0
            for dimension in indexShape.indices where dimension != axis {
                offset += (flat / indexStrides[dimension]) % indexShape[dimension] * strides[dimension]
            }
            guard let exact = Int32(exactly: offset) else { return nil }
            offsets[flat] = exact
        }
        return Tensor.constant(offsets, shape: indexShape, op: "element offsets", at: nil)
    }
}
