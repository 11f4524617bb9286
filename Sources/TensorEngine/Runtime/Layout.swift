/// How a tensor's elements sit in a buffer: a shape, a stride per axis (in elements, possibly zero
/// for broadcast axes or negative for reversed ones) and the offset of the first element.
///
/// View ops (reshape, permute, broadcast, slice) only change the layout; no data moves.
package struct Layout: Sendable, Hashable {
    var shape: [Int]
    var strides: [Int]
    var offset: Int

    /// A row-major layout starting at element 0.
    package init(contiguous shape: [Int]) {
        self.shape = shape
        self.strides = Shape.contiguousStrides(shape)
        self.offset = 0
    }

    package init(shape: [Int], strides: [Int], offset: Int) {
        self.shape = shape
        self.strides = strides
        self.offset = offset
    }

    var rank: Int { shape.count }

    /// Whether this is exactly `Layout(contiguous: shape)` for the given shape (the strides of
    /// size-1 axes included), checked without building that layout.
    func isRowMajor(shape expected: [Int]) -> Bool { isRowMajor(shape: expected, from: 0) }

    /// Whether this is `Layout(contiguous: shape)` starting at element `start` of its buffer.
    func isRowMajor(shape expected: [Int], from start: Int) -> Bool {
        guard offset == start, shape == expected else { return false }
        var running = 1
        for axis in shape.indices.reversed() {
            guard strides[axis] == running else { return false }
            running = Shape.nextContiguousStride(running, extent: shape[axis])
        }
        return true
    }
    var elementCount: Int { shape.reduce(1, *) }

    /// Whether the elements are consecutive in row-major order (size-1 axes may have any stride;
    /// an empty layout is contiguous whatever its strides).
    var isContiguous: Bool {
        guard elementCount > 0 else { return true }
        var expected = 1
        for axis in shape.indices.reversed() where shape[axis] != 1 {
            guard strides[axis] == expected else { return false }
            expected *= shape[axis]
        }
        return true
    }

    /// Whether both address the same elements in the same order: equal shapes, and equal offsets
    /// and strides wherever they matter (not on size-1 axes, nor at all when there is no element).
    func sameElements(as other: Layout) -> Bool {
        guard shape == other.shape else { return false }
        guard elementCount > 0 else { return true }
        guard offset == other.offset else { return false }
        return shape.indices.allSatisfy { shape[$0] == 1 || strides[$0] == other.strides[$0] }
    }

    /// The layout a view op gives this one: the shared meaning of reshape, permute, broadcast and
    /// slice for every backend and for the planner's costing. `nil` for a reshape that needs a
    /// copy, and for ops that are not views.
    func viewed(by op: Op) -> Layout? {
        guard case .view(let layout) = op.descriptor.semantics else { return nil }
        return layout(op, self)
    }

    /// The trailing axes that are row-major contiguous (size-1 axes included): how many elements
    /// they hold, and the last axis before them (-1 when every axis is).
    var contiguousSuffix: (elements: Int, axisBefore: Int) {
        var elements = 1
        var axis = rank - 1
        while axis >= 0, shape[axis] == 1 || strides[axis] == elements {
            elements *= shape[axis]
            axis -= 1
        }
        return (elements, axis)
    }

    /// The same memory seen with reordered axes.
    func permuted(_ permutation: [Int]) -> Layout {
        Layout(shape: permutation.map { shape[$0] }, strides: permutation.map { strides[$0] }, offset: offset)
    }

    /// The same memory seen with size-1 axes (and new leading axes) repeated: their stride is zero.
    func broadcast(to target: [Int]) -> Layout {
        let lead = target.count - rank
        let newStrides = target.indices.map { axis -> Int in
            guard axis >= lead else { return 0 }
            return shape[axis - lead] == target[axis] ? strides[axis - lead] : 0
        }
        return Layout(shape: target, strides: newStrides, offset: offset)
    }

    /// A strided sub-range of every axis.
    func sliced(_ dimensions: [SliceDimension]) -> Layout {
        // An empty view addresses nothing, and its offset and strides are not computed: the
        // strides it starts from may be saturated (see `Shape.contiguousStrides`), as in padding
        // an empty tensor by a huge size.
        guard dimensions.allSatisfy({ $0.count > 0 }) else { return Layout(contiguous: dimensions.map(\.count)) }
        var newOffset = offset
        for (axis, d) in dimensions.enumerated() where d.count > 0 { newOffset += d.start * strides[axis] }
        // The step matters only between two elements; with one, any step (Int.max included) is
        // the axis's own stride. With more, the slice rule has checked that they all lie inside.
        return Layout(
            shape: dimensions.map(\.count), strides: zip(strides, dimensions).map { $1.count > 1 ? $0 * $1.step : $0 },
            offset: newOffset)
    }

    /// The same memory with a new shape, or `nil` when that needs a copy.
    ///
    /// Possible when the layout is contiguous, or when the reshape only inserts or removes size-1
    /// axes (the other axes keep their strides).
    func reshaped(_ newShape: [Int]) -> Layout? {
        // Checked first: the strides of a shape with another (or an overflowing) count are meaningless.
        guard Shape.elementCount(newShape) == elementCount else { return nil }
        if isContiguous {
            return Layout(shape: newShape, strides: Shape.contiguousStrides(newShape), offset: offset)
        }
        let kept = zip(shape, strides).filter { $0.0 != 1 }
        guard kept.map(\.0) == newShape.filter({ $0 != 1 }) else { return nil }
        var keptStrides = kept.map(\.1).makeIterator()
        let newStrides = newShape.map { $0 == 1 ? 0 : (keptStrides.next() ?? 0) }
        return Layout(shape: newShape, strides: newStrides, offset: offset)
    }

    /// The buffer offset of every element, in row-major order of the shape.
    ///
    /// The clear, allocation-heavy way to walk a strided view: used by the naive backend and by
    /// the slow paths of the others. Eight bytes per element: where the view is a broadcast to a
    /// large result, walk it with ``offsetWalker()`` instead.
    package func elementOffsets() -> [Int] {
        let count = elementCount
        guard count > 0 else { return [] }
        var walker = offsetWalker()
        return (0..<count).map { _ in walker.next() }
    }

    /// A walk over the buffer offsets of the elements in row-major order, one at a time, in
    /// memory of the rank's size whatever the element count.
    package func offsetWalker() -> OffsetWalker { OffsetWalker(self) }

    /// The offsets of a layout's elements in row-major order (``offsetWalker()``).
    package struct OffsetWalker {
        private let shape: [Int]
        private let strides: [Int]
        private var index: [Int]
        private var position: Int

        init(_ layout: Layout) {
            shape = layout.shape
            strides = layout.strides
            index = [Int](repeating: 0, count: layout.rank)
            position = layout.offset
        }

        /// The current element's offset; then moves to the next element (past the last one, it
        /// starts again at the first).
        package mutating func next() -> Int {
            let current = position
            var axis = shape.count - 1
            while axis >= 0 {
                index[axis] += 1
                position &+= strides[axis]
                if index[axis] < shape[axis] { break }
                position &-= strides[axis] &* shape[axis]
                index[axis] = 0
                axis -= 1
            }
            return current
        }
    }

    /// The smallest and largest element offsets the layout touches, or `nil` when it is empty.
    var offsetRange: ClosedRange<Int>? {
        guard elementCount > 0 else { return nil }
        var low = offset
        var high = offset
        for (extent, stride) in zip(shape, strides) {
            if stride > 0 { high += (extent - 1) * stride } else { low += (extent - 1) * stride }
        }
        return low...high
    }
}
