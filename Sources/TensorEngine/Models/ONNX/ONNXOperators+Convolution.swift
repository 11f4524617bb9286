/// ONNX's sliding-window operators on the op table's convolutions and poolings: `Conv`,
/// `ConvTranspose`, `MaxPool`, `AveragePool`.
extension ONNXOperators {
    static let convolution: [String: ONNXOperator] = [
        "Conv": ONNXOperator(lower: conv),
        "ConvTranspose": ONNXOperator(lower: convTranspose),
        "MaxPool": ONNXOperator(lower: maxPool),
        "AveragePool": ONNXOperator(lower: averagePool),
    ]

    /// The window attributes every sliding-window operator shares, for `rank` spatial axes.
    private struct Window {
        var strides: [Int]
        var dilations: [Int]
        var padding: ConvolutionPadding

        init(_ node: ONNXNodeContext, rank: Int, kernel: [Int]) throws(ModelError) {
            strides = try node.ints("strides") ?? Array(repeating: 1, count: rank)
            dilations = try node.ints("dilations") ?? Array(repeating: 1, count: rank)
            if let shape = try node.ints("kernel_shape"), shape != kernel {
                throw node.error("kernel_shape \(shape) does not match the weight's kernel \(kernel)", .invalidModel)
            }
            guard strides.count == rank, dilations.count == rank else {
                throw node.error("needs \(rank) strides and dilations for \(rank) spatial axes", .invalidModel)
            }
            switch try node.string("auto_pad", default: "NOTSET") {
            case "NOTSET":
                let pads = try node.ints("pads") ?? Array(repeating: 0, count: 2 * rank)
                guard pads.count == 2 * rank else {
                    throw node.error("pads has \(pads.count) values for \(rank) spatial axes", .invalidModel)
                }
                padding = .explicit((0..<rank).map { (pads[$0], pads[$0 + rank]) })
            case "SAME_UPPER": padding = .same
            case "SAME_LOWER": padding = .sameLower
            case "VALID": padding = .valid
            case let other:
                throw node.error("auto_pad \(other) is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", .invalidModel)
            }
        }
    }

    /// The input `[N, C, spatial...]` of a sliding-window node, with its spatial rank.
    private static func image(_ node: ONNXNodeContext) throws(ModelError) -> (Tensor, rank: Int) {
        let x = try node.tensor(0)
        guard x.rank >= 3 else { throw node.error("needs an input [N, C, spatial...], not \(describe(x.shape))") }
        return (x, x.rank - 2)
    }

    static func conv(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        try conv(node, weight: try node.tensor(1), bias: node.hasInput(2) ? try node.tensor(2) : nil)
    }

    /// `Conv` with the given weight and bias in place of the node's (a batch normalization folded in).
    static func conv(_ node: ONNXNodeContext, weight w: Tensor, bias: Tensor?) throws(ModelError) -> [ONNXValue] {
        let (x, rank) = try image(node)
        let window = try Window(node, rank: rank, kernel: Array(w.shape.dropFirst(2)))
        let y = x.convolution(
            weight: w, bias: bias, strides: window.strides,
            padding: window.padding, dilations: window.dilations, groupCount: try node.int("group", default: 1))
        return [try node.output(y, try node.type(0))]
    }

    /// `ConvTranspose`: `pads` remove from the result; `output_shape`, when given, sets the
    /// result's extents instead (the padding that gives them split as the specification says:
    /// the odd element at the end for `SAME_UPPER`, at the start otherwise; a negative amount at
    /// the end extends the result, as extra output padding does).
    static func convTranspose(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let (x, rank) = try image(node)
        let w = try node.tensor(1)
        let kernel = Array(w.shape.dropFirst(2))
        let window = try Window(node, rank: rank, kernel: kernel)
        var outputPadding = try node.ints("output_padding") ?? Array(repeating: 0, count: rank)
        guard outputPadding.count == rank else {
            throw node.error("output_padding needs \(rank) values", .invalidModel)
        }
        let autoPad = try node.string("auto_pad", default: "NOTSET")
        var target = try node.ints("output_shape")
        if target == nil, autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" {
            target = try (0..<rank).map { axis throws(ModelError) in
                try checked(node, x.shape[axis + 2].multipliedReportingOverflow(by: window.strides[axis]))
            }
        }
        var pads: [(before: Int, after: Int)] = []
        if var target {
            // output_shape may list the batch and channel extents too.
            if target.count == rank + 2 { target = Array(target.dropFirst(2)) }
            guard target.count == rank else { throw node.error("output_shape needs \(rank) extents", .invalidModel) }
            for axis in 0..<rank {
                let grown = try checked(
                    node, window.strides[axis].multipliedReportingOverflow(by: x.shape[axis + 2] - 1))
                let span = try checked(node, window.dilations[axis].multipliedReportingOverflow(by: kernel[axis] - 1))
                guard let natural = Tensor.checkedSum([grown, outputPadding[axis], span, 1]) else {
                    throw node.error("the transposed convolution's extent overflows an Int", .invalidModel)
                }
                let total = try checked(node, natural.subtractingReportingOverflow(target[axis]))
                // Floor division, as the specification's Python reference divides.
                let half = total >= 0 ? total / 2 : -((-total + 1) / 2)
                var (before, after) = autoPad == "SAME_UPPER" ? (half, total - half) : (total - half, half)
                if after < 0 {
                    outputPadding[axis] = try checked(node, outputPadding[axis].subtractingReportingOverflow(after))
                    after = 0
                }
                guard before >= 0 else {
                    throw node.error(
                        "output_shape \(target) is larger than the transposed convolution reaches",
                        .unsupportedOperators)
                }
                pads.append((before, after))
            }
        } else if case .explicit(let explicit) = window.padding {
            pads = explicit
        } else {
            pads = Array(repeating: (0, 0), count: rank)
        }
        let y = x.transposedConvolution(
            weight: w, bias: node.hasInput(2) ? try node.tensor(2) : nil, strides: window.strides, padding: pads,
            outputPadding: outputPadding, dilations: window.dilations, groupCount: try node.int("group", default: 1))
        return [try node.output(y, try node.type(0))]
    }

    static func maxPool(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let (x, rank) = try image(node)
        if node.node.outputs.count > 1, !node.node.outputs[1].isEmpty {
            throw node.error("MaxPool's Indices output is not supported", .unsupportedOperators)
        }
        let kernel = try poolKernel(node, rank: rank)
        let window = try Window(node, rank: rank, kernel: kernel)
        let y = x.maxPool(
            kernelSize: kernel, strides: window.strides, padding: window.padding, dilations: window.dilations,
            ceilMode: try node.int("ceil_mode", default: 0) != 0)
        return [try node.output(y, try node.type(0))]
    }

    static func averagePool(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let (x, rank) = try image(node)
        let kernel = try poolKernel(node, rank: rank)
        let window = try Window(node, rank: rank, kernel: kernel)
        let y = x.averagePool(
            kernelSize: kernel, strides: window.strides, padding: window.padding, dilations: window.dilations,
            ceilMode: try node.int("ceil_mode", default: 0) != 0,
            countIncludingPadding: try node.int("count_include_pad", default: 0) != 0)
        return [try node.output(y, try node.type(0))]
    }

    /// The value of an arithmetic step on attribute values, or an error when it overflows.
    private static func checked(_ node: ONNXNodeContext, _ step: (partialValue: Int, overflow: Bool)) throws(ModelError)
        -> Int
    {
        guard !step.overflow else { throw node.error("its attributes overflow an Int", .invalidModel) }
        return step.partialValue
    }

    /// A pooling's required `kernel_shape`.
    private static func poolKernel(_ node: ONNXNodeContext, rank: Int) throws(ModelError) -> [Int] {
        guard let kernel = try node.ints("kernel_shape"), kernel.count == rank else {
            throw node.error("needs kernel_shape with \(rank) extents", .invalidModel)
        }
        return kernel
    }
}
