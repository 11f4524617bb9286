/// Walks a strided layout in row-major order as runs along the last axis: the building block of
/// every copy from a view (transposes, broadcasts, slices) on the CPU fast path.
struct StridedRuns {
    let layout: Layout

    /// Calls `body(sourceOffset, stride, length, destinationIndex)` for the elements
    /// `start..<start + count` of the layout's row-major order, one run per stretch of the last axis.
    @inline(__always)
    func forEachRun(from start: Int, count: Int, _ body: (Int, Int, Int, Int) -> Void) {
        guard count > 0 else { return }
        let rank = layout.rank
        guard rank > 0 else {
            body(layout.offset, 0, 1, 0)
            return
        }
        var index = [Int](repeating: 0, count: rank)
        var remainder = start
        for axis in (0..<rank).reversed() {
            index[axis] = remainder % layout.shape[axis]
            remainder /= layout.shape[axis]
        }
        var offset = layout.offset
        for axis in 0..<rank { offset += index[axis] * layout.strides[axis] }
        let last = rank - 1
        let lastStride = layout.strides[last]
        var done = 0
        while done < count {
            let length = min(count - done, layout.shape[last] - index[last])
            body(offset, lastStride, length, done)
            done += length
            guard done < count else { break }
            offset += length * lastStride
            index[last] += length
            var axis = last
            while axis >= 0, index[axis] >= layout.shape[axis] {
                offset -= index[axis] * layout.strides[axis]
                index[axis] = 0
                axis -= 1
                if axis >= 0 {
                    index[axis] += 1
                    offset += layout.strides[axis]
                }
            }
        }
    }

    /// Copies elements `start..<start + count` into `destination`, converting with `convert`.
    @inline(__always)
    func gather<Source, Destination>(
        _ source: UnsafePointer<Source>, from start: Int, count: Int, into destination: UnsafeMutablePointer<Destination>,
        _ convert: (Source) -> Destination
    ) {
        forEachRun(from: start, count: count) { offset, stride, length, at in
            var s = offset
            for i in 0..<length {
                destination[at + i] = convert(source[s])
                s += stride
            }
        }
    }
}

/// Byte-level copies between layouts of one shape, for any scalar type.
enum StridedCopy {
    /// Copies a strided view into a row-major destination, in parallel for large views.
    /// Rows along the last axis are `memcpy`'d when contiguous; 2-D transposes go in cache blocks.
    static func copy(_ source: UnsafeRawPointer, _ layout: Layout, to destination: UnsafeMutableRawPointer, elementSize: Int) {
        let count = layout.elementCount
        guard count > 0 else { return }
        if layout.isContiguous {
            destination.copyMemory(from: source + layout.offset * elementSize, byteCount: count * elementSize)
            return
        }
        switch elementSize {
        case 1: copyTyped(source.assumingMemoryBound(to: UInt8.self), layout, destination.assumingMemoryBound(to: UInt8.self))
        case 2: copyTyped(source.assumingMemoryBound(to: UInt16.self), layout, destination.assumingMemoryBound(to: UInt16.self))
        default: copyTyped(source.assumingMemoryBound(to: UInt32.self), layout, destination.assumingMemoryBound(to: UInt32.self))
        }
    }

    private static func copyTyped<T>(_ source: UnsafePointer<T>, _ layout: Layout, _ destination: UnsafeMutablePointer<T>) {
        let count = layout.elementCount
        let rank = layout.rank
        // A transpose of the last two axes: copy in square tiles so both sides stay in cache.
        if rank >= 2, layout.strides[rank - 1] != 1, layout.shape[rank - 1] > 1, layout.shape[rank - 2] > 1 {
            let rows = layout.shape[rank - 2]
            let columns = layout.shape[rank - 1]
            let rowStride = layout.strides[rank - 2]
            let columnStride = layout.strides[rank - 1]
            let planes = count / (rows * columns)
            let planeLayout = Layout(shape: Array(layout.shape.dropLast(2)), strides: Array(layout.strides.dropLast(2)), offset: layout.offset)
            let planeOffsets = planeLayout.elementOffsets()
            let tile = 32
            Parallel.forEachRange(planes * ((rows + tile - 1) / tile), parts: Parallel.workerCount(forElements: count)) { range in
                for job in range {
                    let plane = job / ((rows + tile - 1) / tile)
                    let rowStart = (job % ((rows + tile - 1) / tile)) * tile
                    let base = planeOffsets[plane]
                    let out = destination + plane * rows * columns
                    var columnStart = 0
                    while columnStart < columns {
                        for r in rowStart..<min(rows, rowStart + tile) {
                            var s = base + r * rowStride + columnStart * columnStride
                            for c in columnStart..<min(columns, columnStart + tile) {
                                out[r * columns + c] = source[s]
                                s += columnStride
                            }
                        }
                        columnStart += tile
                    }
                }
            }
            return
        }
        let runs = StridedRuns(layout: layout)
        let lastLength = max(layout.shape.last ?? 1, 1)
        Parallel.forEachRange(count, parts: Parallel.workerCount(forElements: count), alignment: lastLength) { range in
            runs.forEachRun(from: range.lowerBound, count: range.count) { offset, stride, length, at in
                let out = destination + range.lowerBound + at
                if stride == 1 {
                    out.update(from: source + offset, count: length)
                } else {
                    var s = offset
                    for i in 0..<length {
                        out[i] = source[s]
                        s += stride
                    }
                }
            }
        }
    }
}
