// The reference loops of the sliding-window ops: every output element from its window, read
// through explicit element offsets, sums in `Double`.

extension NaiveBackend {
    /// `y[n, m, o...] = bias[m] + Σ_{c, t} x[n, g·C/g + c, o·stride - pad + t·dilation] · w[m, c, t]`
    /// over the input channels `c` of output channel `m`'s group `g` and the kernel taps `t` that
    /// land inside the input (the padding reads as zeros), plus the residual `r[n, m, o...]` when the
    /// geometry adds one, then bounded by the geometry's clamp.
    func convolution(_ geometry: ConvolutionGeometry, _ inputs: [Value], _ output: TensorSignature) throws(TensorError)
        -> Value
    {
        let (result, out) = try allocate(output, for: "convolution")
        let (input, weight) = (inputs[0], inputs[1])
        let x = try HostElements(input)
        let w = try HostElements(weight)
        let biasIndex = geometry.biasIndex(operandCount: inputs.count)
        let residualIndex = geometry.residualIndex(operandCount: inputs.count)
        let bias = try biasIndex.map { index throws(TensorError) in try HostElements(inputs[index]) }
        let residual = try residualIndex.map { index throws(TensorError) in try HostElements(inputs[index]) }
        let (xOffsets, wOffsets) = (input.layout.elementOffsets(), weight.layout.elementOffsets())
        let bOffsets = biasIndex.map { inputs[$0].layout.elementOffsets() } ?? []
        let rOffsets = residualIndex.map { inputs[$0].layout.elementOffsets() } ?? []
        let inSpatial = Array(input.shape.dropFirst(2))
        let kernel = Array(weight.shape.dropFirst(2))
        let outSpatial = Array(output.shape.dropFirst(2))
        let (inCount, kernelCount, outCount) = (inSpatial.reduce(1, *), kernel.reduce(1, *), outSpatial.reduce(1, *))
        let channels = input.shape[1]
        let inPerGroup = channels / geometry.groups
        let outChannels = output.shape[1]
        let outPerGroup = outChannels / geometry.groups
        let taps = (0..<kernelCount).map { coordinates(of: $0, in: kernel) }
        var index = 0
        for n in 0..<output.shape[0] {
            for m in 0..<outChannels {
                let group = m / outPerGroup
                for o in 0..<outCount {
                    let position = coordinates(of: o, in: outSpatial)
                    var total = bias.map { $0.double(bOffsets[m]) } ?? 0
                    for (t, tap) in taps.enumerated() {
                        guard
                            let flat = inputPosition(
                                position, tap, geometry.strides, geometry.dilations, geometry.padding, inSpatial)
                        else {
                            continue
                        }
                        for c in 0..<inPerGroup {
                            let xValue = x.double(xOffsets[(n * channels + group * inPerGroup + c) * inCount + flat])
                            let wValue = w.double(wOffsets[(m * inPerGroup + c) * kernelCount + t])
                            total += xValue * wValue
                        }
                    }
                    if let residual { total += residual.double(rOffsets[index]) }
                    out.setDouble(geometry.clamp?.apply(total) ?? total, index)
                    index += 1
                }
            }
        }
        return result
    }

    /// The maximum (NaN winning; `-∞` or `Int32.min` for a window that misses the input) or the
    /// average of each window's elements inside the input, the average over the count the
    /// geometry says.
    func pooling(_ kind: OpKind, _ geometry: PoolingGeometry, _ input: Value, _ output: TensorSignature)
        throws(TensorError) -> Value
    {
        let (result, out) = try allocate(output, for: kind.name)
        let x = try HostElements(input)
        let offsets = input.layout.elementOffsets()
        let inSpatial = Array(input.shape.dropFirst(2))
        let outSpatial = Array(output.shape.dropFirst(2))
        let (inCount, outCount) = (inSpatial.reduce(1, *), outSpatial.reduce(1, *))
        let window = geometry.kernel.reduce(1, *)
        let taps = (0..<window).map { coordinates(of: $0, in: geometry.kernel) }
        let planes = output.shape[0] * output.shape[1]
        for plane in 0..<planes {
            for o in 0..<outCount {
                let position = coordinates(of: o, in: outSpatial)
                var window: [Int] = []
                for tap in taps {
                    guard
                        let flat = inputPosition(
                            position, tap, geometry.strides, geometry.dilations, geometry.padding, inSpatial)
                    else {
                        continue
                    }
                    window.append(offsets[plane * inCount + flat])
                }
                let index = plane * outCount + o
                if kind == .averagePool {
                    var count = 1
                    for axis in position.indices {
                        count *= WindowArithmetic.averageCount(
                            window: position[axis], axis: axis, geometry: geometry, extent: inSpatial[axis])
                    }
                    out.setDouble(window.reduce(0) { $0 + x.double($1) } / Double(count), index)
                } else if x.type.isFloatingPoint {
                    let best = window.reduce(ReductionMonoid.maximum.identity) {
                        ReductionMonoid.maximum.combine($0, x.double($1))
                    }
                    out.setDouble(best, index)
                } else {
                    let best = window.reduce(ReductionMonoid.maximum.integerIdentity(x.type)) {
                        ReductionMonoid.maximum.combine($0, x.long($1))
                    }
                    out.setLong(best, index)
                }
            }
        }
        return result
    }

    /// The row-major coordinates of flat index `index` in `shape`.
    private func coordinates(of index: Int, in shape: [Int]) -> [Int] {
        var rest = index
        var result = [Int](repeating: 0, count: shape.count)
        for axis in shape.indices.reversed() {
            result[axis] = rest % Swift.max(shape[axis], 1)
            rest /= Swift.max(shape[axis], 1)
        }
        return result
    }

    /// The flat row-major position in the input of window `position`'s tap `tap`, or `nil` when
    /// it falls in the padding.
    private func inputPosition(
        _ position: [Int], _ tap: [Int], _ strides: [Int], _ dilations: [Int], _ padding: [Padding], _ extents: [Int]
    ) -> Int? {
        var flat = 0
        for axis in position.indices {
            let coordinate = position[axis] * strides[axis] - padding[axis].before + tap[axis] * dilations[axis]
            guard (0..<extents[axis]).contains(coordinate) else { return nil }
            flat = flat * extents[axis] + coordinate
        }
        return flat
    }
}
