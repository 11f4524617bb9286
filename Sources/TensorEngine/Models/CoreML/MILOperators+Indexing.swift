/// MIL's operations that place or pick elements by computed positions (`scatter*`, `gather_nd`,
/// `one_hot`) and `einsum`.
extension MILOperators {
    static let indexing: [String: MILOperator] = [
        "gather_nd": MILOperator { context throws(ModelError) in
            guard try context.int("batch_dims", default: 0) == 0 else {
                throw context.error("gather_nd with batch_dims is not supported", .unsupportedOperators)
            }
            let x = try context.tensor("x")
            var indices = try context.tensor("indices")
            if indices.dtype != .int32 { indices = indices.converted(to: .int32) }
            return [try context.output(x.gathering(atIndices: indices))]
        },
        // Slices of `data` along `axis` at `indices` (one per slice of `updates`) replaced or added to.
        "scatter": MILOperator { context throws(ModelError) in
            let data = try context.tensor("data")
            let axis = try axis(try context.int("axis", default: 0), rank: data.rank, context)
            let updates = try context.tensor("updates")
            let indices = wrapped(try context.tensor("indices"), size: data.shape[axis])
            guard indices.rank == 1, updates.rank == data.rank, updates.shape[axis] == indices.shape[0] else {
                throw context.error("updates \(describe(updates.shape)) do not match \(describe(indices.shape)) indices")
            }
            var shape = [Int](repeating: 1, count: data.rank)
            shape[axis] = indices.shape[0]
            let elementIndices = indices.reshaped(to: shape).broadcast(to: updates.shape)
            return [try context.output(try scattered(data, elementIndices, updates, axis: axis, context))]
        },
        "scatter_along_axis": MILOperator { context throws(ModelError) in
            let data = try context.tensor("data")
            let axis = try axis(try context.int("axis", default: 0), rank: data.rank, context)
            let indices = wrapped(try context.tensor("indices"), size: data.shape[axis])
            let updates = try context.tensor("updates")
            return [try context.output(try scattered(data, indices, updates, axis: axis, context))]
        },
        // `data` with the elements or slices `indices` (`[..., K]`) name replaced or added to.
        "scatter_nd": MILOperator { context throws(ModelError) in
            let data = try context.tensor("data")
            var indices = try context.tensor("indices")
            let updates = try context.tensor("updates")
            guard let depth = indices.shape.last, depth >= 1, depth <= data.rank else {
                throw context.error("indices \(describe(indices.shape)) do not index data \(describe(data.shape))")
            }
            if indices.dtype != .int32 { indices = indices.converted(to: .int32) }
            let leading = Array(data.shape[..<depth])
            let trailing = Array(data.shape[depth...])
            let count = try elementCount(leading, context)
            guard count <= Int(Int32.max) else { throw context.error("data is too large for 32-bit positions") }
            let strides = Tensor.constant(
                ONNXHost.strides(leading).map { Int32(clamping: $0) }, shape: [depth], op: "scatter_nd", at: nil)
            let positions = Tensor.binary(.multiply, indices, strides, at: nil).sum(alongAxes: [indices.rank - 1])
            let rows = positions.reshaped(to: [positions.scalarCount])
            let slices = updates.reshaped(to: [rows.scalarCount] + trailing)
            let flat = data.reshaped(to: [count] + trailing)
            let elementIndices = rows.reshaped(to: [rows.scalarCount] + trailing.map { _ in 1 }).broadcast(
                to: slices.shape)
            let result = try scattered(flat, elementIndices, slices, axis: 0, context)
            return [try context.output(result.reshaped(to: data.shape))]
        },
        "one_hot": MILOperator { context throws(ModelError) in
            var indices = try context.tensor("indices")
            if indices.dtype != .int32 { indices = indices.converted(to: .int32) }
            let depth = try context.int("one_hot_vector_size")
            guard depth >= 0, depth <= Int(Int32.max) else { throw context.error("one-hot size \(depth)") }
            let rank = indices.rank + 1
            let axis = try axis(try context.int("axis", default: -1), rank: rank, context)
            let positions = Tensor.iota(depth, alongAxis: axis, rank: rank)
            let hits = Tensor.binary(.equal, indices.expandingShape(at: axis), positions, at: nil)
            let on = try context.float("on_value", default: 1)
            let off = try context.float("off_value", default: 0)
            let type = context.declaredType()?.dataType.importedType?.engineType ?? .float32
            let values = Tensor.scalar(Double(off), type).broadcast(to: hits.shape)
            return [try context.output(values.replacing(with: Tensor.scalar(Double(on), type), where: hits))]
        },
        "einsum": MILOperator { context throws(ModelError) in
            let operands = try context.values("values").map { value throws(ModelError) in
                try context.tensor(of: value, "values")
            }
            switch Tensor.einsum(try context.string("equation"), operands) {
            case .success(let result): return [try context.output(result)]
            case .failure(let failure): throw context.error(failure.message, failure.kind)
            }
        },
        "local_response_norm": unary { x, context throws(ModelError) in
            let size = try context.int("size")
            guard x.rank >= 3, size > 0, size <= 2 * x.shape[1] + 1 else {
                throw context.error("needs [N, C, ...] and a size from 1 to 2C + 1")
            }
            return x.localResponseNormalized(
                size: size, alpha: try context.float("alpha", default: 1e-4),
                beta: try context.float("beta", default: 0.75), bias: try context.float("k", default: 1))
        },
    ]

    /// `data` with `updates` written (mode `update`: of two writes to one element the later wins)
    /// or added (mode `add`: every update counts, repeated indices included) at `indices` along
    /// `axis`, element by element.
    private static func scattered(
        _ data: Tensor, _ indices: Tensor, _ updates: Tensor, axis: Int, _ context: MILOperationContext
    ) throws(ModelError) -> Tensor {
        switch try context.string("mode", default: "add") {
        case "update":
            return data.replacing(with: updates, atIndices: indices, alongAxis: axis)
        case "add":
            // Each position of the axis gathers the updates aimed at it: a one-hot along a new
            // axis after `axis`, summed over the updates' own positions along `axis`.
            let size = data.shape[axis]
            let hits = Tensor.binary(
                .equal, indices.expandingShape(at: axis + 1), Tensor.iota(size, alongAxis: axis + 1, rank: data.rank + 1),
                at: nil)
            let aimed = Tensor.binary(.multiply, hits.converted(to: updates.dtype), updates.expandingShape(at: axis + 1), at: nil)
            return data + aimed.sum(alongAxes: [axis])
        case let other:
            throw context.error("scatter mode '\(other)' is not supported (update and add are)", .unsupportedOperators)
        }
    }
}
