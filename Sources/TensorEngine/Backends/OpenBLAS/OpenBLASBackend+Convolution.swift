import CIntrinsics
import COpenBLAS

extension OpenBLASBackend {
    /// A convolution as matrix products: per batch and group, `Y[M/g, out] = W[M/g, C/g·k] ·
    /// cols[C/g·k, out]`, where `cols` holds each output position's receptive field (im2col, built
    /// in blocks of output rows so it stays in cache, by all cores; written straight in the
    /// product kernel's packed layout when the engine's kernel computes it). A 1×1 convolution at
    /// stride 1 without padding reads the input itself as `cols`; a depthwise convolution (one
    /// input channel per output channel) runs a direct kernel instead, output planes shared among
    /// the workers (OpenBLASBackend+Depthwise.swift).
    /// The engine's product kernel adds the bias (and a fused residual) and applies an activation
    /// fused in (the geometry's clamp) as it stores each tile of results, so the output is written
    /// once. With OpenBLAS's `sgemm`, the bias and residual are written first (by each piece, into
    /// its own part of the output), the products accumulate onto them, and the clamp bounds each
    /// piece's results once its product is done, while they are in cache.
    func convolution(
        _ geometry: ConvolutionGeometry, _ inputs: [Value], _ output: TensorSignature,
        into placement: OutputPlacement? = nil
    ) throws(TensorError) -> Value {
        let (result, start) = try allocate(output, for: "convolution", at: placement)
        guard output.elementCount > 0 else { return result }
        let (x, xOwner) = try contiguous(inputs[0])
        let (w, wOwner) = try contiguous(inputs[1])
        let (b, bOwner): (UnsafeMutableRawPointer?, Value?) =
            try geometry.biasIndex(operandCount: inputs.count).map { index throws(TensorError) in
                try contiguous(inputs[index])
            } ?? (nil, nil)
        let (r, rOwner): (UnsafeMutableRawPointer?, Value?) =
            try geometry.residualIndex(operandCount: inputs.count).map { index throws(TensorError) in
                try contiguous(inputs[index])
            } ?? (nil, nil)
        defer { withExtendedLifetime((xOwner, wOwner, bOwner, rOwner)) {} }
        let (input, weight) = (inputs[0].shape, inputs[1].shape)
        let shape = WindowShape3D(
            input: Array(input.dropFirst(2)), kernel: Array(weight.dropFirst(2)),
            output: Array(output.shape.dropFirst(2)),
            strides: geometry.strides, dilations: geometry.dilations, padding: geometry.padding)
        let out = start.assumingMemoryBound(to: Float.self)
        let (batch, channels, outChannels) = (input[0], input[1], output.shape[1])
        let groups = geometry.groups
        let (inPerGroup, outPerGroup) = (channels / groups, outChannels / groups)
        let planeCount = shape.outputCount
        let source = UnsafePointer(x.assumingMemoryBound(to: Float.self))
        let filters = UnsafePointer(w.assumingMemoryBound(to: Float.self))
        let bias = b.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
        let residual = r.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
        let sums = ConvolutionSums(bias: bias, residual: residual, clamp: geometry.clamp)
        if inPerGroup == 1, Self.takesDepthwisePlanes(shape) {
            Self.depthwisePlanes(
                source, filters, bias, residual, out, shape, planes: batch * outChannels, channels: channels,
                multiplier: outPerGroup, clamp: geometry.clamp)
            return result
        }
        if inPerGroup == 1, Self.stripsDepthwise(shape) {
            // The striped kernel starts each sum from the bias itself: no pass over the output
            // first; a residual is added after, with the bound.
            Self.stripedDepthwise(
                source, filters, bias, out, shape, planes: batch * outChannels, channels: channels,
                multiplier: outPerGroup, clamp: residual == nil ? geometry.clamp : nil)
            if let residual {
                Self.addResidual(residual, to: out, count: output.elementCount, clamp: geometry.clamp)
            }
            return result
        }
        // The products add onto the bias and the residual (or zeros), written first.
        if inPerGroup == 1 {
            Self.fillStarts(out, sums, planes: batch * outChannels, channels: outChannels, planeCount: planeCount)
            Self.depthwise(
                source, filters, out, shape, planes: batch * outChannels, channels: channels, multiplier: outPerGroup,
                clamp: geometry.clamp)
        } else if Self.convolvesImplicitly(shape, outPerGroup: outPerGroup, reduction: inPerGroup * shape.kernelCount) {
            try implicitConvolution(
                source, filters, in: wOwner.buffer as? HostBuffer, sums, out, shape, batch: batch, channels: channels,
                groups: groups, outPerGroup: outPerGroup)
        } else {
            try gemmConvolution(
                source, filters, in: wOwner.buffer as? HostBuffer, sums, out, shape, batch: batch, channels: channels,
                groups: groups, outPerGroup: outPerGroup)
        }
        return result
    }

    /// Every output plane set to its channel's bias (or 0) plus the residual's plane, by all cores.
    private static func fillStarts(
        _ out: UnsafeMutablePointer<Float>, _ sums: ConvolutionSums, planes: Int, channels: Int, planeCount: Int
    ) {
        let parts = Parallel.workerCount(forElements: planes * planeCount)
        Parallel.forEachRange(planes, parts: parts) { range in
            for plane in range {
                startSums(
                    out + plane * planeCount, count: planeCount, shift: sums.bias?[plane % channels] ?? 0,
                    residual: sums.residual.map { $0 + plane * planeCount })
            }
        }
    }

    /// The convolution as products by pieces of output rows (or slices of output channels for
    /// small planes). With OpenBLAS's `sgemm` each piece first sets its part of the output to the
    /// bias (and the residual), while it is about to be in cache anyway; the engine's kernel adds
    /// them in its epilogue instead (``te_sgemm_packed_ab_epilogue``). With it, filters held
    /// in `weights` (a model's constant) are kept packed from their second use on
    /// (``PackedWeights``), so no piece packs them again.
    private func gemmConvolution(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, in weights: HostBuffer?, _ sums: ConvolutionSums,
        _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D,
        batch: Int, channels: Int, groups: Int, outPerGroup: Int
    ) throws(TensorError) {
        let clamp = sums.clamp
        let inPerGroup = channels / groups
        let reduction = inPerGroup * shape.kernelCount
        let (inCount, outCount) = (shape.inputCount, shape.outputCount)
        guard reduction < Int(Int32.max), outCount < Int(Int32.max), outPerGroup < Int(Int32.max) else {
            throw TensorError(
                .unsupported, op: "convolution", message: "a product dimension of 2^31 or more exceeds BLAS's indices")
        }
        let pointwise = shape.readsInputAsPlanes
        // Whole output rows per block, at most about 8 MiB of columns.
        let rowsTotal = shape.output[0] * shape.output[1]
        let width = shape.output[2]
        let rowsPerBlock = Swift.max(1, Swift.min(rowsTotal, (1 << 21) / Swift.max(1, reduction * width)))
        let planes = batch * groups
        let multiplyAdds = Double(planes) * Double(outPerGroup) * Double(outCount) * Double(reduction)
        // As MatmulSplit decides for products: large ones computed by OpenBLAS's `sgemm` keep its
        // threads (one block after another, each im2col by all cores); the others, and every one
        // the engine's own kernel computes (HostProducts), are cut into pieces of output rows,
        // each task its own im2col and a single-threaded product, so no BLAS thread waits spinning.
        let libraryThreaded =
            HostProducts.kernel == .openBLAS && multiplyAdds >= Double(MatmulSplit.libraryThreadingMultiplyAdds)
            || Parallel.workers == 1
        let wanted =
            libraryThreaded
            ? 1
            : Parallel.balancedPieces(
                Swift.max(
                    1,
                    Swift.min(
                        Parallel.workers * MatmulSplit.piecesPerWorker,
                        Int(multiplyAdds) / MatmulSplit.minimumMultiplyAddsPerPiece)))
        // A small plane (a deep layer's 7 × 7) cut into pieces of rows would give each piece a few
        // columns, each packed into whole panels of 32: the workers take slices of the output
        // channels instead (two tiles each at least), over one im2col of the plane.
        if !libraryThreaded, wanted > 1, outCount < Self.channelSplitPositions,
            outPerGroup >= 2 * Int(TE_MR) * Parallel.workers
        {
            try channelSlices(
                x, w, in: weights, out, shape, planes: planes, channels: channels, groups: groups,
                outPerGroup: outPerGroup, reduction: reduction, pointwise: pointwise, sums: sums)
            return
        }
        // Each plane's rows in chunks of near-equal height (13 rows in 4: 4, 3, 3, 3, not 4, 4, 4, 1),
        // at most a block each.
        let chunksPerPlane = Swift.max(
            (rowsTotal + rowsPerBlock - 1) / rowsPerBlock, Swift.min(rowsTotal, (wanted + planes - 1) / planes))
        let rowsPerChunk = (rowsTotal + chunksPerPlane - 1) / chunksPerPlane
        var tasks: [(plane: Int, rows: Range<Int>)] = []
        for plane in 0..<planes {
            for chunk in 0..<chunksPerPlane {
                tasks.append((plane, chunk * rowsTotal / chunksPerPlane..<(chunk + 1) * rowsTotal / chunksPerPlane))
            }
        }
        let parts = libraryThreaded ? 1 : Parallel.balancedPieces(Swift.min(wanted, tasks.count))
        // With the engine's kernel packing B, im2col writes B packed (`im2colPacked`), and a
        // pointwise convolution packs its input's rows.
        let packsColumns =
            !libraryThreaded && HostProducts.kernel == .avx512
            && te_sgemm_packs_b(0, 0, outPerGroup) != 0
            && Double(outPerGroup) * Double(rowsPerChunk * width) * Double(reduction)
                >= Double(HostProducts.minimumKernelMultiplyAdds)
        let chunkFloats = packsColumns ? te_packed_b_floats(reduction, rowsPerChunk * width) : reduction * rowsPerChunk * width
        let columnsBuffer =
            pointwise && !packsColumns ? nil : try HostBuffer(byteCount: parts * chunkFloats * 4, op: "convolution")
        let columnsBase = columnsBuffer?.elements(as: Float.self)
        // Each group's filters, kept packed; packed here, before the pieces, which all read them.
        let packedFilters: [HostBuffer?] = (0..<groups).map { group in
            guard packsColumns, let weights else { return nil }
            return PackedWeights.shared.packedLeft(
                w + group * outPerGroup * reduction, in: weights, m: outPerGroup, k: reduction, lda: reduction)
        }
        BLASThreads.use(libraryThreaded ? Parallel.workers : 1)
        Parallel.forEachRange(parts, parts: parts) { pieces in
            for piece in pieces {
                for task in stride(from: piece, to: tasks.count, by: parts) {
                    let (plane, rows) = tasks[task]
                    let (n, group) = plane.quotientAndRemainder(dividingBy: groups)
                    let input = x + (n * channels + group * inPerGroup) * inCount
                    let filters = w + group * outPerGroup * reduction
                    let result = out + plane * outPerGroup * outCount + rows.lowerBound * width
                    let columnsWidth = rows.count * width
                    let residual = sums.residual.map { $0 + (result - out) }
                    // Pointwise: the input's own rows are the columns (ldb: the whole plane).
                    var source = input + rows.lowerBound * width
                    var leading = outCount
                    if let columnsBase, packsColumns {
                        let packed = columnsBase + piece * chunkFloats
                        if pointwise {
                            te_pack_b_panels(
                                0, reduction, columnsWidth, source, outCount, packed, 0,
                                (columnsWidth + Int(TE_NR) - 1) / Int(TE_NR))
                        } else {
                            Self.im2colPacked(input, packed, shape, channels: inPerGroup, rows: rows, parallel: false)
                        }
                        // The bias, the residual and the bound applied as the kernel stores each
                        // tile: the output is written once.
                        let bias = sums.bias.map { $0 + group * outPerGroup }
                        withBounds(clamp) { bounds in
                            if let kept = packedFilters[group] {
                                te_sgemm_packed_ab_epilogue(
                                    outPerGroup, columnsWidth, reduction, kept.elements(as: Float.self), packed, 0,
                                    columnsWidth, result, outCount, bias, residual, bounds)
                            } else {
                                te_sgemm_packed_epilogue(
                                    outPerGroup, columnsWidth, reduction, filters, reduction, packed, 0, columnsWidth,
                                    result, outCount, bias, residual, bounds)
                            }
                        }
                        continue
                    }
                    if pointwise, HostProducts.kernel == .avx512, te_sgemm_packs_b(0, 0, outPerGroup) == 0 {
                        // Few output channels (a squeeze layer's): the input's rows read in place,
                        // with the same epilogue, in one pass over the output.
                        let bias = sums.bias.map { $0 + group * outPerGroup }
                        withBounds(clamp) { bounds in
                            te_sgemm_few_rows_epilogue(
                                outPerGroup, columnsWidth, reduction, filters, reduction, source, outCount, result,
                                outCount, bias, residual, bounds)
                        }
                        continue
                    }
                    for channel in 0..<outPerGroup {
                        Self.startSums(
                            result + channel * outCount, count: columnsWidth,
                            shift: sums.bias?[group * outPerGroup + channel] ?? 0,
                            residual: residual.map { $0 + channel * outCount })
                    }
                    if let columnsBase {
                        let columns = columnsBase + piece * chunkFloats
                        Self.im2col(input, columns, shape, channels: inPerGroup, rows: rows, parallel: libraryThreaded)
                        source = UnsafePointer(columns)
                        leading = columnsWidth
                    }
                    HostProducts.multiply(
                        transposeA: false, transposeB: false, m: outPerGroup, n: columnsWidth, k: reduction,
                        filters, lda: reduction, source, ldb: leading, result, ldc: outCount, accumulate: true)
                    clamp?.apply(to: result, rows: outPerGroup, count: columnsWidth, rowStride: outCount)
                }
            }
        }
        withExtendedLifetime((columnsBuffer, packedFilters)) {}
    }

    /// Output positions per plane below which the workers split a convolution's output channels
    /// rather than its rows.
    static let channelSplitPositions = 256

    /// Each plane's columns built once (by all cores), then its product cut into slices of output
    /// channels, one per worker, each with the bias, residual and clamp of ``gemmConvolution``.
    /// With the engine's kernel the columns are written packed (``im2colPacked``, or the input's
    /// panels packed for a pointwise convolution) and every slice multiplies from that one packed
    /// B; otherwise each slice's product packs its own. Each slice's filters are kept packed as
    /// ``gemmConvolution`` keeps a group's.
    private func channelSlices(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, in weights: HostBuffer?,
        _ out: UnsafeMutablePointer<Float>,
        _ shape: WindowShape3D, planes: Int, channels: Int, groups: Int, outPerGroup: Int, reduction: Int,
        pointwise: Bool, sums: ConvolutionSums
    ) throws(TensorError) {
        let (inCount, outCount) = (shape.inputCount, shape.outputCount)
        let clamp = sums.clamp
        let inPerGroup = channels / groups
        let rows = 0..<(shape.output[0] * shape.output[1])
        let slices = Parallel.workers
        let sliceRows = (outPerGroup + slices - 1) / slices
        let packs = HostProducts.kernel == .avx512 && te_sgemm_packs_b(0, 0, sliceRows) != 0
        // The engine's kernel adds the bias and the residual and bounds each tile as it stores it;
        // the others accumulate onto an output set to them first.
        if !packs {
            Self.fillStarts(
                out, sums, planes: planes * outPerGroup, channels: groups * outPerGroup, planeCount: outCount)
        }
        let floats = packs ? te_packed_b_floats(reduction, outCount) : pointwise ? 0 : reduction * outCount
        let columnsBuffer = floats == 0 ? nil : try HostBuffer(byteCount: floats * 4, op: "convolution")
        let panels = (outCount + Int(TE_NR) - 1) / Int(TE_NR)
        // Per group and slice, that slice's filters kept packed.
        let packedFilters: [HostBuffer?] = (0..<groups * slices).map { index in
            let (group, slice) = index.quotientAndRemainder(dividingBy: slices)
            let (first, count) = (slice * sliceRows, Swift.min(sliceRows, outPerGroup - slice * sliceRows))
            guard packs, count > 0, let weights else { return nil }
            return PackedWeights.shared.packedLeft(
                w + (group * outPerGroup + first) * reduction, in: weights, m: count, k: reduction, lda: reduction)
        }
        BLASThreads.use(1)
        for plane in 0..<planes {
            let (n, group) = plane.quotientAndRemainder(dividingBy: groups)
            let input = x + (n * channels + group * inPerGroup) * inCount
            var source = input
            if let columns = columnsBuffer?.elements(as: Float.self) {
                if packs, pointwise {
                    Parallel.forEachRange(panels, parts: Swift.min(slices, panels)) { range in
                        te_pack_b_panels(
                            0, reduction, outCount, input, outCount, columns, range.lowerBound, range.upperBound)
                    }
                } else if packs {
                    Self.im2colPacked(input, columns, shape, channels: inPerGroup, rows: rows, parallel: true)
                } else {
                    Self.im2col(input, columns, shape, channels: inPerGroup, rows: rows, parallel: true)
                }
                source = UnsafePointer(columns)
            }
            let filters = w + group * outPerGroup * reduction
            let result = out + plane * outPerGroup * outCount
            Parallel.forEachRange(slices, parts: slices) { range in
                for slice in range {
                    let first = slice * sliceRows
                    let count = Swift.min(sliceRows, outPerGroup - first)
                    guard count > 0 else { continue }
                    if packs {
                        let bias = sums.bias.map { $0 + group * outPerGroup + first }
                        let residual = sums.residual.map { $0 + (result - out) + first * outCount }
                        withBounds(clamp) { bounds in
                            if let kept = packedFilters[group * slices + slice] {
                                te_sgemm_packed_ab_epilogue(
                                    count, outCount, reduction, kept.elements(as: Float.self), source, 0, outCount,
                                    result + first * outCount, outCount, bias, residual, bounds)
                            } else {
                                te_sgemm_packed_epilogue(
                                    count, outCount, reduction, filters + first * reduction, reduction, source, 0,
                                    outCount, result + first * outCount, outCount, bias, residual, bounds)
                            }
                        }
                        continue
                    }
                    HostProducts.multiply(
                        transposeA: false, transposeB: false, m: count, n: outCount, k: reduction,
                        filters + first * reduction, lda: reduction, source, ldb: outCount,
                        result + first * outCount, ldc: outCount, accumulate: true)
                    clamp?.apply(to: result + first * outCount, count: count * outCount)
                }
            }
        }
        withExtendedLifetime((columnsBuffer, packedFilters)) {}
    }

    /// Each output plane `(n, m)` from its one input channel `m / multiplier`: each output row
    /// gets, for every tap, the weight times the input row that tap reads.
    private static func depthwise(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>,
        _ shape: WindowShape3D,
        planes: Int, channels: Int, multiplier: Int, clamp: OutputClamp?
    ) {
        let outChannels = channels * multiplier
        let taps = shape.kernelCount
        let widths = (0..<shape.kernel[2]).map { shape.validOutputs(2, tap: $0) }
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: taps)
        Parallel.forEachRange(planes, parts: parts) { range in
            for plane in range {
                let (n, m) = plane.quotientAndRemainder(dividingBy: outChannels)
                let input = x + (n * channels + m / multiplier) * shape.inputCount
                let filter = w + m * taps
                let result = out + plane * shape.outputCount
                // Output row by output row, every tap added while the row is in L1.
                for od in 0..<shape.output[0] {
                    for oh in 0..<shape.output[1] {
                        let target = result + (od * shape.output[1] + oh) * shape.output[2]
                        for kd in 0..<shape.kernel[0] {
                            let id = od * shape.strides[0] - shape.before[0] + kd * shape.dilations[0]
                            guard (0..<shape.input[0]).contains(id) else { continue }
                            for kh in 0..<shape.kernel[1] {
                                let ih = oh * shape.strides[1] - shape.before[1] + kh * shape.dilations[1]
                                guard (0..<shape.input[1]).contains(ih) else { continue }
                                let row = input + (id * shape.input[1] + ih) * shape.input[2]
                                for kw in 0..<shape.kernel[2] {
                                    let weight = filter[(kd * shape.kernel[1] + kh) * shape.kernel[2] + kw]
                                    let line = row + (kw * shape.dilations[2] - shape.before[2])
                                    addScaled(line, weight, target, widths[kw], stride: shape.strides[2])
                                }
                            }
                        }
                    }
                }
                clamp?.apply(to: result, count: shape.outputCount)
            }
        }
    }

    /// `target[o] += weight · line[o·stride]` for `o` in `range`.
    @inline(__always)
    private static func addScaled(
        _ line: UnsafePointer<Float>, _ weight: Float, _ target: UnsafeMutablePointer<Float>, _ range: Range<Int>,
        stride: Int
    ) {
        if stride == 1 {
            for o in range { target[o] += weight * line[o] }
        } else {
            for o in range { target[o] += weight * line[o * stride] }
        }
    }
}
