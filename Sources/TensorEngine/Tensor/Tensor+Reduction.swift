extension Tensor {
    /// Records a reduction along `axes` (every axis when `nil`), normalising them.
    func reduce(_ kind: OpKind, axes: [Int]?, keepRank: Bool, _ file: StaticString = #fileID, _ line: UInt = #line) -> Tensor {
        Tensor.record(kind.name, [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            let rank = signatures[0].shape.count
            let normalized = try axes.map { a throws(RuleViolation) in try Tensor.normalize(axes: a, rank: rank) } ?? Array(0..<rank)
            return .reduction(kind, axes: normalized, keepRank: keepRank)
        }
    }

    /// The sum of all elements (rank 0, or all-ones shape with `keepRank`).
    public func sum(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.sum, axes: nil, keepRank: keepRank, file, line)
    }
    /// The sum along the given axes.
    public func sum(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.sum, axes: axes, keepRank: keepRank, file, line)
    }
    /// The mean of all elements.
    public func mean(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.mean, axes: nil, keepRank: keepRank, file, line)
    }
    /// The mean along the given axes.
    public func mean(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.mean, axes: axes, keepRank: keepRank, file, line)
    }
    /// The largest element (NaN if any is NaN).
    public func max(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.max, axes: nil, keepRank: keepRank, file, line)
    }
    /// The largest element along the given axes.
    public func max(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.max, axes: axes, keepRank: keepRank, file, line)
    }
    /// The smallest element (NaN if any is NaN).
    public func min(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.min, axes: nil, keepRank: keepRank, file, line)
    }
    /// The smallest element along the given axes.
    public func min(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.min, axes: axes, keepRank: keepRank, file, line)
    }
    /// The product of all elements.
    public func product(keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.product, axes: nil, keepRank: keepRank, file, line)
    }
    /// The product along the given axes.
    public func product(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.product, axes: axes, keepRank: keepRank, file, line)
    }

    /// The population variance (NumPy's default, `ddof = 0`) along the given axes.
    public func variance(alongAxes axes: Int..., keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reduce(.variance, axes: axes, keepRank: keepRank, file, line)
    }

    func argReduce(_ kind: OpKind, axis: Int?, keepRank: Bool, _ file: StaticString, _ line: UInt) -> Tensor {
        let location = SourceLocation(file, line)
        let source = axis == nil ? flattened(file: file, line: line) : self
        return Tensor.record(kind.name, [source], at: location) { signatures throws(RuleViolation) in
            .reduction(kind, axes: [try Tensor.normalize(axis: axis ?? 0, rank: signatures[0].shape.count)], keepRank: keepRank)
        }
    }

    /// The flat (row-major) index of the largest element, as a rank-0 `Int32` tensor. The first
    /// maximum wins; a NaN counts as the maximum, as in NumPy.
    public func argmax(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        argReduce(.argmax, axis: nil, keepRank: false, file, line)
    }
    /// The index of the largest element along an axis, as `Int32`.
    public func argmax(alongAxis axis: Int, keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        argReduce(.argmax, axis: axis, keepRank: keepRank, file, line)
    }
    /// The flat index of the smallest element, as a rank-0 `Int32` tensor.
    public func argmin(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        argReduce(.argmin, axis: nil, keepRank: false, file, line)
    }
    /// The index of the smallest element along an axis, as `Int32`.
    public func argmin(alongAxis axis: Int, keepRank: Bool = false, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        argReduce(.argmin, axis: axis, keepRank: keepRank, file, line)
    }

    /// The running sum along an axis.
    public func cumulativeSum(alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("cumulativeSum", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.cumulativeSum, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
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
