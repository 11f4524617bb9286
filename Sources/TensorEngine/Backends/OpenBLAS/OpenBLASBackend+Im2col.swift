import CIntrinsics

extension OpenBLASBackend {
    /// `cols[(c, kd, kh, kw), (row, ow)]` for the output rows `rows` (flat `od·outH + oh`): the
    /// input element each tap of each output position reads, or 0 in the padding. Rows of `cols`
    /// are split across the cores when `parallel`.
    static func im2col(
        _ x: UnsafePointer<Float>, _ columns: UnsafeMutablePointer<Float>, _ shape: WindowShape3D, channels: Int,
        rows: Range<Int>, parallel: Bool
    ) {
        let width = rows.count * shape.output[2]
        let count = channels * shape.kernelCount
        let parts = parallel ? Parallel.workerCount(forElements: count * width) : 1
        Parallel.forEachRange(count, parts: parts) { range in
            for row in range { im2colRow(x, row, shape, rows: rows, into: columns + row * width) }
        }
    }

    /// The columns of ``im2col`` written straight into the layout of B packed whole for the
    /// product kernel (`te_pack_b_panels`: by blocks of `te_depth_block(k)` steps of k, 32-column
    /// panels, zero past the last column), so that no `cols` matrix is written and read again:
    /// each row is built in a short line that stays in L1 and copied out panel by panel.
    static func im2colPacked(
        _ x: UnsafePointer<Float>, _ packed: UnsafeMutablePointer<Float>, _ shape: WindowShape3D, channels: Int,
        rows: Range<Int>, parallel: Bool
    ) {
        let width = rows.count * shape.output[2]
        let panels = (width + Int(TE_NR) - 1) / Int(TE_NR)
        let padded = panels * Int(TE_NR)
        let count = channels * shape.kernelCount
        let block = te_depth_block(count)
        let parts = parallel ? Parallel.workerCount(forElements: count * width) : 1
        Parallel.forEachRange(count, parts: parts) { range in
            let line = UnsafeMutablePointer<Float>.allocate(capacity: padded)
            defer { line.deallocate() }
            (line + width).initialize(repeating: 0, count: padded - width)
            for row in range {
                im2colRow(x, row, shape, rows: rows, into: line)
                let first = row / block * block
                let depth = Swift.min(block, count - first)
                var target = UnsafeMutableRawPointer(packed + first * padded + (row - first) * Int(TE_NR))
                var source = UnsafeRawPointer(line)
                for _ in 0..<panels {
                    target.storeBytes(of: source.loadUnaligned(as: SIMD16<Float>.self), as: SIMD16<Float>.self)
                    target.storeBytes(
                        of: source.loadUnaligned(fromByteOffset: 64, as: SIMD16<Float>.self), toByteOffset: 64,
                        as: SIMD16<Float>.self)
                    target += Int(TE_NR) * depth * MemoryLayout<Float>.stride
                    source += Int(TE_NR) * MemoryLayout<Float>.stride
                }
            }
        }
    }

    /// Row `row` = (c, kd, kh, kw) of the columns for the output rows `rows`, into `target`.
    @inline(__always)
    private static func im2colRow(
        _ x: UnsafePointer<Float>, _ row: Int, _ shape: WindowShape3D, rows: Range<Int>,
        into start: UnsafeMutablePointer<Float>
    ) {
        let (channel, tap) = row.quotientAndRemainder(dividingBy: shape.kernelCount)
        let kd = tap / (shape.kernel[1] * shape.kernel[2])
        let kh = tap / shape.kernel[2] % shape.kernel[1]
        let kw = tap % shape.kernel[2]
        let plane = x + channel * shape.inputCount
        let validW = shape.validOutputs(2, tap: kw)
        let inputW = kw * shape.dilations[2] - shape.before[2]
        var target = start
        for outputRow in rows {
            let (od, oh) = outputRow.quotientAndRemainder(dividingBy: shape.output[1])
            let id = od * shape.strides[0] - shape.before[0] + kd * shape.dilations[0]
            let ih = oh * shape.strides[1] - shape.before[1] + kh * shape.dilations[1]
            let outW = shape.output[2]
            guard (0..<shape.input[0]).contains(id), (0..<shape.input[1]).contains(ih), !validW.isEmpty else {
                target.update(repeating: 0, count: outW)
                target += outW
                continue
            }
            let line = plane + (id * shape.input[1] + ih) * shape.input[2] + inputW
            target.update(repeating: 0, count: validW.lowerBound)
            let stride = shape.strides[2]
            if stride == 1 {
                (target + validW.lowerBound).update(from: line + validW.lowerBound, count: validW.count)
            } else if stride == 2 {
                // Eight at a time: strided convolutions not read in place from phase planes.
                te_every_second(line + 2 * validW.lowerBound, validW.count, target + validW.lowerBound)
            } else {
                for ow in validW { target[ow] = line[ow * stride] }
            }
            (target + validW.upperBound).update(repeating: 0, count: outW - validW.upperBound)
            target += outW
        }
    }
}
