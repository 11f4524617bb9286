/// MIL's network operations: products, convolutions, pooling, normalizations, resampling and
/// attention, and the reductions.
extension MILOperators {
    static let network: [String: MILOperator] = [
        // `weight` is [out, in]: x · weightᵀ + bias.
        "linear": unary { x, context throws(ModelError) in
            let weight = try context.tensor("weight")
            guard weight.rank == 2 else { throw context.error("weight \(describe(weight.shape)) is not a matrix") }
            let product = x.matmul(weight.transposed())
            guard let bias = try context.optionalTensor("bias") else { return product }
            // One `linear` op: the product adds the bias as it finishes each piece.
            return product.addingBias(bias) ?? product + bias
        },
        "matmul": MILOperator { context throws(ModelError) in
            var x = try context.tensor("x")
            var y = try context.tensor("y")
            if try context.bool("transpose_x", default: false), x.rank >= 2 { x = swapLastAxes(x) }
            if try context.bool("transpose_y", default: false), y.rank >= 2 { y = swapLastAxes(y) }
            return [try context.output(x.matmul(y))]
        },
        "conv": unary { x, context throws(ModelError) in
            let spatial = Swift.max(x.rank - 2, 0)
            return x.convolution(
                weight: try context.tensor("weight"), bias: try context.optionalTensor("bias"),
                strides: try context.optionalInts("strides"), padding: try padding(context, spatial: spatial),
                dilations: try context.optionalInts("dilations"), groupCount: try context.int("groups", default: 1))
        },
        "conv_transpose": unary { x, context throws(ModelError) in
            let spatial = Swift.max(x.rank - 2, 0)
            let weight = try context.tensor("weight")
            let strides = try context.optionalInts("strides") ?? [Int](repeating: 1, count: spatial)
            let dilations = try context.optionalInts("dilations") ?? [Int](repeating: 1, count: spatial)
            // Sizes computed here stay far from overflow; the front end checks the geometry itself.
            guard strides.count == spatial, dilations.count == spatial,
                (strides + dilations).allSatisfy({ (1...(1 << 24)).contains($0) }),
                weight.rank != spatial + 2 || weight.shape.allSatisfy({ $0 <= 1 << 24 })
            else { throw context.error("strides \(strides) or dilations \(dilations) do not fit the kernel") }
            var crops = [(before: Int, after: Int)](repeating: (0, 0), count: spatial)
            switch try context.string("pad_type", default: "valid") {
            case "valid": break
            case "custom":
                let pads = try context.optionalInts("pad") ?? []
                guard pads.count == 2 * spatial else { throw context.error("pad needs \(2 * spatial) values") }
                crops = (0..<spatial).map { (pads[2 * $0], pads[2 * $0 + 1]) }
            case "same":
                // The output is input · stride: the kernel's overhang is cropped, more after.
                for axis in 0..<spatial where weight.rank == spatial + 2 {
                    let extent = (weight.shape[axis + 2] - 1) * dilations[axis] + 1
                    let total = Swift.max(extent - strides[axis], 0)
                    crops[axis] = (total / 2, total - total / 2)
                }
            case let other: throw context.error("pad_type '\(other)' is not one MIL defines", .invalidModel)
            }
            var outputPadding = [Int](repeating: 0, count: spatial)
            if let shape = try context.optionalInts("output_shape"),
                shape.count == spatial + 2 || shape.count == spatial
            {
                let target = Array(shape.suffix(spatial))
                for axis in 0..<spatial where weight.rank == spatial + 2 {
                    let natural =
                        (x.shape[axis + 2] - 1) * strides[axis] + (weight.shape[axis + 2] - 1) * dilations[axis] + 1
                        - crops[axis].before - crops[axis].after
                    outputPadding[axis] = target[axis] - natural
                }
            }
            return x.transposedConvolution(
                weight: weight, bias: try context.optionalTensor("bias"), strides: strides, padding: crops,
                outputPadding: outputPadding, dilations: dilations, groupCount: try context.int("groups", default: 1))
        },
        "max_pool": unary { x, context throws(ModelError) in
            x.maxPool(
                kernelSize: try context.ints("kernel_sizes"), strides: try context.optionalInts("strides"),
                padding: try padding(context, spatial: Swift.max(x.rank - 2, 0)),
                ceilMode: try context.bool("ceil_mode", default: false))
        },
        "avg_pool": unary { x, context throws(ModelError) in
            x.averagePool(
                kernelSize: try context.ints("kernel_sizes"), strides: try context.optionalInts("strides"),
                padding: try padding(context, spatial: Swift.max(x.rank - 2, 0)),
                ceilMode: try context.bool("ceil_mode", default: false),
                countIncludingPadding: !(try context.bool("exclude_padding_from_average", default: false)))
        },
        "batch_norm": unary { x, context throws(ModelError) in
            let channels = x.rank > 1 ? x.shape[1] : 1
            let ones = Tensor(repeating: Float(1), shape: [channels]).converted(to: x.dtype)
            let zeros = Tensor(repeating: Float(0), shape: [channels]).converted(to: x.dtype)
            return x.batchNormalized(
                mean: try context.tensor("mean"), variance: try context.tensor("variance"),
                scale: try context.optionalTensor("gamma") ?? ones, offset: try context.optionalTensor("beta") ?? zeros,
                epsilon: try context.float("epsilon", default: 1e-5))
        },
        "instance_norm": unary { x, context throws(ModelError) in
            let channels = x.rank > 1 ? x.shape[1] : 1
            return x.instanceNormalized(
                scale: try context.optionalTensor("gamma") ?? Tensor(repeating: Float(1), shape: [channels]),
                offset: try context.optionalTensor("beta") ?? Tensor(repeating: Float(0), shape: [channels]),
                epsilon: try context.float("epsilon", default: 1e-5))
        },
        "layer_norm": unary(layerNorm),
        "l2_norm": unary { x, context throws(ModelError) in
            let axes = try axes(
                try context.optionalInts("axes") ?? Array(1..<Swift.max(x.rank, 1)), rank: x.rank, context)
            let norm = (x.squared().sum(alongAxes: axes, keepRank: true)).squareRoot()
            return x / norm.pointwiseMax(try context.float("epsilon", default: 1e-6))
        },
        "upsample_nearest_neighbor": unary { x, context throws(ModelError) in
            let height = try context.float("scale_factor_height", default: 1)
            let width = try context.float("scale_factor_width", default: 1)
            return x.resized(to: try scaled(x, height, width, context), method: .nearestNeighbor)
        },
        "upsample_bilinear": unary { x, context throws(ModelError) in
            let height = try context.float("scale_factor_height", default: 1)
            let width = try context.float("scale_factor_width", default: 1)
            let alignCorners = try context.bool("align_corners", default: true)
            // iOS 16's `half_pixel_centers` defaults to `!align_corners`; both false is TensorFlow's
            // asymmetric mapping, which the engine's bilinear resize does not have.
            let halfPixelCentres = try context.bool("half_pixel_centers", default: !alignCorners)
            guard alignCorners || halfPixelCentres else {
                throw context.error(
                    "bilinear upsampling without aligned corners or half-pixel centres is not supported",
                    .unsupportedOperators)
            }
            return x.resized(to: try scaled(x, height, width, context), method: .bilinear(alignCorners: alignCorners))
        },
        "resize_nearest_neighbor": unary { x, context throws(ModelError) in
            x.resized(
                to: [try context.int("target_size_height"), try context.int("target_size_width")],
                method: .nearestNeighbor)
        },
        "resize_bilinear": unary { x, context throws(ModelError) in
            let size = [
                try context.int("target_size_height", default: 1), try context.int("target_size_width", default: 1),
            ]
            switch try context.string("sampling_mode", default: "DEFAULT") {
            case "ALIGN_CORNERS", "STRICT_ALIGN_CORNERS":
                return x.resized(to: size, method: .bilinear(alignCorners: true))
            case "UNALIGN_CORNERS": return x.resized(to: size, method: .bilinear(alignCorners: false))
            case let other:
                throw context.error(
                    "resize_bilinear's sampling mode '\(other)' is not supported", .unsupportedOperators)
            }
        },
        "scaled_dot_product_attention": MILOperator { context throws(ModelError) in
            let query = try context.tensor("query")
            let key = try context.tensor("key")
            let value = try context.tensor("value")
            let depth = query.shape.last ?? 1
            var mask = try context.optionalTensor("attn_mask")
            if let given = mask, given.dtype == .bool {
                // Booleans say which keys attend: 0 there, -inf elsewhere.
                let blocked = Tensor.scalar(-.infinity, query.dtype).broadcastIfNeeded(to: given.shape, at: nil)
                mask = blocked.replacing(with: Tensor.scalar(0, query.dtype), where: given)
            }
            // The engine's attention op, unless the operands need more broadcasting than it takes.
            let fused = Tensor.scaledDotProductAttention(query: query, key: key, value: value, mask: mask)
            if fused.error == nil { return [try context.output(fused)] }
            var scores = query.matmul(swapLastAxes(key)) * (1 / Float(depth).squareRoot())
            if let mask { scores = scores + mask }
            return [try context.output(scores.softmax(alongAxis: -1).matmul(value))]
        },
    ]

    /// The last two axes swapped.
    static func swapLastAxes(_ x: Tensor) -> Tensor {
        var permutation = Array(0..<x.rank)
        permutation.swapAt(x.rank - 1, x.rank - 2)
        return x.transposed(permutation: permutation)
    }

    /// A window operation's padding from `pad_type` and `pad`.
    static func padding(_ context: MILOperationContext, spatial: Int) throws(ModelError) -> ConvolutionPadding {
        switch try context.string("pad_type", default: "valid") {
        case "valid": return .valid
        case "same": return .same
        case "same_lower": return .sameLower
        case "custom":
            let pads = try context.optionalInts("pad") ?? [Int](repeating: 0, count: 2 * spatial)
            guard pads.count == 2 * spatial else { throw context.error("pad needs \(2 * spatial) values") }
            return .explicit((0..<spatial).map { (pads[2 * $0], pads[2 * $0 + 1]) })
        case let other: throw context.error("pad_type '\(other)' is not one MIL defines", .invalidModel)
        }
    }

    /// The height and width of `x` scaled by the factors, each a whole size.
    private static func scaled(_ x: Tensor, _ height: Float, _ width: Float, _ context: MILOperationContext)
        throws(ModelError) -> [Int]
    {
        guard x.rank >= 2 else { throw context.error("resampling needs a rank of at least 2") }
        let sizes = [Float(x.shape[x.rank - 2]) * height, Float(x.shape[x.rank - 1]) * width]
        guard sizes.allSatisfy({ $0.isFinite && $0 >= 0 && $0 < Float(Int32.max) }) else {
            throw context.error("scale factors \(height), \(width) give sizes \(sizes)")
        }
        return sizes.map { Int($0.rounded(.down)) }
    }

    /// `layer_norm`: normalized over `axes` (the last when they are contiguous at the end, else by
    /// mean and variance), then scaled by `gamma` and offset by `beta`.
    private static func layerNorm(_ x: Tensor, _ context: MILOperationContext) throws(ModelError) -> Tensor {
        let axes = try axes(try context.optionalInts("axes") ?? Array(0..<x.rank), rank: x.rank, context).sorted()
        let epsilon = try context.float("epsilon", default: 1e-5)
        let gamma = try context.optionalTensor("gamma")
        let beta = try context.optionalTensor("beta")
        var normalized: Tensor
        if axes == [x.rank - 1] {
            // The op applies both parameters itself when they vary along the axis alone.
            return x.layerNorm(alongAxis: -1, epsilon: epsilon, scale: gamma, bias: beta)
        } else {
            let mean = x.mean(alongAxes: axes, keepRank: true)
            let centred = x - mean
            normalized = centred * (centred.squared().mean(alongAxes: axes, keepRank: true) + epsilon).rsqrt()
        }
        if let gamma { normalized = normalized * gamma }
        if let beta { normalized = normalized + beta }
        return normalized
    }

    static let reductions: [String: MILOperator] = [
        "reduce_sum": reduction { x, axes, keep in x.sum(alongAxes: axes, keepRank: keep) },
        "reduce_mean": reduction { x, axes, keep in x.mean(alongAxes: axes, keepRank: keep) },
        "reduce_max": reduction { x, axes, keep in x.max(alongAxes: axes, keepRank: keep) },
        "reduce_min": reduction { x, axes, keep in x.min(alongAxes: axes, keepRank: keep) },
        "reduce_prod": reduction { x, axes, keep in x.product(alongAxes: axes, keepRank: keep) },
        "reduce_sum_square": reduction { x, axes, keep in x.squared().sum(alongAxes: axes, keepRank: keep) },
        "reduce_l1_norm": reduction { x, axes, keep in x.abs().sum(alongAxes: axes, keepRank: keep) },
        "reduce_l2_norm": reduction { x, axes, keep in x.squared().sum(alongAxes: axes, keepRank: keep).squareRoot() },
        "reduce_log_sum": reduction { x, axes, keep in x.sum(alongAxes: axes, keepRank: keep).log() },
        "reduce_log_sum_exp": reduction { x, axes, keep in
            let peak = x.max(alongAxes: axes, keepRank: true)
            let sum = (x - peak).exp().sum(alongAxes: axes, keepRank: true).log() + peak
            return keep ? sum : sum.squeezingShape(at: axes)
        },
        "reduce_argmax": MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axis = try axis(try context.int("axis", default: -1), rank: x.rank, context)
            return [
                try context.output(x.argmax(alongAxis: axis, keepRank: try context.bool("keep_dims", default: false)))
            ]
        },
        "reduce_argmin": MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axis = try axis(try context.int("axis", default: -1), rank: x.rank, context)
            return [
                try context.output(x.argmin(alongAxis: axis, keepRank: try context.bool("keep_dims", default: false)))
            ]
        },
        "cumsum": unary { x, context throws(ModelError) in
            let axis = try axis(try context.int("axis", default: 0), rank: x.rank, context)
            let reverse = try context.bool("reverse", default: false)
            let input = reverse ? x.reversed(alongAxes: axis) : x
            var sum = input.cumulativeSum(alongAxis: axis)
            if try context.bool("exclusive", default: false) { sum = sum - input }
            return reverse ? sum.reversed(alongAxes: axis) : sum
        },
        "topk": MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axis = try axis(try context.int("axis", default: -1), rank: x.rank, context)
            let k = try context.int("k", default: 1)
            let ascending = try context.bool("ascending", default: false)
            let moved = axis == x.rank - 1 ? x : x.transposed(permutation: movedLast(axis, rank: x.rank))
            let (values, indices) = (ascending ? -moved : moved).topK(k)
            let back = inverse(movedLast(axis, rank: x.rank))
            let restore = { (tensor: Tensor) in axis == x.rank - 1 ? tensor : tensor.transposed(permutation: back) }
            return try context.outputs([restore(ascending ? -values : values), restore(indices)])
        },
        "argsort": unary { x, context throws(ModelError) in
            let axis = try axis(try context.int("axis", default: -1), rank: x.rank, context)
            return x.argsort(alongAxis: axis, descendingOrder: !(try context.bool("ascending", default: false)))
        },
    ]

    /// A reduction over `axes` (every axis when not bound), keeping them with `keep_dims`.
    private static func reduction(_ compute: @escaping @Sendable (Tensor, [Int], Bool) -> Tensor) -> MILOperator {
        MILOperator { context throws(ModelError) in
            let x = try context.tensor("x")
            let axes = try axes(try context.optionalInts("axes") ?? Array(0..<x.rank), rank: x.rank, context)
            return [try context.output(compute(x, axes, try context.bool("keep_dims", default: false)))]
        }
    }

    /// The permutation moving `axis` last.
    private static func movedLast(_ axis: Int, rank: Int) -> [Int] { (0..<rank).filter { $0 != axis } + [axis] }

    /// The inverse of a permutation.
    private static func inverse(_ permutation: [Int]) -> [Int] {
        var inverse = permutation
        for (index, axis) in permutation.enumerated() { inverse[axis] = index }
        return inverse
    }
}
