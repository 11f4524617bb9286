import Synchronization

/// The append cursor of a buffer laid out for growth along one axis: a key/value cache that a
/// decoder extends by a token each step.
///
/// The buffer holds a tensor of ``capacityShape``; the positions `0..<filled` along ``axis`` hold
/// data and are never written again, the rest have never been seen by anyone. An append claims the
/// next positions (an atomic compare-and-swap from the end it read), writes them, and hands out a
/// view of the longer prefix; a view handed out earlier still sees exactly what it saw. An append
/// from anything but the current end (a second branch from an older state, a claim lost to another
/// evaluation) copies into a new buffer instead, so no element is ever overwritten.
package final class GrowthCursor: Sendable {
    /// The axis the buffer grows along.
    package let axis: Int
    /// The shape of the whole buffer: the capacity along ``axis``, the tensor's sizes elsewhere.
    package let capacityShape: [Int]
    private let end: Atomic<Int>

    package init(axis: Int, capacityShape: [Int], filled: Int) {
        self.axis = axis
        self.capacityShape = capacityShape
        self.end = Atomic(filled)
    }

    /// How many positions along ``axis`` hold data.
    package var filled: Int { end.load(ordering: .acquiring) }

    /// Claims positions `start..<start + count` when `start` is the current end and they fit.
    func claim(from start: Int, count: Int) -> Bool {
        guard count >= 0, start <= capacityShape[axis] - count else { return false }
        return end.compareExchange(expected: start, desired: start + count, ordering: .acquiringAndReleasing).exchanged
    }
}

/// Where an append (a concatenation along an axis into storage that grows in place, ``OpKind/append``)
/// puts its result: a prefix of a buffer with room to grow along the axis.
///
/// The geometry depends only on the first operand's layout and the appended length, so the layout
/// a node is recorded with and the one its kernel produces are the same on every backend: when the
/// first operand is already such a prefix with room for the rest, the result is the longer prefix
/// of a buffer of the same capacity; otherwise the capacity doubles (at least
/// ``minimumCapacity``, at least what is needed).
package struct AppendGeometry: Sendable, Hashable {
    /// The fewest positions along the axis a new growable buffer holds.
    static let minimumCapacity = 16

    package let axis: Int
    /// The result's buffer: its shape with the capacity along ``axis``.
    package let capacityShape: [Int]
    /// The result: the first `filled` positions of the buffer along ``axis``.
    package let result: Layout
    /// The first operand's length along the axis, where the appended parts start.
    let start: Int
    /// Whether the first operand is itself a prefix of a buffer of ``capacityShape`` (so the result
    /// can be written past it, in its buffer).
    let extendsFirst: Bool

    /// The geometry of appending `appended` positions to `first` along `axis`; `nil` when the
    /// buffer's size overflows an `Int` (the concatenation's own shape was checked when recorded).
    ///
    /// Along axis 0 a prefix's capacity does not show in its layout (nor does it change the
    /// result's layout); `bufferCapacity`, the capacity of the buffer `first` lies in when known,
    /// stands for it.
    package init?(axis: Int, first: Layout, appended: Int, bufferCapacity: Int? = nil) {
        let length = first.shape[axis]
        let (total, overflow) = length.addingReportingOverflow(appended)
        guard !overflow, appended >= 0 else { return nil }
        var existing = AppendGeometry.capacity(of: first, axis: axis)
        if axis == 0, existing != nil, let bufferCapacity, bufferCapacity >= length { existing = bufferCapacity }
        let capacity: Int
        if let existing, existing >= total {
            capacity = existing
        } else {
            let doubled = (existing ?? total).multipliedReportingOverflow(by: 2)
            capacity = Swift.max(AppendGeometry.minimumCapacity, doubled.overflow ? total : doubled.partialValue, total)
        }
        var shape = first.shape
        shape[axis] = capacity
        guard let elements = Shape.elementCount(shape), !elements.multipliedReportingOverflow(by: 8).overflow else {
            return nil
        }
        var prefix = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        prefix[axis].count = total
        self.axis = axis
        capacityShape = shape
        result = Layout(contiguous: shape).sliced(prefix)
        start = length
        extendsFirst = existing == capacity
    }

    /// The capacity along `axis` of the buffer `layout` is the prefix of, or `nil` when it is no
    /// such prefix (offset 0, row-major strides of the shape with a larger extent along `axis`).
    /// Axis 0's capacity does not show in the strides, so its prefix counts as full.
    static func capacity(of layout: Layout, axis: Int) -> Int? {
        let length = layout.shape[axis]
        let inner = layout.shape[(axis + 1)...].reduce(1, *)
        guard layout.elementCount > 0 else { return length }
        var capacity = length
        if axis > 0, inner > 0 {
            let outerStride = layout.strides[axis - 1]
            guard outerStride % inner == 0 else { return nil }
            capacity = outerStride / inner
        }
        guard capacity >= length else { return nil }
        var shape = layout.shape
        shape[axis] = capacity
        var prefix = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        prefix[axis].count = length
        return Layout(contiguous: shape).sliced(prefix).sameElements(as: layout) ? capacity : nil
    }

    /// Where the operand that starts at `position` along the axis and is `length` long goes.
    func destination(at position: Int, length: Int) -> Layout {
        var dimensions = capacityShape.map { SliceDimension(start: 0, count: $0, step: 1) }
        dimensions[axis] = SliceDimension(start: position, count: length, step: 1)
        return Layout(contiguous: capacityShape).sliced(dimensions)
    }
}

/// What one append kernel does, decided once for every backend: which buffer receives the result
/// and which operands are copied where.
package struct AppendPlan {
    /// Whether the result is written past the first operand, in its buffer (which must then not
    /// be allocated).
    package let inPlace: Bool
    package let geometry: AppendGeometry
    /// The operands to copy, by index, with the layout each takes in the result's buffer.
    package let writes: [(operand: Int, destination: Layout)]

    /// Plans an append of `inputs` along `axis`: in place when the first operand is the filled
    /// prefix of a growable buffer of the result's capacity and the claim on the positions past it
    /// succeeds; otherwise into a new buffer of ``AppendGeometry/capacityShape``.
    ///
    /// - Throws: ``TensorError/Kind/tooLarge`` when the grown buffer's size overflows an `Int`.
    package init(axis: Int, inputs: [Value]) throws(TensorError) {
        guard let first = inputs.first else {
            throw TensorError(.invalidArgument, op: "append", message: "an append needs at least one operand")
        }
        let appended = inputs.dropFirst().reduce(0) { $0 + $1.shape[axis] }
        let cursor = first.buffer.growth.flatMap { $0.axis == axis ? $0 : nil }
        guard
            let geometry = AppendGeometry(
                axis: axis, first: first.layout, appended: appended, bufferCapacity: cursor?.capacityShape[axis])
        else {
            throw TensorError(
                .tooLarge, op: "append", operandShapes: inputs.map(\.shape),
                message: "the growable buffer for axis \(axis) would hold more elements than an Int counts")
        }
        self.geometry = geometry
        var inPlace = false
        if geometry.extendsFirst, let cursor, cursor.capacityShape == geometry.capacityShape {
            inPlace = cursor.claim(from: geometry.start, count: appended)
        }
        self.inPlace = inPlace
        var writes: [(Int, Layout)] = []
        var position = 0
        for (index, input) in inputs.enumerated() {
            let length = input.shape[axis]
            defer { position += length }
            if index == 0, inPlace { continue }
            guard input.layout.elementCount > 0 else { continue }
            writes.append((index, geometry.destination(at: position, length: length)))
        }
        self.writes = writes
    }

    /// The cursor of a new buffer for the result.
    package func newCursor() -> GrowthCursor {
        GrowthCursor(axis: geometry.axis, capacityShape: geometry.capacityShape, filled: geometry.result.shape[geometry.axis])
    }

    /// The bytes of a new buffer for the result (the geometry has checked that they count).
    package func newBufferBytes(_ scalarType: ScalarType) -> Int {
        (Shape.elementCount(geometry.capacityShape) ?? 0) * scalarType.byteCount
    }
}
