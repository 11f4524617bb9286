import CIntrinsics

/// Max and average pooling over 2-D planes, 64 outputs of a row at a time.
///
/// Output column `o`, tap `t` reads padded column `o·s + t·d` (stride `s`, dilation `d`). Each
/// worker copies an input plane into `s` phase rows per input row, phase `p` holding the padded
/// columns `j·s + p`, so that tap `t` reads phase `(t·d) mod s` from `j = o + ⌊t·d / s⌋` on: one
/// contiguous vector per 16 outputs, whatever the stride. Padding and ceil-mode overhang read the
/// fill (−∞ for a maximum, 0 for a sum), which leaves each result what the taps inside the input
/// give; rows outside the input are skipped. A NaN wins a maximum, as in the reference.
extension OpenBLASBackend {
    typealias PoolingStrip = SIMD16<Float>

    /// Whether ``stripedPooling`` computes the shape: a 2-D window (one depth step) over rows of at
    /// least 8 outputs (shorter rows, down to a global pool's single output, are summed faster one
    /// by one than in a strip of 16 lanes).
    static func stripesPooling(_ shape: WindowShape3D) -> Bool {
        shape.isPlanar && shape.output[2] >= 8
    }

    /// `out` for `planes` planes; `rowDivisors[oh]` and `columnDivisors[ow]` (an average's) multiply
    /// to each output's divisor.
    static func stripedPooling(
        average: Bool, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D,
        planes: Int, rowDivisors: [Int], columnDivisors: [Int]
    ) {
        let (rows, columns) = (shape.input[1], shape.input[2])
        let (outRows, outColumns) = (shape.output[1], shape.output[2])
        let (stride, dilation, left) = (shape.strides[2], shape.dilations[2], shape.before[2])
        let chunks = (outColumns + 63) / 64
        // A phase row holds every padded column a chunk's taps read, and every input column.
        let reach = (shape.kernel[2] - 1) * dilation / stride
        let length = Swift.max(chunks * 64 + reach, (left + columns) / stride + 1)
        let fill: Float = average ? 0 : -.infinity
        // An average's divisors per column, padded to whole chunks (the extra lanes are not stored).
        let divisors = columnDivisors.map { Float($0) } + [Float](repeating: 1, count: chunks * 64 - outColumns)
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: shape.kernelCount)
        // Where tap kw of a window row reads in the phase rows of its input row, from the chunk's
        // first column: phase (kw·d) mod s, shifted by ⌊kw·d / s⌋ (no division per tap).
        let taps = UnsafeMutablePointer<Int>.allocate(capacity: shape.kernel[2])
        defer { taps.deallocate() }
        for kw in 0..<shape.kernel[2] {
            let (shift, phase) = (kw * dilation).quotientAndRemainder(dividingBy: stride)
            taps[kw] = phase * length + shift
        }
        // Padded column c + left is phase (c + left) mod s, position (c + left) / s: each phase
        // takes every s-th input column from its first, which lands at its offset in the phase rows.
        let firsts = (0..<stride).map { phase in ((phase - left) % stride + stride) % stride }
        let offsets = (0..<stride).map { phase in phase * length + (firsts[phase] + left) / stride }
        // At stride 2, the phase fed by input columns 0, 2, 4… (the other takes 1, 3, 5…).
        let evenPhase = firsts[0] == 0 ? 0 : 1
        divisors.withUnsafeBufferPointer { divisors in
            guard let divisors = divisors.baseAddress else { return }
            Parallel.forEachRange(planes, parts: parts) { range in
                let phases = UnsafeMutablePointer<Float>.allocate(capacity: rows * stride * length)
                phases.initialize(repeating: fill, count: rows * stride * length)
                let tail = UnsafeMutablePointer<Float>.allocate(capacity: 64)
                tail.initialize(repeating: 0, count: 64)
                defer {
                    phases.deallocate()
                    tail.deallocate()
                }
                for plane in range {
                    let input = x + plane &* shape.inputCount
                    for ih in 0..<rows {
                        let row = input + ih &* columns
                        let phaseRows = phases + ih &* stride &* length
                        if stride == 2 {
                            te_deinterleave2(
                                row, columns, phaseRows + offsets[evenPhase], phaseRows + offsets[1 &- evenPhase])
                            continue
                        }
                        for phase in 0..<stride where firsts[phase] < columns {
                            let target = phaseRows + offsets[phase]
                            if stride == 1 {
                                target.update(from: row, count: columns)
                            } else {
                                var (j, c) = (0, firsts[phase])
                                while c < columns {
                                    target[j] = row[c]
                                    (j, c) = (j &+ 1, c &+ stride)
                                }
                            }
                        }
                    }
                    let result = out + plane &* shape.outputCount
                    for oh in 0..<outRows {
                        let target = result + oh &* outColumns
                        let rowDivisor = Float(average ? rowDivisors[oh] : 1)
                        for chunk in 0..<chunks {
                            let column = chunk &* 64
                            let whole = column &+ 64 <= outColumns
                            if whole {
                                Self.poolChunk(
                                    average: average, target + column, phases, length: length, column: column,
                                    oh: oh, shape, taps: taps, divisors: divisors + column, rowDivisor: rowDivisor)
                                continue
                            }
                            // A last, partial chunk computes only the strips of 16 that hold outputs.
                            for strip in Swift.stride(from: column, to: outColumns, by: 16) {
                                Self.poolStrip(
                                    average: average, tail + (strip &- column), phases, length: length, column: strip,
                                    oh: oh, shape, taps: taps, divisors: divisors + strip, rowDivisor: rowDivisor)
                            }
                            (target + column).update(from: tail, count: outColumns &- column)
                        }
                    }
                }
            }
        }
    }

    /// Runs `body` on the start of each tap's strip for output row `oh` from `column` on: the
    /// window's rows inside the input, and in each, its taps' places in the phase rows.
    @inline(__always)
    private static func forEachTap(
        oh: Int, column: Int, _ shape: WindowShape3D, _ phases: UnsafeMutablePointer<Float>, length: Int,
        taps: UnsafePointer<Int>, _ body: (UnsafeRawPointer) -> Void
    ) {
        for kh in 0..<shape.kernel[1] {
            let ih = oh &* shape.strides[1] &- shape.before[1] &+ kh &* shape.dilations[1]
            guard ih >= 0, ih < shape.input[1] else { continue }
            let rowStart = phases + (ih &* shape.strides[2] &* length &+ column)
            for kw in 0..<shape.kernel[2] { body(UnsafeRawPointer(rowStart + taps[kw])) }
        }
    }

    /// 16 outputs of row `oh` from `column` on, written to `target`: ``poolChunk`` for one strip.
    @inline(__always)
    private static func poolStrip(
        average: Bool, _ target: UnsafeMutablePointer<Float>, _ phases: UnsafeMutablePointer<Float>, length: Int,
        column: Int, oh: Int, _ shape: WindowShape3D, taps: UnsafePointer<Int>, divisors: UnsafePointer<Float>,
        rowDivisor: Float
    ) {
        var total = PoolingStrip(repeating: average ? 0 : -.infinity)
        var nans = SIMDMask<PoolingStrip.MaskStorage>(repeating: false)
        forEachTap(oh: oh, column: column, shape, phases, length: length, taps: taps) { line in
            let value = line.loadUnaligned(as: PoolingStrip.self)
            if average {
                total += value
            } else {
                total.replace(with: value, where: value .> total)
                nans = nans .| (value .!= value)
            }
        }
        if average {
            total /= UnsafeRawPointer(divisors).loadUnaligned(as: PoolingStrip.self) * rowDivisor
        } else {
            total.replace(with: .nan, where: nans)
        }
        UnsafeMutableRawPointer(target).storeBytes(of: total, as: PoolingStrip.self)
    }

    /// 64 outputs of row `oh` from `column` on, written to `target`: four strips of 16, each its
    /// own running maximum or sum over the taps.
    @inline(__always)
    private static func poolChunk(
        average: Bool, _ target: UnsafeMutablePointer<Float>, _ phases: UnsafeMutablePointer<Float>, length: Int,
        column: Int, oh: Int, _ shape: WindowShape3D, taps: UnsafePointer<Int>, divisors: UnsafePointer<Float>,
        rowDivisor: Float
    ) {
        typealias Mask = SIMDMask<PoolingStrip.MaskStorage>
        let start = PoolingStrip(repeating: average ? 0 : -.infinity)
        var (a0, a1, a2, a3) = (start, start, start, start)
        // Lanes that met a NaN (a maximum's comparisons pass over it; it wins at the end).
        var (n0, n1, n2, n3) = (Mask(repeating: false), Mask(repeating: false), Mask(repeating: false), Mask(repeating: false))
        let size = MemoryLayout<PoolingStrip>.stride
        forEachTap(oh: oh, column: column, shape, phases, length: length, taps: taps) { line in
            let v0 = line.loadUnaligned(as: PoolingStrip.self)
            let v1 = line.loadUnaligned(fromByteOffset: size, as: PoolingStrip.self)
            let v2 = line.loadUnaligned(fromByteOffset: 2 &* size, as: PoolingStrip.self)
            let v3 = line.loadUnaligned(fromByteOffset: 3 &* size, as: PoolingStrip.self)
            if average {
                (a0, a1, a2, a3) = (a0 + v0, a1 + v1, a2 + v2, a3 + v3)
            } else {
                a0.replace(with: v0, where: v0 .> a0)
                a1.replace(with: v1, where: v1 .> a1)
                a2.replace(with: v2, where: v2 .> a2)
                a3.replace(with: v3, where: v3 .> a3)
                (n0, n1, n2, n3) = (n0 .| (v0 .!= v0), n1 .| (v1 .!= v1), n2 .| (v2 .!= v2), n3 .| (v3 .!= v3))
            }
        }
        if average {
            let scale = UnsafeRawPointer(divisors)
            a0 /= scale.loadUnaligned(as: PoolingStrip.self) * rowDivisor
            a1 /= scale.loadUnaligned(fromByteOffset: size, as: PoolingStrip.self) * rowDivisor
            a2 /= scale.loadUnaligned(fromByteOffset: 2 &* size, as: PoolingStrip.self) * rowDivisor
            a3 /= scale.loadUnaligned(fromByteOffset: 3 &* size, as: PoolingStrip.self) * rowDivisor
        } else {
            a0.replace(with: .nan, where: n0)
            a1.replace(with: .nan, where: n1)
            a2.replace(with: .nan, where: n2)
            a3.replace(with: .nan, where: n3)
        }
        let out = UnsafeMutableRawPointer(target)
        out.storeBytes(of: a0, as: PoolingStrip.self)
        out.storeBytes(of: a1, toByteOffset: size, as: PoolingStrip.self)
        out.storeBytes(of: a2, toByteOffset: 2 &* size, as: PoolingStrip.self)
        out.storeBytes(of: a3, toByteOffset: 3 &* size, as: PoolingStrip.self)
    }
}
