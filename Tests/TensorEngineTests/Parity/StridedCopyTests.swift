import Testing
@testable import TensorEngine

/// The openblas backend's strided copy (views made contiguous), checked element by element
/// against offsets computed by hand, for the tiled transpose path and its edges.
@Suite("StridedCopy")
struct StridedCopyTests {
    /// (planes, rows, columns) of a row-major source whose last two axes are swapped.
    static let shapes: [(Int, Int, Int)] = [
        (1, 1, 2), (1, 2, 1) /* not a transpose path: an axis of 1 */, (1, 16, 16), (1, 17, 33),
        (3, 5, 40), (2, 64, 48), (1, 300, 7),
        // Several 64 × 64 blocks of the AVX-512 transpose, with partial blocks and tiles on both axes.
        (2, 70, 130), (1, 129, 16), (3, 16, 65),
    ]

    @Test(arguments: shapes.indices) func transposedViewsCopyEveryElement(_ index: Int) {
        let (planes, rows, columns) = Self.shapes[index]
        let count = planes * rows * columns
        // Source [planes, columns, rows] row-major; the view is its last two axes swapped.
        let view = Layout(shape: [planes, rows, columns], strides: [rows * columns, 1, rows], offset: 0)
        func expected(_ i: Int) -> Int {
            let plane = i / (rows * columns), r = (i / columns) % rows, c = i % columns
            return plane * rows * columns + c * rows + r
        }
        func check<T: FixedWidthInteger>(_: T.Type) {
            let source = (0..<count).map { T(truncatingIfNeeded: $0 &* 2654435761 >> 7) }
            var destination = [T](repeating: 0, count: count)
            source.withUnsafeBytes { from in
                destination.withUnsafeMutableBytes { to in
                    StridedCopy.copy(from.baseAddress!, view, to: to.baseAddress!, elementSize: MemoryLayout<T>.size)
                }
            }
            let wrong = (0..<count).first { destination[$0] != source[expected($0)] }
            #expect(wrong == nil, "\(T.self) [\(planes), \(rows), \(columns)]: element \(wrong ?? -1)")
        }
        check(UInt8.self)
        check(UInt16.self)
        check(UInt32.self)
    }

    /// Transposed views of a larger source: lines padded past the view's rows, planes taken from
    /// every other plane, the view starting at an offset; and one of 2²⁴ elements, which the
    /// AVX-512 transpose writes with streaming stores.
    @Test(arguments: [(2, 37, 90, 45, 3), (1, 4096, 4096, 4096, 0)])
    func transposedViewsOfPaddedSourcesCopyEveryElement(_ shape: (Int, Int, Int, Int, Int)) {
        let (planes, rows, columns, lineLength, offset) = shape
        let planeStride = 2 * columns * lineLength
        let count = planes * rows * columns
        let view = Layout(shape: [planes, rows, columns], strides: [planeStride, 1, lineLength], offset: offset)
        let sourceCount = offset + (planes - 1) * planeStride + columns * lineLength
        let source = (0..<sourceCount).map { UInt32(truncatingIfNeeded: $0 &* 2654435761 >> 5) }
        var destination = [UInt32](repeating: 0, count: count)
        source.withUnsafeBytes { from in
            destination.withUnsafeMutableBytes { to in
                StridedCopy.copy(from.baseAddress!, view, to: to.baseAddress!, elementSize: 4)
            }
        }
        let wrong = (0..<count).first { i in
            let plane = i / (rows * columns), r = (i / columns) % rows, c = i % columns
            return destination[i] != source[offset + plane * planeStride + c * lineLength + r]
        }
        #expect(wrong == nil, "[\(planes), \(rows), \(columns)] from lines of \(lineLength): element \(wrong ?? -1)")
    }
}

/// The walk over a layout's element offsets, against offsets worked out by hand.
@Suite("Layout offsets")
struct LayoutOffsetTests {
    /// A broadcast view ([3] repeated over 2 rows: stride 0), a reversed one (negative stride from
    /// an offset) and a transposed one, each walked twice round: the walk starts again at the first
    /// element after the last.
    @Test func walksBroadcastReversedAndTransposedViews() {
        let cases: [(Layout, [Int])] = [
            (Layout(shape: [2, 3], strides: [0, 1], offset: 4), [4, 5, 6, 4, 5, 6]),
            (Layout(shape: [4], strides: [-2], offset: 7), [7, 5, 3, 1]),
            (Layout(shape: [3, 2], strides: [1, 3], offset: 0), [0, 3, 1, 4, 2, 5]),
            (Layout(shape: [], strides: [], offset: 9), [9]),
        ]
        for (layout, expected) in cases {
            var walker = layout.offsetWalker()
            let twice = (0..<(2 * expected.count)).map { _ in walker.next() }
            #expect(twice == expected + expected, "\(layout)")
            #expect(layout.elementOffsets() == expected)
        }
        #expect(Layout(shape: [0, 5], strides: [5, 1], offset: 0).elementOffsets().isEmpty)
    }
}
