// Gathers by N-dimensional index vectors and scatters along an axis, in Core ML's forms.

extension Tensor {
    /// The elements or slices of `self` at index vectors: `indices` is `Int32` or `Int64` of shape
    /// `[..., k]`, each last-axis vector indexes the first `k` axes, and the result has shape
    /// `indices.shape.dropLast() + shape[k...]` (TensorFlow's `gather_nd`).
    ///
    /// ```swift
    /// let x = Tensor(shape: [2, 2], scalars: [1.0, 2.0, 3.0, 4.0])
    /// x.gathering(atIndices: Tensor(shape: [2, 2], scalars: [0, 1, 1, 0] as [Int32]))   // [2, 3]
    /// ```
    ///
    /// An index outside its axis makes materialization throw ``TensorError/Kind/indexOutOfRange``.
    public func gathering(atIndices indices: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        let location = SourceLocation(file, line)
        if let failed = [self, indices].first(where: { $0.error != nil }) { return failed }
        func failure(_ kind: TensorError.Kind, _ message: String) -> Tensor {
            Tensor(
                failed: TensorError(
                    kind, op: "gathering(atIndices:)", operandShapes: [shape, indices.shape], message: message,
                    location: location))
        }
        guard ScalarTypeSet.integers.contains(indices.dtype) else {
            return failure(.scalarTypeMismatch, "indices must be int32 or int64, not \(indices.dtype)")
        }
        guard let k = indices.shape.last, (1...Swift.max(rank, 1)).contains(k), rank > 0 else {
            return failure(
                .invalidArgument,
                "index vectors of \(indices.shape.last ?? 0) coordinates cannot index a tensor of rank \(rank)")
        }
        let leading = Array(shape[..<k])
        guard let positions = Shape.elementCount(leading), positions <= Int(Int32.max) else {
            return failure(
                .tooLarge, "the first \(k) axes \(describe(leading)) have more positions than Int32 indices reach")
        }
        // The flat position of each vector in the first k axes; a vector with a coordinate
        // outside its axis gets -1, which the gather reports as out of range. Extents and strides
        // past Int32 occur only beside an empty axis (the positions fit Int32), where no vector is
        // valid: clamped, they are never used.
        let strides = Tensor(Shape.contiguousStrides(leading).map { Int32(clamping: $0) }, scalarType: Int32.self)
            .converted(to: indices.dtype)
        let bounds = Tensor(leading.map { Int32(clamping: $0) }, scalarType: Int32.self).converted(to: indices.dtype)
        let flat = (indices * strides).sum(alongAxes: -1, file: file, line: line)
        let valid = ((indices .>= Int32(0)) .& (indices .< bounds)).all(alongAxes: -1, file: file, line: line)
        let position = flat.replacing(with: -1, where: .!valid, file: file, line: line)
        return reshaped(to: [positions] + shape[k...], file: file, line: line)
            .gathering(atIndices: position, alongAxis: 0, file: file, line: line)
    }

    /// The tensor with slices replaced along an axis: element `p` of `updates` goes to `p` with
    /// its `axis` coordinate replaced by `indices[p]` (PyTorch's `scatter`, ONNX's
    /// `ScatterElements`). `indices` (`Int32`) and `updates` have one shape, `self`'s but along
    /// `axis`; of two updates to one element, the later in row-major order wins.
    ///
    /// An index outside `0..<shape[axis]` makes materialization throw
    /// ``TensorError/Kind/indexOutOfRange``.
    public func replacing(
        with updates: Tensor, atIndices indices: Tensor, alongAxis axis: Int, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        Tensor.record("scatter", [self, indices, updates], at: SourceLocation(file, line)) {
            signatures throws(RuleViolation) in
            .alongAxis(.scatter, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }

    /// The tensor with one value written along an axis where the indices say:
    ///
    /// ```swift
    /// let x = Tensor(shape: [2, 3], scalars: [10, 30, 20, 60, 40, 50], scalarType: Float.self)
    /// let i = Tensor(shape: [2, 1], scalars: [1, 0], scalarType: Int32.self)
    /// x.replacing(atIndices: i, with: 99, alongAxis: 1)   // [[10, 99, 20], [99, 40, 50]]
    /// ```
    public func replacing(
        atIndices indices: Tensor, with replacement: Float, alongAxis axis: Int, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        replacing(
            with: Tensor.scalar(Double(replacement), dtype).broadcast(to: indices.shape), atIndices: indices,
            alongAxis: axis, file: file, line: line)
    }

    /// The tensor with one value of its own scalar type written along an axis where the indices say.
    @_disfavoredOverload
    public func replacing<S: TensorScalar>(
        atIndices indices: Tensor, with replacement: S, alongAxis axis: Int, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        replacing(
            with: Tensor.scalar(replacement.doubleValue, dtype).broadcast(to: indices.shape), atIndices: indices,
            alongAxis: axis, file: file, line: line)
    }

    /// The same as ``replacing(atIndices:with:alongAxis:file:line:)``, with the value first.
    public func replacing(
        with replacement: Float, atIndices indices: Tensor, alongAxis axis: Int, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        replacing(atIndices: indices, with: replacement, alongAxis: axis, file: file, line: line)
    }
}
