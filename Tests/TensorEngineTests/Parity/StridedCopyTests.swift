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
}
