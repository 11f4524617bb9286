// The rest of the CNN family, composed from the op table's ops (so every backend runs them and
// fusion merges them): the activations CNNs use, the normalizations of `[N, C, spatial...]`, and
// the depth/space rearrangements.

extension Tensor {
    /// `x` where it is positive or zero, `alpha·x` elsewhere.
    public func leakyRelu(alpha: Float = 0.01, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        replacing(with: self * alpha, where: self .< 0, file: file, line: line)
    }

    /// `x` where it is positive or zero, `slope·x` elsewhere, the slope broadcast against `x`
    /// (one per channel: shape `[C, 1, 1]` for `[N, C, H, W]`).
    public func prelu(slope: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        replacing(
            with: Tensor.binary(.multiply, self, slope, at: SourceLocation(file, line)), where: self .< 0, file: file,
            line: line)
    }

    /// `clamp(alpha·x + beta, 0, 1)`: a piecewise-linear sigmoid.
    public func hardSigmoid(alpha: Float = 0.2, beta: Float = 0.5) -> Tensor {
        (self * alpha + beta).pointwiseMax(0).pointwiseMin(1)
    }

    /// `x · hardSigmoid(x; 1/6, 1/2)` (MobileNetV3's activation).
    public func hardSwish() -> Tensor {
        self * hardSigmoid(alpha: 1 / 6, beta: 0.5)
    }

    /// Batch normalization with running statistics (inference): `(x - mean) / √(variance + ε) ·
    /// scale + offset` per channel of `[N, C, spatial...]`, the four parameters of shape `[C]`.
    public func batchNormalized(
        mean: Tensor, variance: Tensor, scale: Tensor, offset: Tensor, epsilon: Float = 1e-5,
        file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        guard let parameters = channelParameters([mean, variance, scale, offset]) else {
            return firstFailure([mean, variance, scale, offset], "batchNormalized", location)
        }
        let (m, v, s, b) = (parameters[0], parameters[1], parameters[2], parameters[3])
        let factor = Tensor.binary(.multiply, (v + epsilon).rsqrt(), s, at: location)
        return Tensor.binary(
            .add, Tensor.binary(.multiply, Tensor.binary(.subtract, self, m, at: location), factor, at: location), b,
            at: location)
    }

    /// Instance normalization: each `(n, c)` plane standardized over its spatial axes (population
    /// variance), then `scale` and `offset` per channel (shape `[C]`).
    public func instanceNormalized(
        scale: Tensor, offset: Tensor, epsilon: Float = 1e-5, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        guard let parameters = channelParameters([scale, offset]) else {
            return firstFailure([scale, offset], "instanceNormalized", location)
        }
        let y = standardized(alongAxes: Array(2..<rank), epsilon: epsilon)
        return Tensor.binary(
            .add, Tensor.binary(.multiply, y, parameters[0], at: location), parameters[1], at: location)
    }

    /// Group normalization: the channels of `[N, C, spatial...]` in `groupCount` groups, each
    /// standardized over its channels and spatial axes, then `scale` and `offset` per channel.
    public func groupNormalized(
        groupCount: Int, scale: Tensor, offset: Tensor, epsilon: Float = 1e-5, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        guard let parameters = channelParameters([scale, offset]) else {
            return firstFailure([scale, offset], "groupNormalized", location)
        }
        guard groupCount > 0, shape[1] % groupCount == 0 else {
            return Tensor(
                failed: TensorError(
                    .invalidArgument, op: "groupNormalized", operandShapes: [shape],
                    message: "\(shape[1]) channels do not split into \(groupCount) groups", location: location))
        }
        let grouped = reshaped(to: [shape[0], groupCount, -1], file: file, line: line)
        let y = grouped.standardized(alongAxes: [2], epsilon: epsilon).reshaped(to: shape, file: file, line: line)
        return Tensor.binary(
            .add, Tensor.binary(.multiply, y, parameters[0], at: location), parameters[1], at: location)
    }

    /// `[N, C, H, W]` → `[N, C / b², H·b, W·b]`: each pixel's channels spread over a `b × b`
    /// block, depth-column-row (`DCR`, ONNX's default and TensorFlow's order) or column-row-depth
    /// (`CRD`, PyTorch's `pixel_shuffle`).
    public func depthToSpace(
        blockSize: Int, columnRowDepth: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        guard rank == 4, blockSize > 0,
            case (let area, let overflow) = blockSize.multipliedReportingOverflow(by: blockSize),
            !overflow, shape[1] % area == 0
        else {
            return rearrangementFailure("depthToSpace", "needs [N, C, H, W] with C divisible by blockSize²", file, line)
        }
        let (n, c, h, w) = (shape[0], shape[1], shape[2], shape[3])
        let depth = c / area
        let moved =
            columnRowDepth
            ? reshaped(to: [n, depth, blockSize, blockSize, h, w], file: file, line: line)
                .transposed(permutation: [0, 1, 4, 2, 5, 3], file: file, line: line)
            : reshaped(to: [n, blockSize, blockSize, depth, h, w], file: file, line: line)
                .transposed(permutation: [0, 3, 4, 1, 5, 2], file: file, line: line)
        return moved.reshaped(to: [n, depth, h * blockSize, w * blockSize], file: file, line: line)
    }

    /// `[N, C, H, W]` → `[N, C·b², H / b, W / b]`: the inverse of ``depthToSpace(blockSize:columnRowDepth:file:line:)``
    /// in its `DCR` order.
    public func spaceToDepth(blockSize: Int, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        guard rank == 4, blockSize > 0, shape[2] % blockSize == 0, shape[3] % blockSize == 0 else {
            return rearrangementFailure(
                "spaceToDepth", "needs [N, C, H, W] with H and W divisible by blockSize", file, line)
        }
        let (n, c, h, w) = (shape[0], shape[1], shape[2], shape[3])
        return reshaped(to: [n, c, h / blockSize, blockSize, w / blockSize, blockSize], file: file, line: line)
            .transposed(permutation: [0, 3, 5, 1, 2, 4], file: file, line: line)
            .reshaped(to: [n, c * blockSize * blockSize, h / blockSize, w / blockSize], file: file, line: line)
    }

    /// `(x - mean) / √(variance + ε)` over `axes`, the population variance.
    func standardized(alongAxes axes: [Int], epsilon: Float) -> Tensor {
        let centered = self - mean(alongAxes: axes, keepRank: true)
        return centered * ((centered * centered).mean(alongAxes: axes, keepRank: true) + epsilon).rsqrt()
    }

    /// Per-channel parameters `[C]` of `[N, C, spatial...]` shaped `[C, 1, ...]` to broadcast
    /// along axis 1; `nil` when one failed or does not fit.
    private func channelParameters(_ parameters: [Tensor]) -> [Tensor]? {
        guard error == nil, rank >= 2, parameters.allSatisfy({ $0.error == nil && $0.shape == [shape[1]] }) else {
            return nil
        }
        return parameters.map { $0.reshaped(to: [shape[1]] + [Int](repeating: 1, count: rank - 2)) }
    }

    /// The error for parameters that do not fit: the first failed operand's, else a shape mismatch.
    private func firstFailure(_ parameters: [Tensor], _ name: String, _ location: SourceLocation) -> Tensor {
        if let failed = ([self] + parameters).first(where: { $0.error != nil }) { return failed }
        return Tensor(
            failed: TensorError(
                .shapeMismatch, op: name, operandShapes: [shape] + parameters.map(\.shape),
                message: "needs [N, C, spatial...] and parameters of one value per channel", location: location))
    }

    private func rearrangementFailure(_ name: String, _ message: String, _ file: StaticString, _ line: UInt) -> Tensor {
        if error != nil { return self }
        return Tensor(
            failed: TensorError(
                .invalidArgument, op: name, operandShapes: [shape], message: message,
                location: SourceLocation(file, line)))
    }
}
