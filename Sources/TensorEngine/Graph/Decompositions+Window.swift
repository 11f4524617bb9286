extension Decompositions {
    /// A transposed convolution as a convolution: the input spread out by the strides (zeros
    /// between its elements), padded by `dilation·(kernel - 1)` less the transposed padding (a
    /// negative amount crops) plus the output padding at the end, then convolved at stride 1 with
    /// the kernel flipped and each group's input and output channels swapped.
    static let convolutionTranspose: @Sendable (Op, [Tensor]) -> Tensor = { op, x in
        let geometry = op.convolutionGeometry
        let rank = geometry.spatialRank
        let (input, weight) = (x[0], x[1])
        let spatial = Array(input.shape.dropFirst(2))
        let kernel = Array(weight.shape.dropFirst(2))
        let groups = geometry.groups

        // [N, C, i...] → [N, C, i, 1, ...] padded to [N, C, i, s, ...] → [N, C, i·s, ...], cropped
        // to (i - 1)·s + 1: s - 1 zeros between neighbours.
        var spread = input
        if geometry.strides.contains(where: { $0 > 1 }) {
            let interleaved = Array(input.shape.prefix(2)) + spatial.flatMap { [$0, 1] }
            let sizes = [(before: 0, after: 0), (0, 0)] + geometry.strides.flatMap { [(0, 0), (0, $0 - 1)] }
            var merged = Array(input.shape.prefix(2))
            for (extent, stride) in zip(spatial, geometry.strides) {
                // The shape rule bounds (extent - 1)·stride, not extent·stride.
                let (product, overflow) = extent.multipliedReportingOverflow(by: stride)
                guard !overflow else {
                    return Tensor(
                        failed: TensorError(
                            .tooLarge, op: "convolutionTranspose", operandShapes: [input.shape, weight.shape],
                            message: "the input spread by the strides \(geometry.strides) overflows an Int"))
                }
                merged.append(product)
            }
            spread = spread.reshaped(to: interleaved).padded(forSizes: sizes).reshaped(to: merged)
            let cropped = zip(spatial, geometry.strides).map { extent, stride in
                SliceDimension(start: 0, count: extent == 0 ? 0 : (extent - 1) * stride + 1, step: 1)
            }
            spread = Tensor.record(.slice(fullSlices(input.shape.prefix(2)) + cropped), [spread], at: nil)
        }

        // Pad by what the flipped kernel overhangs, crop where the transposed padding is larger.
        var pads: [(before: Int, after: Int)] = [(0, 0), (0, 0)]
        var crops = fullSlices(input.shape.prefix(2))
        for axis in 0..<rank {
            let overhang = geometry.dilations[axis] * (kernel[axis] - 1)
            let before = overhang - geometry.padding[axis].before
            let after = overhang - geometry.padding[axis].after + geometry.outputPadding[axis]
            let extent = spread.shape[axis + 2]
            pads.append((Swift.max(0, before), Swift.max(0, after)))
            crops.append(
                SliceDimension(start: Swift.max(0, -before), count: Swift.max(0, extent + before + after), step: 1))
        }
        let framed = Tensor.record(.slice(crops), [spread.padded(forSizes: pads)], at: nil)

        // [C, M/g, k...] → [g, C/g, M/g, k...] → [g, M/g, C/g, k...] → [M, C/g, k...], flipped.
        let (inPerGroup, outPerGroup) = (weight.shape[0] / Swift.max(1, groups), weight.shape[1])
        let swapped = weight.reshaped(to: [groups, inPerGroup, outPerGroup] + kernel)
            .transposed(permutation: [0, 2, 1] + Array(3..<(rank + 3)))
            .reshaped(to: [groups * outPerGroup, inPerGroup] + kernel)
            .reversed(alongAxes: Array(2..<(rank + 2)))
        let forward = ConvolutionGeometry(
            strides: Array(repeating: 1, count: rank), dilations: geometry.dilations,
            padding: Array(repeating: Padding(before: 0, after: 0), count: rank), groups: groups,
            outputPadding: Array(repeating: 0, count: rank), clamp: geometry.clamp, addsResidual: geometry.addsResidual)
        return Tensor.record(.convolution(forward), [framed, swapped] + x.dropFirst(2), at: nil)
    }

    /// Whole-axis slices of the leading axes.
    private static func fullSlices(_ extents: ArraySlice<Int>) -> [SliceDimension] {
        extents.map { SliceDimension(start: 0, count: $0, step: 1) }
    }
}
