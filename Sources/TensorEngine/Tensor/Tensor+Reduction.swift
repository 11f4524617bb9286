extension Tensor {
    /// Records a reduction along `axes` (every axis when `nil`), normalising them.
    func reduce(_ kind: OpKind, axes: [Int]?, keepRank: Bool, _ file: StaticString = #fileID, _ line: UInt = #line)
        -> Tensor
    {
        Tensor.record(kind.name, [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            let rank = signatures[0].shape.count
            let normalized =
                try axes.map { a throws(RuleViolation) in try Tensor.normalize(axes: a, rank: rank) } ?? Array(0..<rank)
            return .reduction(kind, axes: normalized, keepRank: keepRank)
        }
    }

    /// The sum of all elements (rank 0, or all-ones shape with `keepRank`).
    public func sum(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.sum, axes: nil, keepRank: keepRank, file, line)
    }
    /// The sum along the given axes.
    public func sum(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.sum, axes: axes, keepRank: keepRank, file, line)
    }
    /// The mean of all elements.
    public func mean(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.mean, axes: nil, keepRank: keepRank, file, line)
    }
    /// The mean along the given axes.
    public func mean(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.mean, axes: axes, keepRank: keepRank, file, line)
    }
    /// The largest element (NaN if any is NaN).
    public func max(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.max, axes: nil, keepRank: keepRank, file, line)
    }
    /// The largest element along the given axes.
    public func max(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.max, axes: axes, keepRank: keepRank, file, line)
    }
    /// The smallest element (NaN if any is NaN).
    public func min(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.min, axes: nil, keepRank: keepRank, file, line)
    }
    /// The smallest element along the given axes.
    public func min(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.min, axes: axes, keepRank: keepRank, file, line)
    }
    /// The product of all elements.
    public func product(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.product, axes: nil, keepRank: keepRank, file, line)
    }
    /// The product along the given axes.
    public func product(
        alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        reduce(.product, axes: axes, keepRank: keepRank, file, line)
    }

    /// The sum along the given axes.
    public func sum(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.sum, axes: axes, keepRank: keepRank, file, line)
    }
    /// The mean along the given axes.
    public func mean(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.mean, axes: axes, keepRank: keepRank, file, line)
    }
    /// The largest element along the given axes.
    public func max(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.max, axes: axes, keepRank: keepRank, file, line)
    }
    /// The smallest element along the given axes.
    public func min(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.min, axes: axes, keepRank: keepRank, file, line)
    }
    /// The product along the given axes.
    public func product(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.product, axes: axes, keepRank: keepRank, file, line)
    }
    /// The population variance along the given axes.
    public func variance(
        alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        reduce(.variance, axes: axes, keepRank: keepRank, file, line)
    }

    /// Whether every element of a `Bool` tensor is `true` (`true` for an empty tensor).
    public func all(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.all, axes: nil, keepRank: keepRank, file, line)
    }
    /// Whether every element along the given axes is `true`.
    public func all(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.all, axes: axes, keepRank: keepRank, file, line)
    }
    /// Whether every element along the given axes is `true`.
    public func all(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.all, axes: axes, keepRank: keepRank, file, line)
    }
    /// Whether some element of a `Bool` tensor is `true` (`false` for an empty tensor).
    public func any(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.any, axes: nil, keepRank: keepRank, file, line)
    }
    /// Whether some element along the given axes is `true`.
    public func any(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.any, axes: axes, keepRank: keepRank, file, line)
    }
    /// Whether some element along the given axes is `true`.
    public func any(alongAxes axes: [Int], keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        reduce(.any, axes: axes, keepRank: keepRank, file, line)
    }

    /// The population variance (NumPy's default, `ddof = 0`) along the given axes.
    public func variance(
        alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        reduce(.variance, axes: axes, keepRank: keepRank, file, line)
    }

    func argReduce(_ kind: OpKind, axis: Int?, keepRank: Bool, _ file: StaticString, _ line: UInt) -> Tensor {
        let location = SourceLocation(file, line)
        let source = axis == nil ? flattened(file: file, line: line) : self
        return Tensor.record(kind.name, [source], at: location) { signatures throws(RuleViolation) in
            .reduction(
                kind, axes: [try Tensor.normalize(axis: axis ?? 0, rank: signatures[0].shape.count)], keepRank: keepRank
            )
        }
    }

    /// The flat (row-major) index of the largest element, as a rank-0 `Int32` tensor. The first
    /// maximum wins; a NaN counts as the maximum, as in NumPy.
    public func argmax(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        argReduce(.argmax, axis: nil, keepRank: false, file, line)
    }
    /// The index of the largest element along an axis, as `Int32`.
    public func argmax(alongAxis axis: Int, keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        argReduce(.argmax, axis: axis, keepRank: keepRank, file, line)
    }
    /// The flat index of the smallest element, as a rank-0 `Int32` tensor.
    public func argmin(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        argReduce(.argmin, axis: nil, keepRank: false, file, line)
    }
    /// The index of the smallest element along an axis, as `Int32`.
    public func argmin(alongAxis axis: Int, keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        argReduce(.argmin, axis: axis, keepRank: keepRank, file, line)
    }

    /// The running sum along an axis.
    public func cumulativeSum(alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("cumulativeSum", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.cumulativeSum, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }

    /// The running product along an axis: element `i` is the product of elements `0...i`.
    public func cumulativeProduct(alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("cumulativeProduct", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.cumulativeProduct, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }

    /// The `Int32` positions that sort each line along an axis, ascending by default; equal
    /// values keep their order (a stable sort). NaN sorts before every number in either order.
    ///
    /// ```swift
    /// Tensor([3.0, 1.0, 2.0]).argsort()                        // [1, 2, 0]
    /// Tensor([3.0, 1.0, 2.0]).argsort(descendingOrder: true)   // [0, 2, 1]
    /// ```
    public func argsort(
        alongAxis axis: Int = -1, descendingOrder: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        if error != nil { return self }
        let last: Int
        do throws(RuleViolation) { last = try Tensor.normalize(axis: axis, rank: Swift.max(rank, 1)) } catch {
            return Tensor(
                failed: TensorError(
                    error.kind, op: "argsort", operandShapes: [shape], message: error.message, location: location))
        }
        guard rank > 0 else { return Tensor.constant([Int32(0)], shape: [], op: "argsort", at: location) }
        // The axis moved last (topK's axis), sorted as a top-k of the whole line, moved back.
        var order = Array(0..<rank)
        order.swapAt(last, rank - 1)
        let lines = order == Array(0..<rank) ? self : transposed(permutation: order, file: file, line: line)
        let keys: Tensor
        switch dtype {
        case .float32, .float16, .float64: keys = descendingOrder ? lines : -lines
        // ~x, written without overflow (-Int32.min wraps to itself, minus 1 to Int32.max): it
        // reverses the order of every Int32.
        case .int32, .int64: keys = descendingOrder ? lines : -lines - Int32(1)
        case .bool:
            let integers = lines.cast(to: Int32.self, file: file, line: line)
            keys = descendingOrder ? integers : -integers
        }
        let indices = keys.topK(shape[last], file: file, line: line).indices
        return order == Array(0..<rank) ? indices : indices.transposed(permutation: order, file: file, line: line)
    }

    /// The `k` largest elements along the last axis in descending order, and their `Int32`
    /// indices. Equal values keep their order (lower index first); NaN ranks above everything.
    public func topK(_ k: Int, file: StaticString = #fileID, line: UInt = #line) -> (values: Tensor, indices: Tensor) {
        let location = SourceLocation(file, line)
        return (
            Tensor.record(.topK(k: k, output: .values), [self], at: location),
            Tensor.record(.topK(k: k, output: .indices), [self], at: location)
        )
    }
}
