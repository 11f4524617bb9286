/// An index expression for one axis of a ``Tensor`` subscript: an `Int` (which removes the axis)
/// or a range of `Int` (`1..<3`, `1...2`, `2...`, `..<2`, `...2`). Negative values count from the
/// end of the axis, as in NumPy.
public protocol TensorIndexExpression: Sendable {
    /// The slice of an axis of the given size, or the reason it does not fit.
    func resolve(axisSize: Int) -> TensorIndexResolution
}

/// What one subscript index selects on its axis.
public enum TensorIndexResolution: Sendable, Hashable {
    /// One position; the axis is removed from the result.
    case single(Int)
    /// A range of positions `start..<end`; the axis stays.
    case range(Int, Int)
    /// The index does not fit the axis.
    case outOfRange(String)
}

func normalizedPosition(_ value: Int, _ size: Int) -> Int { value < 0 ? value + size : value }

extension Int: TensorIndexExpression {
    /// One position; negative counts from the end.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        let position = normalizedPosition(self, axisSize)
        return (0..<axisSize).contains(position) ? .single(position) : .outOfRange("index \(self) is out of range for an axis of size \(axisSize)")
    }
}

func resolveRange(_ lower: Int, _ upper: Int, _ size: Int, _ text: String) -> TensorIndexResolution {
    let start = normalizedPosition(lower, size)
    let end = normalizedPosition(upper, size)
    return (0...size).contains(start) && (start...size).contains(end) ? .range(start, end) : .outOfRange("range \(text) is out of range for an axis of size \(size)")
}

extension Range: TensorIndexExpression where Bound == Int {
    /// The positions `lowerBound..<upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution { resolveRange(lowerBound, upperBound, axisSize, "\(self)") }
}

extension ClosedRange: TensorIndexExpression where Bound == Int {
    /// The positions `lowerBound...upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(lowerBound, normalizedPosition(upperBound, axisSize) + 1, axisSize, "\(self)")
    }
}

extension PartialRangeFrom: TensorIndexExpression where Bound == Int {
    /// The positions from `lowerBound` to the end.
    public func resolve(axisSize: Int) -> TensorIndexResolution { resolveRange(lowerBound, axisSize, axisSize, "\(lowerBound)...") }
}

extension PartialRangeUpTo: TensorIndexExpression where Bound == Int {
    /// The positions before `upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution { resolveRange(0, upperBound, axisSize, "..<\(upperBound)") }
}

extension PartialRangeThrough: TensorIndexExpression where Bound == Int {
    /// The positions through `upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(0, normalizedPosition(upperBound, axisSize) + 1, axisSize, "...\(upperBound)")
    }
}

extension Tensor {
    /// NumPy-like basic indexing of the leading axes: `x[1]`, `x[0, 1..<3]`, `x[..<2, -1]`.
    /// Unindexed trailing axes are kept whole. The result is a view.
    public subscript(_ indices: any TensorIndexExpression...) -> Tensor {
        index(leading: indices, trailing: [], location: nil)
    }

    /// Indexing of the trailing axes after an ellipsis: `x[..., 0]`, `x[..., 1..<3]`.
    public subscript(_ ellipsis: UnboundedRange, _ indices: any TensorIndexExpression...) -> Tensor {
        index(leading: [], trailing: indices, location: nil)
    }

    /// Indexing of leading and trailing axes around an ellipsis: `x[0, ..., 1]`.
    public subscript(_ first: any TensorIndexExpression, _ ellipsis: UnboundedRange, _ indices: any TensorIndexExpression...) -> Tensor {
        index(leading: [first], trailing: indices, location: nil)
    }

    func index(leading: [any TensorIndexExpression], trailing: [any TensorIndexExpression], location: SourceLocation?) -> Tensor {
        guard error == nil else { return self }
        guard leading.count + trailing.count <= rank else {
            return Tensor(failed: TensorError(.indexOutOfRange, op: "subscript", operandShapes: [shape], message: "\(leading.count + trailing.count) indices for a tensor of rank \(rank)", location: location))
        }
        let expressions: [(Int, any TensorIndexExpression)] =
            leading.enumerated().map { ($0.offset, $0.element) }
            + trailing.enumerated().map { (rank - trailing.count + $0.offset, $0.element) }
        var dimensions = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        var kept = shape
        var removed: [Int] = []
        for (axis, expression) in expressions {
            switch expression.resolve(axisSize: shape[axis]) {
            case .single(let position):
                dimensions[axis] = SliceDimension(start: position, count: 1, step: 1)
                removed.append(axis)
            case .range(let start, let end):
                dimensions[axis] = SliceDimension(start: start, count: end - start, step: 1)
                kept[axis] = end - start
            case .outOfRange(let message):
                return Tensor(failed: TensorError(.indexOutOfRange, op: "subscript", operandShapes: [shape], message: "axis \(axis): \(message)", location: location))
            }
        }
        let sliced = Tensor.record(.slice(dimensions), [self], at: location)
        guard !removed.isEmpty else { return sliced }
        return sliced.reshaped(to: kept.indices.filter { !removed.contains($0) }.map { kept[$0] })
    }

    /// The slices of `self` along `axis` picked by `Int32` indices: the result's shape is
    /// `shape[..<axis] + indices.shape + shape[(axis + 1)...]`. An index outside the axis makes
    /// materialization throw ``TensorError/Kind/indexOutOfRange``.
    public func gathering(atIndices indices: Tensor, alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("gather", [self, indices], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.gather, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }
}
