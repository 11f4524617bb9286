/// ONNX activation functions beyond the op table's own (`Relu`, `Sigmoid`, `Tanh` are there),
/// each composed from table ops so that every backend runs them and fusion joins them.
extension ONNXOperators {
    static let activations: [String: ONNXOperator] = [
        "LeakyRelu": activation { x, node throws(ModelError) in
            x.leakyRelu(alpha: try node.float("alpha", default: 0.01))
        },
        "Elu": activation { x, node throws(ModelError) in
            let alpha = try node.float("alpha", default: 1)
            return x.replacing(with: (x.exp() - 1) * alpha, where: x .< 0)
        },
        "Selu": activation { x, node throws(ModelError) in
            let alpha = try node.float("alpha", default: 1.673_263_2)
            let gamma = try node.float("gamma", default: 1.050_701)
            return x.replacing(with: (x.exp() - 1) * alpha, where: x .<= 0) * gamma
        },
        "Celu": activation(since: 12) { x, node throws(ModelError) in
            let alpha = try node.float("alpha", default: 1)
            return x.pointwiseMax(0) + ((x / alpha).exp() - 1).pointwiseMin(0) * alpha
        },
        "Softplus": activation { x, _ throws(ModelError) in
            // max(x, 0) + log(1 + exp(-|x|)): no overflow for large x.
            x.pointwiseMax(0) + ((-x.abs()).exp() + 1).log()
        },
        "Softsign": activation { x, _ throws(ModelError) in x / (x.abs() + 1) },
        "HardSigmoid": activation { x, node throws(ModelError) in
            x.hardSigmoid(alpha: try node.float("alpha", default: 0.2), beta: try node.float("beta", default: 0.5))
        },
        "HardSwish": activation(since: 14) { x, _ throws(ModelError) in x.hardSwish() },
        "ThresholdedRelu": activation(since: 10) { x, node throws(ModelError) in
            let alpha = try node.float("alpha", default: 1)
            return x.replacing(with: 0, where: x .<= alpha)
        },
        "Mish": activation(since: 18) { x, _ throws(ModelError) in
            x * (x.pointwiseMax(0) + ((-x.abs()).exp() + 1).log()).tanh()
        },
        "Gelu": activation(since: 20) { x, node throws(ModelError) in
            switch try node.string("approximate", default: "none") {
            case "none": return x.gelu(approximation: .none)
            case "tanh": return x.gelu(approximation: .tanh)
            case let other: throw node.error("approximate = '\(other)' is neither 'none' nor 'tanh'", .invalidModel)
            }
        },
        "PRelu": ONNXOperator { node throws(ModelError) in
            let x = try node.tensor(0)
            var slope = try node.tensor(1)
            // Older exports give one slope per channel as a vector: it applies along axis 1.
            if Op.broadcastShape(x.shape, slope.shape) == nil, slope.rank == 1, x.rank >= 2,
                slope.shape[0] == x.shape[1]
            {
                slope = slope.reshaped(to: [x.shape[1]] + [Int](repeating: 1, count: x.rank - 2))
            }
            let result = x.replacing(with: Tensor.binary(.multiply, x, slope, at: nil), where: x .< 0)
            return [try node.output(result, try node.type(0))]
        },
    ]

    /// A one-input activation with attributes, its result of the input's type.
    static func activation(
        since version: Int = 1, _ compute: @escaping @Sendable (Tensor, ONNXNodeContext) throws(ModelError) -> Tensor
    ) -> ONNXOperator {
        ONNXOperator(since: version) { node throws(ModelError) in
            [try node.output(try compute(try node.tensor(0), node), try node.type(0))]
        }
    }
}
