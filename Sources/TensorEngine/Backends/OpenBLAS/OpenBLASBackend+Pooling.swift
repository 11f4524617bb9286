extension OpenBLASBackend {
    /// Max or average pooling of `Float` planes, one plane `(n, c)` per task: each output from the
    /// taps of its window inside the input (a NaN wins a maximum; an average divides by the count
    /// the geometry says).
    func pooling(_ kind: OpKind, _ geometry: PoolingGeometry, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
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
                WindowArithmetic.averageCount(window: $0, axis: axis - lead, geometry: geometry, extent: spatial[axis - lead])
            }
        }
        let average = kind == .averagePool
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: shape.kernelCount)
        Parallel.forEachRange(planes, parts: parts) { range in
            for plane in range {
                let input = source + plane * shape.inputCount
                var target = out + plane * shape.outputCount
                for od in 0..<shape.output[0] {
                    let (startD, tapsD) = shape.taps(0, od)
                    for oh in 0..<shape.output[1] {
                        let (startH, tapsH) = shape.taps(1, oh)
                        for ow in 0..<shape.output[2] {
                            let (startW, tapsW) = shape.taps(2, ow)
                            var total: Float = 0
                            var best = -Float.infinity
                            for kd in tapsD {
                                for kh in tapsH {
                                    let row = ((startD + kd * shape.dilations[0]) * shape.input[1]
                                        + startH + kh * shape.dilations[1]) * shape.input[2] + startW
                                    for kw in tapsW {
                                        let value = input[row + kw * shape.dilations[2]]
                                        total += value
                                        // Once NaN, `best` stays NaN: no value compares above it.
                                        if value > best || value.isNaN { best = value }
                                    }
                                }
                            }
                            if average {
                                let count = divisors[0][lead > 0 ? 0 : od] * divisors[1][lead > 1 ? 0 : oh] * divisors[2][ow]
                                target.pointee = total / Float(count)
                            } else {
                                target.pointee = best
                            }
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
