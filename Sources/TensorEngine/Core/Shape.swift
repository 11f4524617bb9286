/// Helpers for shapes: element counts with overflow checks and row-major strides.
package enum Shape {
    /// The product of the dimensions, or `nil` if one is negative or the product overflows.
    static func elementCount(_ shape: [Int]) -> Int? {
        var count = 1
        for dimension in shape {
            guard dimension >= 0 else { return nil }
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { return nil }
            count = product
        }
        return count
    }

    /// Row-major strides in elements (the last axis has stride 1).
    ///
    /// An empty axis counts as size 1, so the strides of an empty tensor may multiply extents
    /// whose product overflows although its element count (zero) does not, as in `[0, 2⁶², 4]`,
    /// or a padding or tiling of an empty tensor by a huge size: such strides saturate at
    /// `Int.max` (no element is ever addressed through them).
    static func contiguousStrides(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var running = 1
        for axis in shape.indices.reversed() {
            strides[axis] = running
            running = nextContiguousStride(running, extent: shape[axis])
        }
        return strides
    }

    /// The row-major stride of the axis before one of `extent` elements and stride `stride`.
    @inline(__always)
    static func nextContiguousStride(_ stride: Int, extent: Int) -> Int {
        let (product, overflow) = stride.multipliedReportingOverflow(by: Swift.max(extent, 1))
        return overflow ? Int.max : product
    }
}
