import CIntrinsics

/// Stride-1 convolutions as products whose columns matrix is never written (implicit im2col).
///
/// Each input channel is copied once into a zero-padded plane whose rows hold `Wp = Wout + (kW - 1)·dW`
/// floats. Output position (oh, ow) is then flat position `q = oh·Wp + ow`, and tap (c, kh, kw) of
/// every position reads the padded plane at `q + c·plane + kh·dH·Wp + kw·dW`: 32 consecutive
/// positions read 32 consecutive floats, which the product kernel loads in place
/// (`te_sgemm_implicit`). A row of positions holds `Wp - Wout` positions past the output (their
/// windows run into the next row); they are computed and dropped. im2col wrote `C·kH·kW` floats per
/// output position that the kernel read back from memory; the padded planes are about the input's
/// size and stay in cache while every tap reads them.
extension OpenBLASBackend {
    /// Whether ``implicitConvolution`` computes a convolution: the engine's AVX-512 product
    /// kernel, at most two spatial axes, unit strides, a window of more than one tap (a pointwise
    /// convolution's input is already its columns), and padded planes at most a few times the
    /// size of the input and output planes (huge paddings and dilations go through im2col).
    static func convolvesImplicitly(_ shape: WindowShape3D) -> Bool {
        guard HostProducts.kernel == .avx512, shape.input[0] == 1, shape.kernel[0] == 1, shape.output[0] == 1,
            shape.strides[1] == 1, shape.strides[2] == 1, shape.kernelCount > 1,
            let plane = paddedPlaneFloats(shape)
        else { return false }
        return plane <= 4 * Swift.max(shape.input[1] * shape.input[2], shape.outputCount) + 4096
    }

    /// Floats in one padded plane (`Hp · Wp`), or `nil` when the count overflows.
    private static func paddedPlaneFloats(_ shape: WindowShape3D) -> Int? {
        let (rows, rowsOverflow) = (shape.kernel[1] - 1).multipliedReportingOverflow(by: shape.dilations[1])
        let (columns, columnsOverflow) = (shape.kernel[2] - 1).multipliedReportingOverflow(by: shape.dilations[2])
        guard !rowsOverflow, !columnsOverflow else { return nil }
        let (height, heightOverflow) = shape.output[1].addingReportingOverflow(rows)
        let (width, widthOverflow) = shape.output[2].addingReportingOverflow(columns)
        let (plane, planeOverflow) = height.multipliedReportingOverflow(by: width)
        return heightOverflow || widthOverflow || planeOverflow ? nil : plane
    }

    /// The convolution, batch by batch and group by group: the group's input padded into planes
    /// (by all cores), then pieces of whole output rows (or, for planes of few positions, slices
    /// of the output channels) each computed into scratch on the flat grid and copied out row by
    /// row with the bias (and bounded by `clamp`, an activation fused in). The filters are packed whole (kept by ``PackedWeights`` when they sit in
    /// `weights`, a model's constant).
    func implicitConvolution(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, in weights: HostBuffer?, _ bias: UnsafePointer<Float>?,
        _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D, batch: Int, channels: Int, groups: Int,
        outPerGroup: Int, clamp: OutputClamp?
    ) throws(TensorError) {
        let inPerGroup = channels / groups
        let reduction = inPerGroup * shape.kernelCount
        let (outRows, outColumns) = (shape.output[1], shape.output[2])
        let rowFloats = outColumns + (shape.kernel[2] - 1) * shape.dilations[2]
        let planeFloats = (outRows + (shape.kernel[1] - 1) * shape.dilations[1]) * rowFloats
        // Reads run past a plane's end by up to a window's width and a panel (32 positions).
        let slack = rowFloats + 64
        var rowOffsets: [Int] = []
        rowOffsets.reserveCapacity(reduction)
        for channel in 0..<inPerGroup {
            for kh in 0..<shape.kernel[1] {
                for kw in 0..<shape.kernel[2] {
                    rowOffsets.append(
                        channel * planeFloats + kh * shape.dilations[1] * rowFloats + kw * shape.dilations[2])
                }
            }
        }
        // Pieces of whole output rows of at least 128 positions; too few for the workers: slices
        // of the output channels too, of at least one tile (12 rows), so that a worker late to
        // wake still finds pieces to take.
        let wanted = Parallel.workers * MatmulSplit.piecesPerWorker
        let rowPieces = Swift.max(1, Swift.min(outRows, wanted, outRows * rowFloats / 128))
        let slices =
            rowPieces >= Parallel.workers ? 1 : Swift.max(1, Swift.min(wanted / rowPieces, outPerGroup / Int(TE_MR)))
        let sliceRows = (outPerGroup + slices - 1) / slices
        let rowsPerPiece = (outRows + rowPieces - 1) / rowPieces
        let tasks = slices * ((outRows + rowsPerPiece - 1) / rowsPerPiece)
        let parts = Swift.min(tasks, Parallel.workers * MatmulSplit.piecesPerWorker)
        let scratchFloats = sliceRows * rowsPerPiece * rowFloats
        let padded = try HostBuffer(byteCount: (inPerGroup * planeFloats + slack) * 4, op: "convolution")
        let scratch = try HostBuffer(byteCount: parts * scratchFloats * 4, op: "convolution")
        let planes = padded.elements(as: Float.self)
        (planes + inPerGroup * planeFloats).initialize(repeating: 0, count: slack)
        let filters = try (0..<groups * slices).map { index throws(TensorError) -> HostBuffer in
            let (group, slice) = index.quotientAndRemainder(dividingBy: slices)
            let first = slice * sliceRows
            return try Self.packedFilters(
                w + (group * outPerGroup + first) * reduction, in: weights,
                m: Swift.max(0, Swift.min(sliceRows, outPerGroup - first)), k: reduction)
        }
        for plane in 0..<(batch * groups) {
            let (n, group) = plane.quotientAndRemainder(dividingBy: groups)
            Self.pad(x + (n * channels + group * inPerGroup) * shape.inputCount, into: planes, shape,
                     channels: inPerGroup, rowFloats: rowFloats, planeFloats: planeFloats)
            let result = out + plane * outPerGroup * shape.outputCount
            rowOffsets.withUnsafeBufferPointer { offsets in
                guard let offsets = offsets.baseAddress else { return }
                Parallel.forEachRange(parts, parts: parts) { pieces in
                    for piece in pieces {
                        for task in Swift.stride(from: piece, to: tasks, by: parts) {
                            let (rowPiece, slice) = task.quotientAndRemainder(dividingBy: slices)
                            let firstRow = rowPiece * rowsPerPiece
                            let rows = Swift.min(rowsPerPiece, outRows - firstRow)
                            let first = slice * sliceRows
                            let count = Swift.min(sliceRows, outPerGroup - first)
                            guard count > 0, rows > 0 else { continue }
                            let positions = rows * rowFloats
                            let grid = scratch.elements(as: Float.self) + piece * scratchFloats
                            te_sgemm_implicit(
                                count, reduction, filters[group * slices + slice].elements(as: Float.self),
                                planes + firstRow * rowFloats, offsets, 0, positions, grid, positions)
                            for channel in 0..<count {
                                let outChannel = first + channel
                                let shift = bias?[group * outPerGroup + outChannel] ?? 0
                                for row in 0..<rows {
                                    let source = grid + channel * positions + row * rowFloats
                                    let target = result + outChannel * shape.outputCount + (firstRow + row) * outColumns
                                    Self.copyOut(source, target, count: outColumns, shift: shift, clamp)
                                }
                            }
                        }
                    }
                }
            }
        }
        withExtendedLifetime((padded, scratch, filters)) {}
    }

    /// `m` rows of filters (rows `k` floats apart) packed whole: kept by ``PackedWeights`` from
    /// their second use when they sit in `weights`, else packed now.
    private static func packedFilters(_ a: UnsafePointer<Float>, in weights: HostBuffer?, m: Int, k: Int)
        throws(TensorError) -> HostBuffer
    {
        if let weights, let kept = PackedWeights.shared.packedLeft(a, in: weights, m: m, k: k, lda: k) { return kept }
        let packed = try HostBuffer(byteCount: te_packed_a_floats(m, k) * 4, op: "convolution")
        te_pack_a_whole(a, k, m, k, packed.elements(as: Float.self))
        return packed
    }

    /// The input's channels copied into zero-padded planes of `planeFloats` floats, rows of
    /// `rowFloats`, the input's first row and column at the window's padding before them; every
    /// float of every plane is written once (by all cores).
    private static func pad(
        _ input: UnsafePointer<Float>, into planes: UnsafeMutablePointer<Float>, _ shape: WindowShape3D,
        channels: Int, rowFloats: Int, planeFloats: Int
    ) {
        let (inRows, inColumns) = (shape.input[1], shape.input[2])
        let (top, left) = (shape.before[1], shape.before[2])
        let paddedRows = planeFloats / rowFloats
        let lead = Swift.min(left, rowFloats)
        let copied = Swift.max(0, Swift.min(inColumns, rowFloats - lead))
        let parts = Parallel.workerCount(forElements: channels * planeFloats)
        Parallel.forEachRange(channels, parts: parts) { range in
            for channel in range {
                let source = input + channel * inRows * inColumns
                let plane = planes + channel * planeFloats
                for row in 0..<paddedRows {
                    let target = plane + row * rowFloats
                    let inRow = row - top
                    guard inRow >= 0, inRow < inRows, copied > 0 else {
                        target.update(repeating: 0, count: rowFloats)
                        continue
                    }
                    target.update(repeating: 0, count: lead)
                    (target + lead).update(from: source + inRow * inColumns, count: copied)
                    (target + lead + copied).update(repeating: 0, count: rowFloats - lead - copied)
                }
            }
        }
    }
}
