import CIntrinsics

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
        if elementSize == 4, CPUFlags.usesAVX512, transposeInRegisters(source, layout, destination) { return }
        switch elementSize {
        case 1: copyTyped(source.assumingMemoryBound(to: UInt8.self), layout, destination.assumingMemoryBound(to: UInt8.self))
        case 2: copyTyped(source.assumingMemoryBound(to: UInt16.self), layout, destination.assumingMemoryBound(to: UInt16.self))
        case 4: copyTyped(source.assumingMemoryBound(to: UInt32.self), layout, destination.assumingMemoryBound(to: UInt32.self))
        // 8, the one size left (`ScalarType.byteCount` is 1, 2, 4 or 8).
        default: copyTyped(source.assumingMemoryBound(to: UInt64.self), layout, destination.assumingMemoryBound(to: UInt64.self))
        }
    }

    /// The side of the square tiles a transpose goes through (16 floats: one cache line).
    static let transposeTile = 16

    /// The side of the square blocks the AVX-512 transpose shares out, in elements: 64 source lines
    /// and 64 destination rows, 16 KiB each, stay in the L1 cache and the TLB while a block's 16
    /// tiles go through registers. On [4096, 4096] on one core, blocks of 64 ran in 7.1 ms, of 32
    /// in 13.2 and of 16 in 12.6 (lines 16 KiB apart share cache sets).
    static let transposeBlock = 64

    /// Copies a view whose last two axes are transposed, `rows × columns` per plane with the source
    /// contiguous along the rows, by 16 × 16 tiles in AVX-512 registers (`te_transpose_block`), in
    /// blocks shared out among the workers. Outputs of ``ElementwiseEngine/streamingOutputElements``
    /// or more go by streaming stores when each row is 64-byte aligned. Returns `false`, copying
    /// nothing, for other layouts.
    private static func transposeInRegisters(
        _ source: UnsafeRawPointer, _ layout: Layout, _ destination: UnsafeMutableRawPointer
    ) -> Bool {
        let rank = layout.rank
        guard rank >= 2, layout.strides[rank - 2] == 1, layout.strides[rank - 1] != 1 else { return false }
        let rows = layout.shape[rank - 2]
        let columns = layout.shape[rank - 1]
        guard rows >= transposeTile, columns >= transposeTile else { return false }
        let columnStride = layout.strides[rank - 1]
        let count = layout.elementCount
        let planeLayout = Layout(
            shape: Array(layout.shape.dropLast(2)), strides: Array(layout.strides.dropLast(2)), offset: layout.offset)
        let planeOffsets = planeLayout.elementOffsets()
        let from = source.assumingMemoryBound(to: Float.self)
        let into = destination.assumingMemoryBound(to: Float.self)
        let streaming: Int32 =
            count >= ElementwiseEngine.streamingOutputElements && columns % 16 == 0
                && Int(bitPattern: destination) % 64 == 0 ? 1 : 0
        let block = transposeBlock
        let rowBlocks = (rows + block - 1) / block
        let columnBlocks = (columns + block - 1) / block
        let blocksPerPlane = rowBlocks * columnBlocks
        Parallel.forEachRange(planeOffsets.count * blocksPerPlane, parts: Parallel.workerCount(forElements: count)) {
            range in
            for job in range {
                let plane = job / blocksPerPlane
                let rowStart = (job % blocksPerPlane) / columnBlocks * block
                let columnStart = job % columnBlocks * block
                te_transpose_block(
                    from + planeOffsets[plane] + columnStart * columnStride + rowStart, columnStride,
                    into + plane * rows * columns + rowStart * columns + columnStart, columns,
                    min(block, rows - rowStart), min(block, columns - columnStart), streaming)
            }
        }
        return true
    }

    private static func copyTyped<T>(_ source: UnsafePointer<T>, _ layout: Layout, _ destination: UnsafeMutablePointer<T>) {
        let count = layout.elementCount
        let rank = layout.rank
        // A transpose of the last two axes, in 16 x 16 tiles through a small buffer: each tile is
        // read one source line at a time and written one destination line at a time. Copying
        // straight across a tile touches a line per row on both sides, and with a power-of-two
        // row length those lines share a cache set (a 4096-float row is 16 KiB): on [4096, 4096],
        // 32 x 32 tiles ran at 5.4 GB/s, 8 x 8 at 8.3, this way at 9.2 (24.7 -> 14.6 ms).
        if rank >= 2, layout.strides[rank - 1] != 1, layout.shape[rank - 1] > 1, layout.shape[rank - 2] > 1 {
            let rows = layout.shape[rank - 2]
            let columns = layout.shape[rank - 1]
            let rowStride = layout.strides[rank - 2]
            let columnStride = layout.strides[rank - 1]
            let planes = count / (rows * columns)
            let planeLayout = Layout(shape: Array(layout.shape.dropLast(2)), strides: Array(layout.strides.dropLast(2)), offset: layout.offset)
            let planeOffsets = planeLayout.elementOffsets()
            let tile = transposeTile
            let rowTiles = (rows + tile - 1) / tile
            Parallel.forEachRange(planes * rowTiles, parts: Parallel.workerCount(forElements: count)) { range in
                withUnsafeTemporaryAllocation(of: T.self, capacity: tile * tile) { buffer in
                    guard let staged = buffer.baseAddress else { return }
                    for job in range {
                        let plane = job / rowTiles
                        let rowStart = (job % rowTiles) * tile
                        let rowCount = min(tile, rows - rowStart)
                        let base = planeOffsets[plane] + rowStart * rowStride
                        let out = destination + plane * rows * columns + rowStart * columns
                        var columnStart = 0
                        while columnStart < columns {
                            let columnCount = min(tile, columns - columnStart)
                            // Read: source column c of the tile holds the tile's rows (one line
                            // when rows are adjacent in memory, as in a transposed view).
                            for c in 0..<columnCount {
                                let from = source + base + (columnStart + c) * columnStride
                                let into = staged + c * tile
                                for r in 0..<rowCount { into[r] = from[r * rowStride] }
                            }
                            // Write: destination row r of the tile, contiguous.
                            for r in 0..<rowCount {
                                let into = out + r * columns + columnStart
                                for c in 0..<columnCount { into[c] = staged[c * tile + r] }
                            }
                            columnStart += tile
                        }
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
