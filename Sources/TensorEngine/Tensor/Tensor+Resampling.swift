// Padding modes, resizing and band masks, in Core ML's forms: compositions of slices,
// concatenations, gathers and selections, so every backend runs them with the ops it has.

extension Tensor {
    /// How ``padded(forSizes:mode:file:line:)`` fills the new elements.
    public enum PaddingMode: Sendable, Hashable {
        /// One value everywhere.
        case constant(Float)
        /// The elements mirrored about the edge, the edge not repeated: `[1, 2, 3]` padded by 2
        /// before is `[3, 2, 1, 2, 3]`. Each padding must be smaller than its axis.
        case reflection
        /// The elements mirrored with the edge repeated: `[1, 2, 3]` padded by 2 before is
        /// `[2, 1, 1, 2, 3]`. Each padding must be at most its axis.
        case symmetric
    }

    /// How ``resized(to:method:file:line:)`` computes the new elements.
    public enum ResizeMethod: Sendable, Hashable {
        /// The nearest source element: output `o` of `n` reads input `floor(o · m / n)` of `m`.
        case nearestNeighbor
        /// Linear interpolation along each resized axis between the two nearest elements. With
        /// `alignCorners` the first and last elements of input and output coincide
        /// (`o · (m - 1) / (n - 1)`); without, pixel centres do (`(o + ½) · m / n - ½`, clamped
        /// to the input), as PyTorch's `align_corners=False`.
        case bilinear(alignCorners: Bool = false)
    }

    /// The tensor padded before and after each axis as `mode` says.
    public func padded(
        forSizes sizes: [(before: Int, after: Int)], mode: PaddingMode, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        let mirrorsEdge: Bool
        switch mode {
        case .constant(let value): return padded(forSizes: sizes, with: value, file: file, line: line)
        case .reflection: mirrorsEdge = false
        case .symmetric: mirrorsEdge = true
        }
        guard error == nil else { return self }
        func failure(_ message: String) -> Tensor {
            Tensor(
                failed: TensorError(
                    .invalidArgument, op: "padded(forSizes:mode:)", operandShapes: [shape], message: message,
                    location: location))
        }
        guard sizes.count == rank else { return failure("\(sizes.count) paddings for a tensor of rank \(rank)") }
        var result = self
        for (axis, (before, after)) in sizes.enumerated() where before != 0 || after != 0 {
            let n = shape[axis]
            let limit = mirrorsEdge ? n : n - 1
            guard before >= 0, after >= 0, before <= limit, after <= limit else {
                return failure(
                    "padding (\(before), \(after)) of axis \(axis) (size \(n)) must lie in 0...\(Swift.max(limit, 0)) for \(mode)"
                )
            }
            // Mirrored runs read backwards: before the edge from element `before` (reflection) or
            // `before - 1` (symmetric) down; after it from `n - 2` or `n - 1` down.
            let skip = mirrorsEdge ? 0 : 1
            let head = result.mirrored(axis: axis, start: before - 1 + skip, count: before, location)
            let tail = result.mirrored(axis: axis, start: n - 1 - skip, count: after, location)
            result = Tensor(concatenating: [head, result, tail], alongAxis: axis, file: file, line: line)
        }
        return result
    }

    /// `count` elements along `axis` read backwards from `start`.
    private func mirrored(axis: Int, start: Int, count: Int, _ location: SourceLocation?) -> Tensor {
        var dimensions = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        dimensions[axis] = SliceDimension(start: count == 0 ? 0 : start, count: count, step: -1)
        return Tensor.record(.slice(dimensions), [self], at: location)
    }

    /// The tensor resized along its trailing axes, one per entry of `size`: for an image batch
    /// `[N, C, H, W]`, `size` is `[newHeight, newWidth]`. Nearest-neighbour resizing takes any
    /// scalar type, bilinear floats only.
    public func resized(
        to size: [Int], method: ResizeMethod = .nearestNeighbor, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        guard error == nil else { return self }
        func failure(_ kind: TensorError.Kind, _ message: String) -> Tensor {
            Tensor(
                failed: TensorError(
                    kind, op: "resized(to:method:)", operandShapes: [shape], message: message, location: location))
        }
        guard size.count <= rank else {
            return failure(.invalidArgument, "\(size.count) sizes for a tensor of rank \(rank)")
        }
        if case .bilinear = method, !dtype.isFloatingPoint {
            return failure(.scalarTypeMismatch, "bilinear resizing needs a floating-point tensor, not \(dtype)")
        }
        var target = shape
        for (offset, newSize) in size.enumerated() { target[rank - size.count + offset] = newSize }
        if let failed = Tensor.sizeFailure(target, dtype, op: "resized(to:method:)", at: location) { return failed }
        for axis in (rank - size.count)..<rank where shape[axis] == 0 && target[axis] > 0 {
            return failure(.invalidArgument, "axis \(axis) is empty and cannot be resized to \(target[axis])")
        }
        // An empty result needs no resampling (whose index lists could be as long as a huge
        // extent beside the empty one).
        if target.contains(0) { return reshaped(to: target, file: file, line: line) }
        if let tooLong = (target + shape).first(where: { $0 > Int(Int32.max) }) {
            return failure(.tooLarge, "an axis of \(tooLong) elements is past what Int32 indices reach")
        }
        var result = self
        for axis in (rank - size.count)..<rank where shape[axis] != target[axis] {
            result = result.resampled(axis: axis, from: shape[axis], to: target[axis], method, file, line)
        }
        return result
    }

    /// One axis resampled from `m` to `n` elements (the others untouched): gathers of the source
    /// positions, blended with host-computed weights for bilinear.
    private func resampled(
        axis: Int, from m: Int, to n: Int, _ method: ResizeMethod, _ file: StaticString, _ line: UInt
    ) -> Tensor {
        func indices(_ values: [Int]) -> Tensor { Tensor(values.map { Int32($0) }, scalarType: Int32.self) }
        switch method {
        case .nearestNeighbor:
            let source = (0..<n).map { Swift.min(m - 1, Int((Double($0) * Double(m) / Double(n)).rounded(.down))) }
            return gathering(atIndices: indices(source), alongAxis: axis, file: file, line: line)
        case .bilinear(let alignCorners):
            let positions = (0..<n).map { o -> Double in
                if alignCorners { return n > 1 ? Double(o) * Double(m - 1) / Double(n - 1) : 0 }
                return Swift.max(0, (Double(o) + 0.5) * Double(m) / Double(n) - 0.5)
            }
            let lower = positions.map { Swift.min(m - 1, Int($0.rounded(.down))) }
            let upper = lower.map { Swift.min(m - 1, $0 + 1) }
            let weights = zip(positions, lower).map { Float($0 - Double($1)) }
            let trailing = [Int](repeating: 1, count: rank - axis - 1)
            let weight = Tensor(shape: [n] + trailing, scalars: weights).cast(like: self, file: file, line: line)
            let a = gathering(atIndices: indices(lower), alongAxis: axis, file: file, line: line)
            let b = gathering(atIndices: indices(upper), alongAxis: axis, file: file, line: line)
            return a + (b - a) * weight
        }
    }

    /// The tensor with everything outside a band of its last two axes (each matrix) set to zero:
    /// element `[i, j]` is kept when `i - j <= lowerBandCount` and `j - i <= upperBandCount`; a
    /// negative count keeps that whole triangle. `bandPart(lowerBandCount: -1, upperBandCount: 0)`
    /// is the lower triangle, the usual causal mask.
    public func bandPart(
        lowerBandCount: Int, upperBandCount: Int, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        guard error == nil else { return self }
        guard rank >= 2 else {
            return Tensor(
                failed: TensorError(
                    .invalidArgument, op: "bandPart", operandShapes: [shape],
                    message: "bandPart needs a tensor of rank 2 or more, not \(rank)", location: location))
        }
        // Nothing to mask in an empty tensor (whose other extents may be huge).
        guard scalarCount > 0 else { return self }
        let (rows, columns) = (shape[rank - 2], shape[rank - 1])
        var outside: [Bool] = []
        outside.reserveCapacity(rows * columns)
        for i in 0..<rows {
            for j in 0..<columns {
                let below = lowerBandCount >= 0 && i - j > lowerBandCount
                let above = upperBandCount >= 0 && j - i > upperBandCount
                outside.append(below || above)
            }
        }
        let mask = Tensor.constant(outside, shape: [rows, columns], op: "bandPart", at: location)
        return replacing(with: 0, where: mask, file: file, line: line)
    }
}
