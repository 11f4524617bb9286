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
    /// `count` positions from `start`, `step` apart (backwards for a negative step); the axis stays.
    case strided(start: Int, count: Int, step: Int)
    /// A new axis of size 1 here; no axis of the tensor is consumed.
    case newAxis
    /// The axis removed, which must have size 1.
    case squeeze
    /// The index does not fit the axis.
    case outOfRange(String)
}

/// Core ML's name for an index expression (`MLTensorRangeExpression`).
public typealias TensorRangeExpression = TensorIndexExpression

/// The index forms beyond integers and ranges, written as Core ML's are: `x[.newAxis, 0]`,
/// `x[.range(0..<8, stride: 2)]`, `x[.squeezeAxis, ...]`, `x[.fillAll, 1]`.
public struct TensorAxisIndex: TensorIndexExpression, Hashable {
    fileprivate enum Form: Hashable {
        case newAxis, squeezeAxis, fillAll
        case index(Int)
        case strided(lower: Int, upper: Int?, stride: Int)
    }
    fileprivate let form: Form

    /// What the index selects on an axis of the given size.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        switch form {
        case .newAxis: return .newAxis
        case .squeezeAxis:
            return axisSize == 1 ? .squeeze : .outOfRange("an axis of size \(axisSize) cannot be squeezed")
        case .fillAll: return .range(0, axisSize)
        case .index(let position): return position.resolve(axisSize: axisSize)
        case .strided(let lower, let upper, let stride):
            guard stride != 0 else { return .outOfRange("a stride of 0 selects nothing") }
            let text = "\(lower)..<\(upper.map(String.init) ?? "end") by \(stride)"
            guard case .range(let start, let end) = resolveRange(lower, upper ?? axisSize, axisSize, text) else {
                return .outOfRange("range \(text) is out of range for an axis of size \(axisSize)")
            }
            // In unsigned arithmetic: the magnitude of Int.min does not fit an Int.
            let count = end > start ? Int((UInt(end - start) - 1) / stride.magnitude + 1) : 0
            // Backwards: the same positions' pattern from the range's last element down.
            return stride > 0
                ? .strided(start: start, count: count, step: stride)
                : .strided(start: end - 1, count: count, step: stride)
        }
    }
}

extension TensorIndexExpression where Self == TensorAxisIndex {
    /// A new axis of size 1.
    public static var newAxis: TensorAxisIndex { TensorAxisIndex(form: .newAxis) }
    /// The axis removed; it must have size 1.
    public static var squeezeAxis: TensorAxisIndex { TensorAxisIndex(form: .squeezeAxis) }
    /// The whole axis.
    public static var fillAll: TensorAxisIndex { TensorAxisIndex(form: .fillAll) }
    /// One position (negative counts from the end); the axis is removed.
    public static func index(_ position: Int) -> TensorAxisIndex { TensorAxisIndex(form: .index(position)) }
    /// Every `stride`-th position of `range`, backwards from its last position when `stride` is
    /// negative.
    public static func range(_ range: Range<Int>, stride: Int) -> TensorAxisIndex {
        TensorAxisIndex(form: .strided(lower: range.lowerBound, upper: range.upperBound, stride: stride))
    }
    /// Every `stride`-th position of a closed range.
    public static func range(_ range: ClosedRange<Int>, stride: Int) -> TensorAxisIndex {
        let upper = range.upperBound == -1 ? nil : range.upperBound + 1
        return TensorAxisIndex(form: .strided(lower: range.lowerBound, upper: upper, stride: stride))
    }
    /// Every `stride`-th position from `range.lowerBound` to the end of the axis.
    public static func range(_ range: PartialRangeFrom<Int>, stride: Int) -> TensorAxisIndex {
        TensorAxisIndex(form: .strided(lower: range.lowerBound, upper: nil, stride: stride))
    }
    /// Every `stride`-th position of the whole axis (`stride: -1` reverses it).
    public static func range(_ range: UnboundedRange, stride: Int) -> TensorAxisIndex {
        TensorAxisIndex(form: .strided(lower: 0, upper: nil, stride: stride))
    }
}

func normalizedPosition(_ value: Int, _ size: Int) -> Int { value < 0 ? value + size : value }

extension Int: TensorIndexExpression {
    /// One position; negative counts from the end.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        let position = normalizedPosition(self, axisSize)
        return (0..<axisSize).contains(position)
            ? .single(position) : .outOfRange("index \(self) is out of range for an axis of size \(axisSize)")
    }
}

func resolveRange(_ lower: Int, _ upper: Int, _ size: Int, _ text: String) -> TensorIndexResolution {
    let start = normalizedPosition(lower, size)
    let end = normalizedPosition(upper, size)
    return (0...size).contains(start) && (start...size).contains(end)
        ? .range(start, end) : .outOfRange("range \(text) is out of range for an axis of size \(size)")
}

extension Range: TensorIndexExpression where Bound == Int {
    /// The positions `lowerBound..<upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(lowerBound, upperBound, axisSize, "\(self)")
    }
}

extension ClosedRange: TensorIndexExpression where Bound == Int {
    /// The positions `lowerBound...upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(lowerBound, normalizedPosition(upperBound, axisSize) + 1, axisSize, "\(self)")
    }
}

extension PartialRangeFrom: TensorIndexExpression where Bound == Int {
    /// The positions from `lowerBound` to the end.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(lowerBound, axisSize, axisSize, "\(lowerBound)...")
    }
}

extension PartialRangeUpTo: TensorIndexExpression where Bound == Int {
    /// The positions before `upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(0, upperBound, axisSize, "..<\(upperBound)")
    }
}

extension PartialRangeThrough: TensorIndexExpression where Bound == Int {
    /// The positions through `upperBound`.
    public func resolve(axisSize: Int) -> TensorIndexResolution {
        resolveRange(0, normalizedPosition(upperBound, axisSize) + 1, axisSize, "...\(upperBound)")
    }
}

extension Tensor {
    /// NumPy-like basic indexing of the leading axes: `x[1]`, `x[0, 1..<3]`, `x[..<2, -1]`,
    /// `x[.newAxis, .range(0..<8, stride: 2)]`. Unindexed trailing axes are kept whole. The result
    /// is a view.
    public subscript(_ indices: any TensorIndexExpression...) -> Tensor {
        index(leading: indices, trailing: [], location: nil)
    }

    /// Indexing of the trailing axes after an ellipsis: `x[..., 0]`, `x[..., 1..<3]`.
    public subscript(_ ellipsis: UnboundedRange, _ indices: any TensorIndexExpression...) -> Tensor {
        index(leading: [], trailing: indices, location: nil)
    }

    /// Indexing around an ellipsis in second place: `x[0, ..., 1]`.
    public subscript(
        _ first: any TensorIndexExpression, _ ellipsis: UnboundedRange, _ indices: any TensorIndexExpression...
    ) -> Tensor {
        index(leading: [first], trailing: indices, location: nil)
    }

    /// Indexing around an ellipsis in third place: `x[0, 1, ..., 2]`.
    public subscript(
        _ first: any TensorIndexExpression, _ second: any TensorIndexExpression, _ ellipsis: UnboundedRange,
        _ indices: any TensorIndexExpression...
    ) -> Tensor {
        index(leading: [first, second], trailing: indices, location: nil)
    }

    /// Indexing around an ellipsis in fourth place: `x[0, 1, 2, ..., 3]`.
    public subscript(
        _ first: any TensorIndexExpression, _ second: any TensorIndexExpression,
        _ third: any TensorIndexExpression, _ ellipsis: UnboundedRange, _ indices: any TensorIndexExpression...
    ) -> Tensor {
        index(leading: [first, second, third], trailing: indices, location: nil)
    }

    func index(leading: [any TensorIndexExpression], trailing: [any TensorIndexExpression], location: SourceLocation?)
        -> Tensor
    {
        guard error == nil else { return self }
        func failure(_ message: String) -> Tensor {
            Tensor(
                failed: TensorError(
                    .indexOutOfRange, op: "subscript", operandShapes: [shape], message: message, location: location))
        }
        // A new axis consumes no axis of the tensor; every other index consumes one.
        func consumed(_ indices: [any TensorIndexExpression]) -> Int {
            indices.filter { $0.resolve(axisSize: 1) != .newAxis }.count
        }
        let (leadingAxes, trailingAxes) = (consumed(leading), consumed(trailing))
        guard leadingAxes + trailingAxes <= rank else {
            return failure("\(leadingAxes + trailingAxes) indices for a tensor of rank \(rank)")
        }
        var dimensions = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        var resultShape: [Int] = []
        // Applies indices from input axis `axis` on, adding the result's axes in order.
        func apply(_ indices: [any TensorIndexExpression], from axis: Int) -> String? {
            var axis = axis
            for expression in indices {
                let size = axis < rank ? shape[axis] : 1
                switch expression.resolve(axisSize: size) {
                case .newAxis:
                    resultShape.append(1)
                    continue
                case .single(let position): dimensions[axis] = SliceDimension(start: position, count: 1, step: 1)
                case .squeeze: break
                case .range(let start, let end):
                    dimensions[axis] = SliceDimension(start: start, count: end - start, step: 1)
                    resultShape.append(end - start)
                case .strided(let start, let count, let step):
                    dimensions[axis] = SliceDimension(start: start, count: count, step: step)
                    resultShape.append(count)
                case .outOfRange(let message): return "axis \(axis): \(message)"
                }
                axis += 1
            }
            return nil
        }
        if let message = apply(leading, from: 0) { return failure(message) }
        resultShape += shape[leadingAxes..<(rank - trailingAxes)]
        if let message = apply(trailing, from: rank - trailingAxes) { return failure(message) }
        let sliced = Tensor.record(.slice(dimensions), [self], at: location)
        guard sliced.error == nil, sliced.shape != resultShape else { return sliced }
        return sliced.reshaped(to: resultShape)
    }

    /// The slices of `self` along `axis` picked by `Int32` indices: the result's shape is
    /// `shape[..<axis] + indices.shape + shape[(axis + 1)...]`. An index outside the axis makes
    /// materialization throw ``TensorError/Kind/indexOutOfRange``.
    public func gathering(
        atIndices indices: Tensor, alongAxis axis: Int, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        Tensor.record("gather", [self, indices], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.gather, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }
}
