import CIntrinsics

extension OpenBLASBackend {
    /// Max or average pooling of `Float` planes, one plane `(n, c)` per task: each output from the
    /// taps of its window inside the input (a NaN wins a maximum; an average divides by the count
    /// the geometry says). On a CPU with AVX-512, 2-D windows 2 or 3 columns wide at column stride
    /// 1 or 2 go to the C kernel of `windows.h` (``poolPlanes``), the planes read in place; other
    /// 2-D windows 64 outputs at a time (``stripedPooling``); the rest one by one here.
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
        if Self.takesPoolPlanes(shape) || Self.stripesPooling(shape) {
            // The planes read in place on a CPU with AVX-512, else through phase rows.
            let pool = Self.takesPoolPlanes(shape) ? Self.poolPlanes : Self.stripedPooling
            pool(average, source, out, shape, planeCount, divisors[1], divisors[2])
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
        // One window per plane over the whole plane (ResNet's 7 × 7 average pool before its
        // classifier): the plane is one contiguous row, reduced with vector accumulators, not a
        // chain of scalar adds as long as the window.
        let wholePlane = shape.outputCount == 1 && (0..<axes).allSatisfy { axis in
            // Taps lower..<upper land inside, tap k at start + k·dilation: every position, in order.
            let (start, lower, upper) = (table[4 * base[axis]], table[4 * base[axis] + 1], table[4 * base[axis] + 2])
            let count = upper - lower
            return count == shape.input[axis] && start + lower * dilations[axis] == 0
                && (dilations[axis] == 1 || count == 1)
        }
        if wholePlane {
            let divisor = Float(entriesD[3] * entriesH[3] * entriesW[3])
            let inputCount = shape.inputCount
            Parallel.forEachRange(planes, parts: Parallel.workerCount(forElements: planes * inputCount)) { range in
                for plane in range {
                    let input = source + plane * inputCount
                    out[plane] = average ? Self.reduceRow(.sum, input, inputCount) / divisor
                        : Self.reduceRow(.maximum, input, inputCount)
                }
            }
            withExtendedLifetime(owner) {}
            return result
        }
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

extension OpenBLASBackend {
    /// Whether ``poolPlanes(average:_:_:_:planes:rowDivisors:columnDivisors:)`` computes the
    /// shape: a 2-D window 2 or 3 columns wide, at column stride 1 or 2, without dilation, on a CPU
    /// whose AVX-512 code the backend runs.
    static func takesPoolPlanes(_ shape: WindowShape3D) -> Bool {
        HostProducts.kernel == .avx512 && shape.isPlanar
            && te_pool_takes(shape.kernel[2], shape.strides[2], shape.dilations[1], shape.dilations[2]) != 0
    }

    /// Every output plane by ``te_pool_plane_avx512``, the planes shared among the workers; an
    /// average's divisor for output (oh, ow) is `rowDivisors[oh]` · `columnDivisors[ow]`.
    static func poolPlanes(
        average: Bool, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D,
        planes: Int, rowDivisors: [Int], columnDivisors: [Int]
    ) {
        let rows = rowDivisors.map { Float($0) }
        let columns = columnDivisors.map { Float($0) }
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: shape.kernelCount)
        rows.withUnsafeBufferPointer { rows in
            columns.withUnsafeBufferPointer { columns in
                guard let rowDivisors = rows.baseAddress, let columnDivisors = columns.baseAddress else { return }
                Parallel.forEachRange(planes, parts: parts) { range in
                    for plane in range {
                        te_pool_plane_avx512(
                            average ? 1 : 0, x + plane * shape.inputCount, shape.input[1], shape.input[2],
                            out + plane * shape.outputCount, shape.output[1], shape.output[2], shape.kernel[1],
                            shape.kernel[2], shape.strides[1], shape.strides[2], shape.before[1], shape.before[2],
                            rowDivisors, columnDivisors)
                    }
                }
            }
        }
    }
}
