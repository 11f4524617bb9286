import TensorEngine

/// One case of the generated parity suite: an op applied to inputs of given shapes, types and
/// layouts. Every backend's result is compared with the naive reference under the op's tolerance.
package struct ParityCase: Sendable, CustomStringConvertible {
    /// The op under test; for a composite case, the op whose tolerance bounds the whole chain.
    package let op: Op
    var isComposite = false
    package let label: String
    package let inputs: [SampleInput]
    /// Terms summed into one output (K for matmul): scales the tolerance.
    package let reductionLength: Int
    package let build: @Sendable ([Tensor]) -> Tensor

    package var kind: OpKind { op.kind }

    package var description: String {
        "\(isComposite ? "composite" : kind.name) \(label): " + inputs.map(\.description).joined(separator: ", ")
    }

    /// The bound a backend's result must stay within.
    package var tolerance: Tolerance { op.descriptor.tolerance.tolerance(for: op, reductionLength: reductionLength) }

    /// Every parity case: each op's samples, then the composites.
    package static var all: [ParityCase] { OpKind.allCases.flatMap(\.parityCases) + ParityCase.compositeCases }

    /// Creates the inputs afresh (new nodes each call, so no cached result is shared).
    package func makeInputs(seed: Int) -> [Tensor] {
        inputs.enumerated().map { index, input in input.make(seed: seed &* 31 &+ index) }
    }
}

extension OpKind {
    /// The tolerance of the op without attributes, for outputs of `reductionLength` terms.
    package func parityTolerance(reductionLength: Int) -> Tolerance {
        descriptor.tolerance.tolerance(for: Op(self), reductionLength: reductionLength)
    }

    /// The op's parity cases, made from its row's sample spec: every op has some, by
    /// construction, except constants.
    package var parityCases: [ParityCase] {
        switch descriptor.samples {
        case .none:
            return []
        case .elementwise(let variants):
            return variants.flatMap { elementwiseCases(Op(self, $0)) }
        case .reduction(let samples, let makeOp):
            return reductionCases(samples, makeOp)
        case .lines(let makeOp, let more):
            let shapes: [([Int], SampleLayout, Int)] = [
                ([3, 5], .contiguous, 1), ([3, 5], .contiguous, 0), ([2, 3, 4], .transposed, 1), ([4, 6], .strided, 1),
                ([1, 1], .contiguous, 1), ([0, 4], .contiguous, 1), ([5], .reversed, 0), ([300, 1000], .contiguous, 1),
                ([128, 384], .contiguous, 1),
                // Rows of a thousand and more take kernels of their own (one row at a time, passes
                // pipelined across rows): a whole number of steps and a ragged tail.
                ([6, 1031], .contiguous, 1),
            ]
            let special = ParityCase(
                op: makeOp(1), label: "float32 special values",
                inputs: [SampleInput(shape: [11, 4], values: .special(shift: 0))],
                reductionLength: 4, build: recorded(makeOp(1)))
            let longSpecial = ParityCase(
                op: makeOp(1), label: "float32 special values, long rows",
                inputs: [SampleInput(shape: [3, 1040], values: .special(shift: 0))],
                reductionLength: 1040, build: recorded(makeOp(1)))
            return [special, longSpecial]
                + descriptor.operandTypes.accepted.types.flatMap { type in
                    shapes.filter { type == .float32 || $0.0.reduce(1, *) < 1000 }.map { shape, layout, axis in
                        ParityCase(
                            op: makeOp(axis), label: "\(type) axis \(axis)",
                            inputs: [SampleInput(shape: shape, type: type, layout: layout)],
                            reductionLength: shape[axis], build: recorded(makeOp(axis)))
                    }
                } + handWritten(more)
        case .cases(let samples):
            return handWritten(samples)
        }
    }

    /// The op recorded on the case's inputs.
    private func recorded(_ op: Op) -> @Sendable ([Tensor]) -> Tensor { { Tensor.record(op, $0, at: nil) } }

    /// Parity cases of hand-written samples.
    private func handWritten(_ samples: [ParitySample]) -> [ParityCase] {
        samples.map { sample in
            let op: Op
            let build: @Sendable ([Tensor]) -> Tensor
            switch sample.apply {
            case .op(let sampled):
                op = sampled
                build = recorded(sampled)
            case .frontEnd(let body):
                op = Op(self)
                build = body
            }
            return ParityCase(
                op: op, label: sample.label, inputs: sample.inputs, reductionLength: sample.reductionLength,
                build: build)
        }
    }

    /// Every accepted type over shapes of every layout, and special values.
    private func elementwiseCases(_ op: Op) -> [ParityCase] {
        let descriptor = self.descriptor
        let values = SampleValues.ordinary(op.elementwiseExpression.sampleDomain)
        let arity = descriptor.arity.sampleCount
        let masked = if case .masked = descriptor.operandTypes { true } else { false }
        let prefix =
            switch op.attributes {
            case .scalarType(let target): "to \(target) "
            case .gelu(let approximation): "\(approximation) "
            case .none, .axes, .axis, .normalization, .topK, .shape, .permutation, .slice, .padding, .convolution,
                .pooling, .attention, .linearActivation:
                ""
            }
        let build: @Sendable ([Tensor]) -> Tensor = { Tensor.record(op, $0, at: nil) }
        return descriptor.operandTypes.accepted.types.flatMap { type -> [ParityCase] in
            // The data operands' shapes and layouts; a mask takes the layout of the second.
            let dataArity = masked ? arity - 1 : arity
            let layouts =
                dataArity == 1 ? Self.unaryShapes(large: type == .float32) : Self.binaryShapes(large: type == .float32)
            var cases = layouts.map { shapes -> ParityCase in
                var inputs = (0..<dataArity).map {
                    SampleInput(
                        shape: shapes[$0 % shapes.count].shape, type: type,
                        layout: shapes[$0 % shapes.count].layout, values: values)
                }
                if masked {
                    inputs.insert(
                        SampleInput(shape: inputs[0].shape, type: .bool, layout: shapes[shapes.count - 1].layout), at: 0
                    )
                }
                return ParityCase(op: op, label: "\(prefix)\(type)", inputs: inputs, reductionLength: 1, build: build)
            }
            var special = (0..<dataArity).map { index in
                SampleInput(
                    shape: dataArity == 1 ? [3, 11] : [11, 11], type: type,
                    layout: index == 1 ? .transposed : .contiguous,
                    values: .special(shift: 3 * index))
            }
            if masked {
                special.insert(SampleInput(shape: special[0].shape, type: .bool, values: .special(shift: 1)), at: 0)
            }
            cases.append(
                ParityCase(
                    op: op, label: "\(prefix)\(type) special values", inputs: special, reductionLength: 1, build: build)
            )
            return cases
        }
    }

    private func reductionCases(_ samples: ReductionSamples, _ makeOp: @Sendable ([Int], Bool) -> Op) -> [ParityCase] {
        descriptor.operandTypes.accepted.types.flatMap { type -> [ParityCase] in
            let shapes = Self.reductionShapes(type)
            switch samples {
            case .axes(let specialValues):
                let ordinary = shapes.map { shape, layout, axes, keep in
                    let op = makeOp(axes, keep)
                    return ParityCase(
                        op: op, label: "\(type) axes \(axes)\(keep ? " keepRank" : "")",
                        inputs: [SampleInput(shape: shape, type: type, layout: layout)],
                        reductionLength: axes.reduce(1) { $0 * shape[$1] }, build: { Tensor.record(op, $0, at: nil) })
                }
                let special = (specialValues ? [1, 0] : []).map { axis in
                    let op = makeOp([axis], false)
                    return ParityCase(
                        op: op, label: "\(type) special values axis \(axis)",
                        inputs: [SampleInput(shape: [7, 5], type: type, values: .special(shift: axis))],
                        reductionLength: 7, build: { Tensor.record(op, $0, at: nil) })
                }
                return ordinary + special
            case .oneAxis:
                let op = makeOp([1], false)
                return shapes.filter { $0.2.count == 1 && $0.0[$0.2[0]] > 0 }.map { shape, layout, axes, keep in
                    let op = makeOp(axes, keep)
                    return ParityCase(
                        op: op, label: "\(type) axis \(axes[0])\(keep ? " keepRank" : "")",
                        inputs: [SampleInput(shape: shape, type: type, layout: layout)], reductionLength: 1,
                        build: { Tensor.record(op, $0, at: nil) })
                } + [
                    ParityCase(
                        op: op, label: "\(type) special values",
                        inputs: [SampleInput(shape: [7, 5], type: type, values: .special(shift: 2))],
                        reductionLength: 1, build: { Tensor.record(op, $0, at: nil) })
                ]
            case .scan:
                return shapes.filter { $0.2.count == 1 }.map { shape, layout, axes, _ in
                    let op = makeOp(axes, false)
                    return ParityCase(
                        op: op, label: "\(type) axis \(axes[0])",
                        inputs: [SampleInput(shape: shape, type: type, layout: layout)],
                        reductionLength: shape[axes[0]], build: { Tensor.record(op, $0, at: nil) })
                }
            }
        }
    }

    /// Shapes and layouts for one-operand elementwise cases.
    private static func unaryShapes(large: Bool) -> [[(shape: [Int], layout: SampleLayout)]] {
        var shapes: [[(shape: [Int], layout: SampleLayout)]] = [
            [([], .contiguous)], [([1], .contiguous)], [([0, 3], .contiguous)], [([3, 4], .contiguous)],
            [([3, 4], .transposed)], [([4, 5], .reversed)], [([3, 5], .strided)],
            [([3, 4], .broadcast(from: [1, 4]))],
        ]
        if large { shapes.append([([300, 1001], .contiguous)]) }
        return shapes
    }

    /// Shape pairs and layouts for two-operand elementwise cases.
    private static func binaryShapes(large: Bool) -> [[(shape: [Int], layout: SampleLayout)]] {
        var pairs: [[(shape: [Int], layout: SampleLayout)]] = [
            [([], .contiguous), ([], .contiguous)], [([1], .contiguous), ([1], .contiguous)],
            [([3, 4], .contiguous), ([3, 4], .contiguous)],
            [([3, 4], .transposed), ([3, 4], .broadcast(from: [1, 4]))],
            [([4, 5], .reversed), ([4, 5], .strided)], [([0, 3], .contiguous), ([0, 3], .contiguous)],
            [([2, 3], .broadcast(from: [])), ([2, 3], .contiguous)],
        ]
        if large { pairs.append([([300, 1001], .contiguous), ([300, 1001], .broadcast(from: [1001]))]) }
        return pairs
    }

    /// Shapes, layouts, axes and keepRank flags for reductions.
    private static func reductionShapes(_ type: ScalarType) -> [([Int], SampleLayout, [Int], Bool)] {
        var samples: [([Int], SampleLayout, [Int], Bool)] = [
            ([3, 4, 5], .contiguous, [0], false), ([3, 4, 5], .contiguous, [2], true),
            ([3, 4, 5], .contiguous, [0, 2], false),
            ([3, 4, 5], .transposed, [1], false), ([3, 4, 5], .contiguous, [0, 1, 2], false),
            ([4, 6], .strided, [1], false),
            ([1], .contiguous, [0], false), ([0, 4], .contiguous, [0], false), ([5, 3], .reversed, [0], true),
        ]
        if type != .float16 {
            samples += [
                ([256, 1100], .contiguous, [1], false), ([256, 1100], .contiguous, [0], false),
                ([64, 5000], .contiguous, [1], false),
            ]
        }
        return samples
    }
}

extension ParityCase {
    /// Cases that exercise composite ops and fused elementwise regions.
    static var compositeCases: [ParityCase] {
        func make(
            _ label: String, bound kind: OpKind, _ inputs: [SampleInput], k: Int = 1,
            _ build: @escaping @Sendable ([Tensor]) -> Tensor
        ) -> ParityCase {
            ParityCase(op: Op(kind), isComposite: true, label: label, inputs: inputs, reductionLength: k, build: build)
        }
        let large = [
            SampleInput(shape: [512, 1031]), SampleInput(shape: [512, 1031], layout: .transposed),
            SampleInput(shape: [512, 1031], layout: .broadcast(from: [1031])),
        ]
        return [
            make("fused chain relu(a*b + c) * 0.5 + tanh(a)", bound: .tanh, large) { x in
                (x[0] * x[1] + x[2]).relu() * 0.5 + x[0].tanh()
            },
            make(
                "fused chain small", bound: .tanh,
                [SampleInput(shape: [3, 4]), SampleInput(shape: [3, 4], layout: .reversed), SampleInput(shape: [4])]
            ) { x in
                (x[0] * x[1] + x[2]).relu() * 0.5 + x[0].tanh()
            },
            make("gelu exact", bound: .erf, [SampleInput(shape: [64, 257])]) { $0[0].gelu() },
            make(
                "gelu tanh after a product", bound: .tanh,
                [SampleInput(shape: [64, 257], layout: .transposed), SampleInput(shape: [257])]
            ) {
                ($0[0] * $0[1]).gelu(approximation: .tanh) + 1
            },
            make("silu of a sum", bound: .sigmoid, [SampleInput(shape: [33, 65]), SampleInput(shape: [65])]) {
                ($0[0] + $0[1]).silu()
            },
            make("clamped and compared", bound: .minimum, [SampleInput(shape: [40, 50])]) { x in
                x[0].clamped(to: -0.5...0.75).replacing(with: 9, where: x[0] .> 1)
            },
            make(
                "int chain", bound: .divide,
                [SampleInput(shape: [40, 50], type: .int32), SampleInput(shape: [50], type: .int32)]
            ) { x in
                (x[0] * x[1] - 3).abs().cast(to: Float.self) / 7
            },
            make("variance after a product", bound: .mean, [SampleInput(shape: [30, 70])], k: 70) {
                ($0[0] * 2).variance(alongAxes: 1)
            },
            make(
                "layer norm with scale and bias", bound: .layerNorm,
                [SampleInput(shape: [64, 384]), SampleInput(shape: [384]), SampleInput(shape: [384])],
                k: 384
            ) { x in x[0].layerNorm(alongAxis: -1, epsilon: 1e-12, scale: x[1], bias: x[2]) },
            make(
                "attention", bound: .matmul,
                [SampleInput(shape: [4, 32, 16]), SampleInput(shape: [4, 32, 16]), SampleInput(shape: [4, 32, 16])],
                k: 32
            ) { x in
                (x[0].matmul(x[1].transposed(permutation: 0, 2, 1)) / 4).softmax(alongAxis: -1).matmul(x[2])
            },
        ]
    }
}

extension SampleInput {
    /// A tensor with this input's shape, type, values and layout.
    func make(seed: Int) -> Tensor {
        let storageShape: [Int] =
            switch layout {
            case .contiguous, .reversed: shape
            case .transposed: shape.reversed()
            case .broadcast(let from): from
            case .strided: shape.isEmpty ? [] : shape.dropLast() + [shape[shape.count - 1] * 2]
            }
        let base = Self.data(storageShape, type, values, seed: seed)
        switch layout {
        case .contiguous: return base
        case .transposed: return base.transposed()
        case .broadcast: return base.broadcast(to: shape)
        case .reversed: return base.reversed(alongAxes: Array(0..<shape.count))
        case .strided:
            guard let last = shape.last else { return base }
            var dimensions = storageShape.map { SliceDimension(start: 0, count: $0, step: 1) }
            dimensions[dimensions.count - 1] = SliceDimension(start: last > 0 ? 1 : 0, count: last, step: 2)
            return Tensor.record(.slice(dimensions), [base], at: nil)
        }
    }

    static func data(_ shape: [Int], _ type: ScalarType, _ values: SampleValues, seed: Int) -> Tensor {
        let count = shape.reduce(1, *)
        let random = CounterRandom(seed: UInt64(seed) &* 0x2545_F491_4F6C_DD1D)
        let raw: [Double] = (0..<count).map { n in
            let unit = random.unit(UInt64(n))
            switch values {
            case .ordinary(let domain):
                switch (domain, type) {
                case (.all, .float32), (.all, .float16), (.all, .float64): return random.normal(UInt64(n)) * 1.5
                case (_, .int32): return (unit * 41).rounded(.down) - 20
                // Beyond 32 bits, so that a 64-bit path narrowed anywhere shows.
                case (_, .int64): return ((unit * 41).rounded(.down) - 20) * 4_294_967_296 + 3
                case (_, .bool): return unit < 0.5 ? 0 : 1
                case (.positive, _): return 0.5 + 2 * unit
                case (.unitInterval, _): return -0.95 + 1.9 * unit
                case (.atLeastOne, _): return 1 + 2 * unit
                }
            case .indices(let bound): return (unit * Double(bound)).rounded(.down)
            case .special(let shift):
                switch type {
                case .float32, .float16, .float64:
                    return SampleValues.specialValues[(n + shift) % SampleValues.specialValues.count]
                case .int32: return [0, 1, -1, 2_147_483_647, -2_147_483_648, 7, -7][(n + shift) % 7]
                case .int64: return [0, 1, -1, 4_294_967_296, -4_294_967_297, 9_007_199_254_740_992, -7][(n + shift) % 7]
                case .bool: return (n + shift) % 2 == 0 ? 0 : 1
                }
            }
        }
        switch type {
        case .float32: return Tensor(shape: shape, scalars: raw.map { Float($0) })
        case .float16: return Tensor(shape: shape, scalars: raw.map { Float16(Float($0)) })
        case .int32: return Tensor(shape: shape, scalars: raw.map { Int32($0) })
        case .bool: return Tensor(shape: shape, scalars: raw.map { $0 != 0 })
        case .int64: return Tensor(shape: shape, scalars: raw.map { Int64(converting: $0) })
        case .float64: return Tensor(shape: shape, scalars: raw)
        }
    }
}
