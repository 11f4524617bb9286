import CIntrinsics

/// Convolutions over one or two spatial axes as products whose columns matrix is never written
/// (implicit im2col).
///
/// Each input channel is copied once into zero-padded phase planes: with strides (sH, sW), phase
/// (ph, pw) holds the padded input's rows `i·sH + ph` and columns `j·sW + pw`, in rows of
/// `Wq = Wout + ⌊(kW - 1)·dW / sW⌋` floats (at stride 1, one phase: the padded plane itself). Tap
/// (kh, kw) reads phase `(kh·dH mod sH, kw·dW mod sW)` at row and column offsets
/// `(⌊kh·dH / sH⌋, ⌊kw·dW / sW⌋)`, so output position (oh, ow) is flat position `q = oh·Wq + ow`
/// and every tap of 32 consecutive positions reads 32 consecutive floats of one phase plane,
/// which the product kernel loads in place (`te_sgemm_implicit`). A row of positions holds
/// `Wq - Wout` positions past the output (their windows run into the next row); they are
/// computed and dropped as the kernel stores the others into the output. im2col wrote `C·kH·kW`
/// floats per output position that the kernel read back from memory; the phase planes together
/// are about the input's size and stay in cache while every tap reads them.
///
/// Two kernels read the planes. `te_sgemm_implicit` puts 32 positions of the flat grid in a tile's
/// lanes and 12 output channels in its rows; `te_conv_channels` (convolutions.h) puts 32 output
/// channels in the lanes and up to 14 positions of one output row in the rows, so that no lane
/// computes a grid position past the output row or past the plane. The second takes the
/// convolutions whose lanes it fills at least as well, from 64 steps of k on (below, transposing
/// each tile for its store costs more than the lanes save): a 3 × 3 convolution on a 13 × 13 plane
/// used 75% of the first kernel's lanes. A pointwise convolution at stride 1 with more than 24
/// output channels (fewer go to the few-row product) takes the second kernel on the same terms,
/// reading its input's planes in place: no phase planes, and no columns packed for a product. A
/// window of one tap strided or padded (a ResNet's downsampling shortcut) reads one phase plane
/// per channel, its input subsampled, and takes the second kernel on the same terms.
extension OpenBLASBackend {
    /// Whether ``implicitConvolution`` computes a convolution: the engine's AVX-512 product
    /// kernel, at most two spatial axes, and phase planes at most a few times the size of the
    /// input and output planes (huge paddings and dilations go through im2col). A window of one
    /// tap only with output channels across the lanes (more than the 24 the few-row product
    /// takes; ``convolvesByChannels(_:_:outPerGroup:reduction:)``): at stride 1 without padding
    /// the input's planes read in place, else one phase plane per channel; otherwise its input is
    /// already a product's columns (or, strided, a plain copy) and the product kernel packs them.
    static func convolvesImplicitly(_ shape: WindowShape3D, outPerGroup: Int, reduction: Int) -> Bool {
        guard HostProducts.kernel == .avx512, shape.input[0] == 1, shape.kernel[0] == 1, shape.output[0] == 1,
            let phases = PhasePlanes(shape)
        else { return false }
        if shape.kernelCount == 1 {
            // In place, or (strided or padded) from one phase plane per channel, the input
            // subsampled: a ResNet's downsampling shortcut.
            return outPerGroup > 24 && convolvesByChannels(shape, phases, outPerGroup: outPerGroup, reduction: reduction)
        }
        return phases.channelFloats <= 4 * Swift.max(shape.input[1] * shape.input[2], shape.outputCount) + 4096
    }

    /// Whether ``implicitConvolution`` puts output channels in the kernel's lanes
    /// (`te_conv_channels`) rather than grid positions (`te_sgemm_implicit`): from 64 steps of k
    /// on, when the share of lanes holding an output is at least as high. Channels fill whole
    /// vectors of 16 but the last; positions lose the grid's overhang past each output row and
    /// the last partial panel of 32.
    static func convolvesByChannels(_ shape: WindowShape3D, _ phases: PhasePlanes, outPerGroup: Int, reduction: Int)
        -> Bool
    {
        guard reduction >= 64, outPerGroup >= 16 else { return false }
        let channelLanes = Double(outPerGroup) / Double((outPerGroup + 15) / 16 * 16)
        let grid = Double(shape.output[1]) * Double(phases.rowFloats)
        let positionLanes = Double(shape.outputCount) / ((grid / 32).rounded(.up) * 32)
        return channelLanes >= positionLanes
    }

    /// Where the phase planes of one input channel lie: `strides[1]·strides[2]` planes of
    /// `rows × rowFloats` floats, phase (ph, pw) at `(ph·strides[2] + pw)·planeFloats`. A window
    /// of one tap reads only phase (0, 0): its channels have that plane alone (`phaseCount` 1).
    struct PhasePlanes {
        let rows: Int
        let rowFloats: Int
        let planeFloats: Int
        let phaseCount: Int
        let channelFloats: Int
        let strides: (rows: Int, columns: Int)

        /// `nil` when a count overflows.
        init?(_ shape: WindowShape3D) {
            let (sH, sW) = (shape.strides[1], shape.strides[2])
            let (spanH, overflowH) = (shape.kernel[1] - 1).multipliedReportingOverflow(by: shape.dilations[1])
            let (spanW, overflowW) = (shape.kernel[2] - 1).multipliedReportingOverflow(by: shape.dilations[2])
            guard !overflowH, !overflowW, sH > 0, sW > 0 else { return nil }
            let (rows, rowsOverflow) = shape.output[1].addingReportingOverflow(spanH / sH)
            let (rowFloats, widthOverflow) = shape.output[2].addingReportingOverflow(spanW / sW)
            let (plane, planeOverflow) = rows.multipliedReportingOverflow(by: rowFloats)
            let (allPhases, phasesOverflow) = sH.multipliedReportingOverflow(by: sW)
            let phases = shape.kernelCount == 1 ? 1 : allPhases
            let (channel, channelOverflow) = plane.multipliedReportingOverflow(by: phases)
            guard !rowsOverflow, !widthOverflow, !planeOverflow, !phasesOverflow, !channelOverflow else { return nil }
            (self.rows, self.rowFloats, planeFloats, phaseCount, channelFloats, strides) =
                (rows, rowFloats, plane, phases, channel, (sH, sW))
        }

        /// Where tap (kh, kw) of output position 0 reads, from its channel's first phase plane.
        func offset(kh: Int, kw: Int, _ shape: WindowShape3D) -> Int {
            let (row, column) = (kh * shape.dilations[1], kw * shape.dilations[2])
            let phase = (row % strides.rows) * strides.columns + column % strides.columns
            return phase * planeFloats + (row / strides.rows) * rowFloats + column / strides.columns
        }
    }

    /// The convolution, batch by batch and group by group: the group's input padded into planes
    /// (by all cores), then pieces computed by one of the two kernels, which store every output
    /// straight into its plane with the bias and a fused residual added (and bounded by the clamp
    /// of an activation fused in). Positions across the lanes (`te_sgemm_implicit`): pieces of
    /// whole output rows (or, for planes of few positions, slices of the output channels), each
    /// computed on the flat grid, the positions past an output row dropped. Output channels
    /// across the lanes (`te_conv_channels`, ``convolvesByChannels(_:_:outPerGroup:reduction:)``):
    /// pieces of near-equal counts of (panel of 32 channels, output row). The filters are packed
    /// whole (kept by ``PackedWeights`` when they sit in `weights`, a model's constant).
    func implicitConvolution(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, in weights: HostBuffer?, _ sums: ConvolutionSums,
        _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D, batch: Int, channels: Int, groups: Int,
        outPerGroup: Int
    ) throws(TensorError) {
        let inPerGroup = channels / groups
        let reduction = inPerGroup * shape.kernelCount
        let (outRows, outColumns) = (shape.output[1], shape.output[2])
        guard outRows > 0, outColumns > 0 else { return }
        guard let phases = PhasePlanes(shape) else {
            throw TensorError(.tooLarge, op: "convolution", message: "the convolution's phase planes overflow an Int")
        }
        let rowFloats = phases.rowFloats
        // Reads run past a plane's end by up to a window's width and a panel (32 positions).
        let slack = rowFloats + 64
        var rowOffsets: [Int] = []
        rowOffsets.reserveCapacity(reduction)
        for channel in 0..<inPerGroup {
            for kh in 0..<shape.kernel[1] {
                for kw in 0..<shape.kernel[2] {
                    rowOffsets.append(channel * phases.channelFloats + phases.offset(kh: kh, kw: kw, shape))
                }
            }
        }
        // A pointwise convolution (only by channels, which read no further than each output row)
        // reads its input's planes in place; the others, planes padded here.
        let inPlace = shape.readsInputAsPlanes
        let planeBytes = (inPerGroup * phases.channelFloats + slack) * 4
        let padded = inPlace ? nil : try HostBuffer(byteCount: planeBytes, op: "convolution")
        var planes = UnsafeMutablePointer(mutating: x)
        if let padded {
            planes = padded.elements(as: Float.self)
            (planes + inPerGroup * phases.channelFloats).initialize(repeating: 0, count: slack)
        }
        let byChannels =
            inPlace || Self.convolvesByChannels(shape, phases, outPerGroup: outPerGroup, reduction: reduction)
        let wanted = Parallel.workers * MatmulSplit.piecesPerWorker
        // Output channels across the lanes: each group's filters packed as B stored transposed,
        // and pieces of near-equal counts of (panel of 32 channels, output row) units.
        // Positions across the lanes: pieces of whole output rows of at least 128 positions; too
        // few for the workers: slices of the output channels too, of at least one tile (12 rows),
        // so that a worker late to wake still finds pieces to take; each slice's filters packed as A.
        let rowPieces = Swift.max(1, Swift.min(outRows, wanted, outRows * rowFloats / 128))
        let slices =
            byChannels || rowPieces >= Parallel.workers
            ? 1 : Swift.max(1, Swift.min(wanted / rowPieces, outPerGroup / Int(TE_MR)))
        let sliceRows = (outPerGroup + slices - 1) / slices
        let rowsPerPiece = (outRows + rowPieces - 1) / rowPieces
        let panels = (outPerGroup + Int(TE_NR) - 1) / Int(TE_NR)
        let runs = ChannelRuns(byChannels: byChannels, rows: outRows, columns: outColumns, rowFloats: rowFloats)
        let tasks = byChannels ? panels * runs.count : slices * ((outRows + rowsPerPiece - 1) / rowsPerPiece)
        let parts = Swift.min(tasks, wanted)
        let filters = try (0..<groups * slices).map { index throws(TensorError) -> HostBuffer in
            if byChannels {
                return try Self.channelPanels(w + index * outPerGroup * reduction, in: weights, n: outPerGroup,
                                              k: reduction)
            }
            let (group, slice) = index.quotientAndRemainder(dividingBy: slices)
            let first = slice * sliceRows
            return try Self.packedFilters(
                w + (group * outPerGroup + first) * reduction, in: weights,
                m: Swift.max(0, Swift.min(sliceRows, outPerGroup - first)), k: reduction)
        }
        for plane in 0..<(batch * groups) {
            let (n, group) = plane.quotientAndRemainder(dividingBy: groups)
            let groupInput = x + (n * channels + group * inPerGroup) * shape.inputCount
            if inPlace {
                planes = UnsafeMutablePointer(mutating: groupInput)
            } else {
                Self.pad(groupInput, into: planes, phases, shape, channels: inPerGroup)
            }
            let result = out + plane * outPerGroup * shape.outputCount
            let bias = sums.bias.map { $0 + group * outPerGroup }
            let residual = sums.residual.map { $0 + (result - out) }
            rowOffsets.withUnsafeBufferPointer { offsets in
                guard let offsets = offsets.baseAddress else { return }
                Parallel.forEachRange(parts, parts: parts) { pieces in
                    for piece in pieces {
                        if byChannels {
                            // Units (panel, run of positions) panel by panel; this piece's run of them.
                            let (first, end) = (piece * tasks / parts, (piece + 1) * tasks / parts)
                            let filterPanels = filters[group].elements(as: Float.self)
                            for panel in (first / runs.count)..<((end + runs.count - 1) / runs.count) {
                                let units =
                                    (Swift.max(first, panel * runs.count) - panel * runs.count)
                                    ..< (Swift.min(end, (panel + 1) * runs.count) - panel * runs.count)
                                withBounds(sums.clamp) { bounds in
                                    runs.forEach(units) { start, rows, rowLength, width in
                                        te_conv_channels(
                                            outPerGroup, reduction, filterPanels, planes + start, offsets,
                                            rows.lowerBound, rows.upperBound, rowLength, width, result + start,
                                            shape.outputCount, bias, residual.map { $0 + start }, bounds, panel,
                                            panel + 1, units.lowerBound == 0 && start == 0 ? 1 : 0, inPlace ? 1 : 0)
                                    }
                                }
                            }
                            continue
                        }
                        for task in Swift.stride(from: piece, to: tasks, by: parts) {
                            let (rowPiece, slice) = task.quotientAndRemainder(dividingBy: slices)
                            let firstRow = rowPiece * rowsPerPiece
                            let rows = Swift.min(rowsPerPiece, outRows - firstRow)
                            let first = slice * sliceRows
                            let count = Swift.min(sliceRows, outPerGroup - first)
                            guard count > 0, rows > 0 else { continue }
                            // The task's rows of its channels' output planes, written by the kernel.
                            let start = first * shape.outputCount + firstRow * outColumns
                            withBounds(sums.clamp) { bounds in
                                te_sgemm_implicit(
                                    count, reduction, filters[group * slices + slice].elements(as: Float.self),
                                    planes + firstRow * rowFloats, offsets, 0, rows * rowFloats, result + start,
                                    shape.outputCount, rowFloats, outColumns, bias.map { $0 + first },
                                    residual.map { $0 + start }, bounds)
                            }
                        }
                    }
                }
            }
        }
        withExtendedLifetime((padded, filters)) {}
    }

    /// The units into which ``implicitConvolution`` splits an output plane for `te_conv_channels`,
    /// whose tiles are up to `TE_CONV_POSITIONS` positions of one row of the grid: output rows,
    /// or, on a grid without overhang (a window one tap wide: the grid's positions are the
    /// output's, in order), runs of ``flatRun`` positions taken as one row each, so that the
    /// tiles of a plane of short rows (a pointwise convolution on 7 × 7) are full but for the
    /// plane's last.
    struct ChannelRuns {
        /// Positions of a run on a grid without overhang: 8 full tiles.
        static let flatRun = 8 * Int(TE_CONV_POSITIONS)

        let flat: Bool
        let rows: Int
        let columns: Int
        let rowFloats: Int
        /// Units per output plane.
        let count: Int

        init(byChannels: Bool, rows: Int, columns: Int, rowFloats: Int) {
            (self.rows, self.columns, self.rowFloats) = (rows, columns, rowFloats)
            flat = byChannels && rowFloats == columns
            count = flat ? (rows * columns + Self.flatRun - 1) / Self.flatRun : rows
        }

        /// Calls `body` with `te_conv_channels`'s terms for `units`: the offset of the first
        /// position in the grid and the output plane (the same: 0 for rows), the grid rows, the
        /// floats between them, and the positions stored per row.
        func forEach(_ units: Range<Int>, _ body: (Int, Range<Int>, Int, Int) -> Void) {
            guard flat else { return body(0, units, rowFloats, columns) }
            for unit in units {
                let start = unit * Self.flatRun
                let width = Swift.min(Self.flatRun, rows * columns - start)
                body(start, 0..<1, width, width)
            }
        }
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

    /// `n` output channels of filters (rows `k` floats apart) packed for `te_conv_channels`: as the
    /// right operand of a product stored transposed (`te_pack_b_panels`), kept by
    /// ``PackedWeights`` from their second use when they sit in `weights`, else packed now.
    private static func channelPanels(_ w: UnsafePointer<Float>, in weights: HostBuffer?, n: Int, k: Int)
        throws(TensorError) -> HostBuffer
    {
        if let weights,
            let kept = PackedWeights.shared.packed(w, in: weights, transposed: true, k: k, n: n, ldb: k, workers: 1)
        {
            return kept
        }
        let packed = try HostBuffer(byteCount: te_packed_b_floats(k, n) * 4, op: "convolution")
        te_pack_b_panels(1, k, n, w, k, packed.elements(as: Float.self), 0, (n + Int(TE_NR) - 1) / Int(TE_NR))
        return packed
    }

    /// The input's channels copied into their zero-padded phase planes, the input's first row and
    /// column at the window's padding before them; every float of every plane is written once
    /// (by all cores), without a call to the C library for each short run of a row. At column
    /// stride 2 each input row is read once for both of its column phases (`te_phase_rows2`).
    private static func pad(
        _ input: UnsafePointer<Float>, into planes: UnsafeMutablePointer<Float>, _ phases: PhasePlanes,
        _ shape: WindowShape3D, channels: Int
    ) {
        let (inRows, inColumns) = (shape.input[1], shape.input[2])
        let (top, left) = (shape.before[1], shape.before[2])
        let (rowStride, columnStride) = phases.strides
        let width = phases.rowFloats
        let phaseCount = phases.phaseCount
        let parts = Parallel.workerCount(forElements: channels * phases.channelFloats)
        if columnStride == 2, phaseCount == rowStride * 2 {
            // Both column phases of a row phase from one pass over each input row.
            Parallel.forEachRange(channels * rowStride, parts: parts) { range in
                for index in range {
                    let (channel, rowPhase) = index.quotientAndRemainder(dividingBy: rowStride)
                    let source = input + channel * inRows * inColumns
                    let even = planes + channel * phases.channelFloats + rowPhase * 2 * phases.planeFloats
                    let odd = even + phases.planeFloats
                    for row in 0..<phases.rows {
                        let inRow = row * rowStride + rowPhase - top
                        if inRow >= 0, inRow < inRows {
                            te_phase_rows2(source + inRow * inColumns, inColumns, left, even + row * width,
                                           odd + row * width, width)
                        } else {
                            te_pad_row(source, 0, 0, even + row * width, width)
                            te_pad_row(source, 0, 0, odd + row * width, width)
                        }
                    }
                }
            }
            return
        }
        // By phase plane: a few channels (an image's three) still give every worker planes.
        Parallel.forEachRange(channels * phaseCount, parts: parts) { range in
            for index in range {
                let (channel, phase) = index.quotientAndRemainder(dividingBy: phaseCount)
                let source = input + channel * inRows * inColumns
                let (rowPhase, columnPhase) = phase.quotientAndRemainder(dividingBy: columnStride)
                let plane = planes + channel * phases.channelFloats + phase * phases.planeFloats
                // Phase columns j read input columns j·sW + pw - left: those inside the input.
                let first = Swift.min(width, Swift.max(0, (left - columnPhase + columnStride - 1) / columnStride))
                let end = Swift.max(
                    first, Swift.min(width, (inColumns + left - columnPhase + columnStride - 1) / columnStride))
                let start = first * columnStride + columnPhase - left
                for row in 0..<phases.rows {
                    let target = plane + row * width
                    let inRow = row * rowStride + rowPhase - top
                    guard inRow >= 0, inRow < inRows, end > first else {
                        te_pad_row(source, 0, 0, target, width)
                        continue
                    }
                    let line = source + inRow * inColumns + start
                    if columnStride == 1 {
                        te_pad_row(line, first, end - first, target, width)
                        continue
                    }
                    // The padding on either side: rows of zeros as short as these.
                    te_pad_row(line, 0, 0, target, first)
                    if columnStride == 2 {
                        te_every_second(line, end - first, target + first)
                    } else {
                        for j in 0..<(end - first) { target[first + j] = line[j * columnStride] }
                    }
                    te_pad_row(line, 0, 0, target + end, width - end)
                }
            }
        }
    }
}
