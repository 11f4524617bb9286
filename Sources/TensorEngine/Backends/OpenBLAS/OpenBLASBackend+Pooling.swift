extension OpenBLASBackend {
    /// Max or average pooling of `Float` planes, one plane `(n, c)` per task: each output from the
    /// taps of its window inside the input (a NaN wins a maximum; an average divides by the count
    /// the geometry says). 2-D windows go 64 outputs at a time (``stripedPooling``); others one by
    /// one here.
    func pooling(_ kind: OpKind, _ geometry: PoolingGeometry, _ input: Value, _ output: TensorSignature)
        throws(TensorError) -> Value
    {
        let (result, buffer) = try allocate(output, for: kind.name)
        guard output.elementCount > 0 else { return result }
        let (x, owner) = try contiguous(input)
        let shape = WindowShape3D(
            input: Array(input.shape.dropFirst(2)), kernel: geometry.kernel, output: Array(output.shape.dropFirst(2)),
            strides: geometry.strides, dilations: geometry.dilations, padding: geometry.padding)
        let source = UnsafePointer(x.assumingMemoryBound(to: Float.self))
        let out = buffer.elements(as: Float.self)
        let planes = output.shape[0] * output.shape[1]
        // The divisors per axis, from the declared geometry (the spatial axes padded in front to three).
        let spatial = Array(input.shape.dropFirst(2))
        let lead = WindowShape3D.maxSpatialRank - spatial.count
        let divisors: [[Int]] = (0..<WindowShape3D.maxSpatialRank).map { axis in
            guard axis >= lead else { return [1] }
            return (0..<shape.output[axis]).map {
                WindowArithmetic.averageCount(
                    window: $0, axis: axis - lead, geometry: geometry, extent: spatial[axis - lead])
            }
        }
        let average = kind == .averagePool
        let planeCount = output.shape[0] * output.shape[1]
        if Self.stripesPooling(shape) {
            Self.stripedPooling(
                average: average, source, out, shape, planes: planeCount, rowDivisors: divisors[1],
                columnDivisors: divisors[2])
            withExtendedLifetime(owner) {}
            return result
        }
        // Per axis and output position: the window's first input position, its in-input taps,
        // and an average's divisor, in flat buffers the workers read without reference counting.
        let axes = WindowShape3D.maxSpatialRank
        let positions = shape.output[0] + shape.output[1] + shape.output[2]
        let table = UnsafeMutablePointer<Int>.allocate(capacity: 4 * positions)
        defer { table.deallocate() }
        var base = [0, 0, 0]
        var next = 0
        for axis in 0..<axes {
            base[axis] = next
            for index in 0..<shape.output[axis] {
                let (start, taps) = shape.taps(axis, index)
                let entry = table + 4 * (next + index)
                (entry[0], entry[1], entry[2], entry[3]) = (
                    start, taps.lowerBound, taps.upperBound, divisors[axis][axis < lead ? 0 : index]
                )
            }
            next += shape.output[axis]
        }
        let (entriesD, entriesH, entriesW) = (table + 4 * base[0], table + 4 * base[1], table + 4 * base[2])
        let dilations = shape.dilations
        let (rowLength, planeRows) = (shape.input[2], shape.input[1])
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: shape.kernelCount)
        Parallel.forEachRange(planes, parts: parts) { range in
            for plane in range {
                let input = source + plane * shape.inputCount
                var target = out + plane * shape.outputCount
                for od in 0..<shape.output[0] {
                    let d = entriesD + 4 * od
                    for oh in 0..<shape.output[1] {
                        let h = entriesH + 4 * oh
                        for ow in 0..<shape.output[2] {
                            let w = entriesW + 4 * ow
                            var total: Float = 0
                            var best = -Float.infinity
                            // Selects, not branches (a branch per tap mispredicts on real data); a
                            // NaN is counted apart and wins at the end.
                            var nans = 0
                            for kd in d[1]..<d[2] {
                                for kh in h[1]..<h[2] {
                                    let row =
                                        input + ((d[0] + kd * dilations[0]) * planeRows + h[0] + kh * dilations[1])
                                        * rowLength + w[0]
                                    if average {
                                        for kw in w[1]..<w[2] { total += row[kw * dilations[2]] }
                                    } else {
                                        for kw in w[1]..<w[2] {
                                            let value = row[kw * dilations[2]]
                                            best = value > best ? value : best
                                            nans += value.isNaN ? 1 : 0
                                        }
                                    }
                                }
                            }
                            target.pointee = average ? total / Float(d[3] * h[3] * w[3]) : (nans > 0 ? .nan : best)
                            target += 1
                        }
                    }
                }
            }
        }
        withExtendedLifetime(owner) {}
        return result
    }
}
