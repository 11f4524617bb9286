extension Tensor {
    /// The same elements in a new shape with the same element count. One dimension may be `-1`,
    /// inferred from the others. A view when the layout allows, a copy otherwise.
    ///
    /// A reshape to the tensor's own shape is the tensor, and a reshape of a reshape not yet
    /// computed reshapes the first one's source: a model's chains of views (a product's rows
    /// reshaped back, then split into heads) are one step, not one per view.
    public func reshaped(to newShape: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        let location = SourceLocation(file, line)
        guard let node else { return self }
        var resolved = newShape
        if let inferred = newShape.firstIndex(of: -1), newShape.filter({ $0 == -1 }).count == 1 {
            // Checked: the other dimensions may be anything a caller passes, `Int.max` included.
            if let known = Shape.elementCount(newShape.filter { $0 != -1 }), known > 0, scalarCount % known == 0 {
                resolved[inferred] = scalarCount / known
            }
        }
        if resolved == shape { return self }
        if node.op.kind == .reshape, !node.hasStoredResult, let source = node.inputs.first {
            return Tensor(node: source).reshaped(to: resolved, file: file, line: line)
        }
        let needsCopy = Shape.elementCount(resolved) == scalarCount && node.layout.reshaped(resolved) == nil
        let source = needsCopy ? Tensor.record(.contiguous, [self], at: location) : self
        return Tensor.record("reshape", [source], at: location) { _ throws(RuleViolation) in .reshape(resolved) }
    }

    /// The elements as a rank-1 tensor.
    public func flattened(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reshaped(to: [scalarCount], file: file, line: line)
    }

    /// Inserts size-1 axes at the given positions of the result (negative positions count from its end).
    public func expandingShape(at axes: Int..., file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        expandingShape(at: axes, file: file, line: line)
    }

    /// Inserts size-1 axes at the given positions of the result.
    public func expandingShape(at axes: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        guard error == nil else { return self }
        let newRank = rank + axes.count
        do throws(RuleViolation) {
            let positions = try Tensor.normalize(axes: axes, rank: newRank)
            var source = shape.makeIterator()
            let newShape = (0..<newRank).map { positions.contains($0) ? 1 : (source.next() ?? 1) }
            return reshaped(to: newShape, file: file, line: line)
        } catch {
            return Tensor(
                failed: TensorError(
                    error.kind, op: "expandingShape", operandShapes: [shape], message: error.message,
                    location: SourceLocation(file, line)))
        }
    }

    /// Removes every size-1 axis.
    public func squeezingShape(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reshaped(to: shape.filter { $0 != 1 }, file: file, line: line)
    }

    /// Removes the given size-1 axes; naming an axis whose size is not 1 is an error.
    public func squeezingShape(at axes: Int..., file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        squeezingShape(at: axes, file: file, line: line)
    }

    /// Removes the given size-1 axes.
    public func squeezingShape(at axes: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        guard error == nil else { return self }
        do throws(RuleViolation) {
            let positions = try Tensor.normalize(axes: axes, rank: rank)
            if let bad = positions.first(where: { shape[$0] != 1 }) {
                throw RuleViolation(.invalidAxis, "axis \(bad) has size \(shape[bad]), not 1")
            }
            return reshaped(
                to: shape.indices.filter { !positions.contains($0) }.map { shape[$0] }, file: file, line: line)
        } catch {
            return Tensor(
                failed: TensorError(
                    error.kind, op: "squeezingShape", operandShapes: [shape], message: error.message,
                    location: SourceLocation(file, line)))
        }
    }

    /// The axes in reverse order (a view).
    public func transposed(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        transposed(permutation: Array((0..<rank).reversed()), file: file, line: line)
    }

    /// The axes reordered: axis `i` of the result is axis `permutation[i]` of `self` (a view).
    public func transposed(permutation: Int..., file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        transposed(permutation: permutation, file: file, line: line)
    }

    /// The axes reordered: axis `i` of the result is axis `permutation[i]` of `self` (a view).
    ///
    /// The identity permutation is the tensor itself, and a permutation of a permutation not yet
    /// computed is recorded as the one permutation of the first one's source.
    public func transposed(permutation: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        if let node, permutation.count == rank {
            let axes = permutation.map { $0 < 0 ? $0 + rank : $0 }
            if axes.sorted() == Array(0..<rank) {
                if axes == Array(0..<rank) { return self }
                if node.op.kind == .permute, !node.hasStoredResult, let source = node.inputs.first {
                    let inner = node.op.permutation
                    return Tensor(node: source).transposed(permutation: axes.map { inner[$0] }, file: file, line: line)
                }
            }
        }
        return Tensor.record("transpose", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            let rank = signatures[0].shape.count
            return .permute(
                try permutation.map { axis throws(RuleViolation) in try Tensor.normalize(axis: axis, rank: rank) })
        }
    }

    /// The tensor repeated along size-1 (and new leading) axes to a shape, as NumPy broadcasts (a view).
    public func broadcast(to shape: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record(.broadcast(shape), [self], at: SourceLocation(file, line))
    }

    /// Splits into `count` equal parts along an axis (views). The axis size must divide evenly.
    public func split(count: Int, alongAxis axis: Int = 0, file: StaticString = #fileID, line: UInt = #line) -> [Tensor]
    {
        guard error == nil else { return [self] }
        let location = SourceLocation(file, line)
        do throws(RuleViolation) {
            let axis = try Tensor.normalize(axis: axis, rank: rank)
            guard count > 0, shape[axis] % count == 0 else {
                throw RuleViolation(
                    .invalidArgument, "axis \(axis) of size \(shape[axis]) cannot be split into \(count) equal parts")
            }
            return split(
                sizes: Array(repeating: shape[axis] / count, count: count), alongAxis: axis, file: file, line: line)
        } catch {
            return [
                Tensor(
                    failed: TensorError(
                        error.kind, op: "split", operandShapes: [shape], message: error.message, location: location))
            ]
        }
    }

    /// Splits into parts of the given sizes along an axis (views). The sizes must add up to the axis size.
    public func split(sizes: [Int], alongAxis axis: Int = 0, file: StaticString = #fileID, line: UInt = #line)
        -> [Tensor]
    {
        guard error == nil else { return [self] }
        let location = SourceLocation(file, line)
        do throws(RuleViolation) {
            let axis = try Tensor.normalize(axis: axis, rank: rank)
            guard sizes.allSatisfy({ $0 >= 0 }), Tensor.checkedSum(sizes) == shape[axis] else {
                throw RuleViolation(
                    .invalidArgument, "sizes \(sizes) do not add up to \(shape[axis]), the size of axis \(axis)")
            }
            var start = 0
            return sizes.map { size in
                var dimensions = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
                dimensions[axis] = SliceDimension(start: start, count: size, step: 1)
                start += size
                return Tensor.record(.slice(dimensions), [self], at: location)
            }
        } catch {
            return [
                Tensor(
                    failed: TensorError(
                        error.kind, op: "split", operandShapes: [shape], message: error.message, location: location))
            ]
        }
    }

    /// The tensor repeated `multiples[i]` times along each axis `i`.
    public func tiled(multiples: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        guard error == nil else { return self }
        let location = SourceLocation(file, line)
        guard multiples.count == rank, multiples.allSatisfy({ $0 >= 0 }) else {
            return Tensor(
                failed: TensorError(
                    .invalidArgument, op: "tiled", operandShapes: [shape],
                    message: "multiples \(multiples) must be \(rank) non-negative counts", location: location))
        }
        let tiledShape = zip(multiples, shape).map { $0.multipliedReportingOverflow(by: $1) }
        guard tiledShape.allSatisfy({ !$0.overflow }), Shape.elementCount(tiledShape.map(\.partialValue)) != nil else {
            return Tensor(
                failed: TensorError(
                    .tooLarge, op: "tiled", operandShapes: [shape],
                    message: "multiples \(multiples) of \(describe(shape)) give more elements than an Int counts",
                    location: location))
        }
        let interleaved = shape.flatMap { [1, $0] }
        let repeated = zip(multiples, shape).flatMap { [$0, $1] }
        return reshaped(to: interleaved, file: file, line: line).broadcast(to: repeated, file: file, line: line)
            .reshaped(to: tiledShape.map(\.partialValue), file: file, line: line)
    }

    /// The tensor with `value` added before and after each axis.
    public func padded(
        forSizes sizes: [(before: Int, after: Int)], with value: Float = 0, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        Tensor.record(
            .pad(sizes.map { Padding(before: $0.before, after: $0.after) }, value: Double(value)), [self],
            at: SourceLocation(file, line))
    }

    /// The elements in reverse order along the given axes (a view).
    public func reversed(alongAxes axes: Int..., file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        reversed(alongAxes: axes, file: file, line: line)
    }

    /// The elements in reverse order along the given axes (a view).
    public func reversed(alongAxes axes: [Int], file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("reverse", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            let shape = signatures[0].shape
            let normalized = try Tensor.normalize(axes: axes, rank: shape.count)
            return .slice(
                shape.indices.map { axis in
                    normalized.contains(axis) && shape[axis] > 0
                        ? SliceDimension(start: shape[axis] - 1, count: shape[axis], step: -1)
                        : SliceDimension(start: 0, count: shape[axis], step: 1)
                })
        }
    }

    /// The tensor followed by `other` along an axis (as ``init(concatenating:alongAxis:file:line:)``).
    public func concatenated(
        with other: Tensor, alongAxis axis: Int = 0, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        Tensor(concatenating: [self, other], alongAxis: axis, file: file, line: line)
    }

    /// The slices along an axis, each without that axis: the inverse of stacking.
    ///
    /// A tensor carrying an error, or an axis out of range, gives one tensor carrying the error.
    public func unstacked(alongAxis axis: Int = 0, file: StaticString = #fileID, line: UInt = #line) -> [Tensor] {
        guard error == nil else { return [self] }
        let normalized: Int
        do throws(RuleViolation) { normalized = try Tensor.normalize(axis: axis, rank: rank) } catch {
            return [
                Tensor(
                    failed: TensorError(
                        error.kind, op: "unstacked", operandShapes: [shape], message: error.message,
                        location: SourceLocation(file, line)))
            ]
        }
        guard shape[normalized] > 0 else { return [] }
        return split(count: shape[normalized], alongAxis: normalized, file: file, line: line).map {
            $0.squeezingShape(at: normalized, file: file, line: line)
        }
    }
}
