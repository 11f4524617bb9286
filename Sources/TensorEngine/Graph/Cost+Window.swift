// The cost formulas of the sliding-window ops.

extension CostRules {
    /// A convolution: 2·(C/groups)·(kernel elements) FLOPs per output, priced as a matrix product
    /// (backends lower it to one: im2col or implicit GEMM) when both the reduction and the output
    /// channels per group are wide enough to block, as pointwise work when its window is 1 × 1 in
    /// one group (at the rates of the calibration's 1 × 1 convolution probes); a depthwise or
    /// narrow convolution is window work (direct kernels, at the rate of the calibration's
    /// depthwise probe). A
    /// fused activation's bound is one more FLOP per output, and no traffic; a fused residual one
    /// more, and its operand's bytes.
    static let convolution: CostRule = { op, inputs, output in
        let weight = inputs.count > 1 ? inputs[1].signature.shape : []
        let reduction = weight.dropFirst().reduce(1, *)
        let geometry = op.convolutionGeometry
        let channelsPerGroup = (weight.first ?? 0) / Swift.max(1, geometry.groups)
        let blocked = reduction >= 16 && channelsPerGroup >= 16
        let pointwise = geometry.groups == 1 && weight.count > 2 && weight.dropFirst(2).allSatisfy { $0 == 1 }
        let perOutput = 2 * Double(reduction) + (geometry.clamp == nil ? 0 : 1) + (geometry.addsResidual ? 1 : 0)
        let costClass: CostClass = blocked ? (pointwise ? .pointwise : .matmul) : .window
        return streaming(op, inputs, output, flopsPerElement: perOutput, costClass: costClass)
    }

    /// A transposed convolution does the work of the convolution it transposes: 2·(M/groups)·
    /// (kernel elements) FLOPs per input element.
    static let convolutionTranspose: CostRule = { op, inputs, output in
        let input = inputs.first?.signature ?? output
        let weight = inputs.count > 1 ? inputs[1].signature.shape : []
        let perInput = weight.dropFirst().reduce(1, *)
        var result = streaming(
            op, inputs, output, flopsPerElement: 0, costClass: perInput >= 16 ? .matmul : .elementwise)
        result.cost.flops = 2 * Double(perInput) * Double(input.elementCount)
        return result
    }

    /// A pooling: one FLOP per window position, a line per output row. Not a line per output: the
    /// kernels work along output rows (the host's a plane's rows at a time, vectorised across
    /// the row), and priced a line per output (a reduction's per-line cost, a work-group's on a
    /// device), SqueezeNet's 3 × 3 max pools were estimated at 4.6-5.2 times their 20-67 µs.
    static let pooling: CostRule = { op, inputs, output in
        let window = op.poolingGeometry.kernel.reduce(1, *)
        var result = streaming(op, inputs, output, flopsPerElement: Double(window), costClass: .reduction)
        result.cost.lines = Double(output.elementCount / Swift.max(1, output.shape.last ?? 1))
        return result
    }
}
