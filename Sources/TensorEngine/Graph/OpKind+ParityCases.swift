extension OpKind {
    /// The sample cases of the op: size-1, empty, broadcast, non-contiguous and large shapes, for
    /// every scalar type the op accepts. The parity suite runs each on every backend.
    var parityCases: [ParityCase] {
        func make(_ label: String, _ inputs: [SampleInput], k: Int = 1, _ build: @escaping @Sendable ([Tensor]) -> Tensor) -> ParityCase {
            ParityCase(kind: self, label: label, inputs: inputs, reductionLength: k, build: build)
        }
        switch self {
        case .constant:
            return []
        case .unary(let op):
            let values: SampleValues = [.log, .squareRoot, .rsqrt].contains(op) ? .positive : .mixed
            return ScalarType.allCases.filter(op.acceptedTypes.contains).flatMap { type in
                Self.elementwiseShapes(type, large: type == .float32).map { shapes in
                    make("\(type)", shapes.map { SampleInput(shape: $0.shape, type: type, layout: $0.layout, values: values) }) {
                        Tensor.record(.unary(op), $0, at: nil)
                    }
                } + [make("\(type) special values", [SampleInput(shape: [3, 11], type: type, values: .special(shift: 0))]) {
                    Tensor.record(.unary(op), $0, at: nil)
                }]
            }
        case .binary(let op):
            let values: SampleValues = op == .pow ? .positive : .mixed
            return ScalarType.allCases.filter(op.acceptedTypes.contains).flatMap { type in
                Self.binaryShapes(large: type == .float32).map { pair in
                    make("\(type)", pair.map { SampleInput(shape: $0.shape, type: type, layout: $0.layout, values: values) }) {
                        Tensor.record(.binary(op), $0, at: nil)
                    }
                } + [make("\(type) special values", [SampleInput(shape: [11, 11], type: type, values: .special(shift: 0)), SampleInput(shape: [11, 11], type: type, layout: .transposed, values: .special(shift: 3))]) {
                    Tensor.record(.binary(op), $0, at: nil)
                }]
            }
        case .select:
            return [ScalarType.float32, .int32, .float16].flatMap { type in
                Self.binaryShapes(large: type == .float32).map { pair in
                    make("\(type)", [SampleInput(shape: pair[0].shape, type: .bool, layout: pair[1].layout)]
                        + pair.map { SampleInput(shape: $0.shape, type: type, layout: $0.layout) }) {
                        Tensor.record(.select, $0, at: nil)
                    }
                }
            }
        case .cast:
            return ScalarType.allCases.flatMap { from in
                ScalarType.allCases.flatMap { to in
                    [SampleInput(shape: [3, 4], type: from), SampleInput(shape: [4, 5], type: from, layout: .transposed)]
                        .map { input in make("\(from) to \(to)", [input]) { Tensor.record(.cast(to), $0, at: nil) } }
                }
            } + [make("large float32 to float16", [SampleInput(shape: [300, 1001])]) { Tensor.record(.cast(.float16), $0, at: nil) }]
        case .reduce(let op):
            let types: [ScalarType] = op == .mean ? [.float32, .float16] : [.float32, .float16, .int32]
            return types.flatMap { type in
                Self.reductionShapes(type).map { (shape, layout, axes, keep) in
                    let k = axes.reduce(1) { $0 * shape[$1] }
                    return make("\(type) axes \(axes)\(keep ? " keepRank" : "")", [SampleInput(shape: shape, type: type, layout: layout)], k: k) {
                        Tensor.record(.reduce(op, axes: axes, keepRank: keep), $0, at: nil)
                    }
                } + (op == .product ? [] : [1, 0]).map { axis in
                    // (Products of 1e30 and 1e-40 overflow or not depending on the order of
                    // multiplication, which backends may choose; products get no special cases.)
                    make("\(type) special values axis \(axis)", [SampleInput(shape: [7, 5], type: type, values: .special(shift: axis))], k: 7) {
                        Tensor.record(.reduce(op, axes: [axis], keepRank: false), $0, at: nil)
                    }
                }
            }
        case .argReduce(let op):
            return [ScalarType.float32, .int32, .float16].flatMap { type in
                Self.reductionShapes(type).filter { $0.2.count == 1 && $0.0[$0.2[0]] > 0 }.map { (shape, layout, axes, keep) in
                    make("\(type) axis \(axes[0])", [SampleInput(shape: shape, type: type, layout: layout)]) {
                        Tensor.record(.argReduce(op, axis: axes[0], keepRank: keep), $0, at: nil)
                    }
                } + [make("\(type) special values", [SampleInput(shape: [7, 5], type: type, values: .special(shift: 2))]) {
                    Tensor.record(.argReduce(op, axis: 1, keepRank: false), $0, at: nil)
                }]
            }
        case .cumulativeSum:
            return [ScalarType.float32, .int32].flatMap { type in
                Self.reductionShapes(type).filter { $0.2.count == 1 }.map { (shape, layout, axes, _) in
                    make("\(type) axis \(axes[0])", [SampleInput(shape: shape, type: type, layout: layout)], k: shape[axes[0]]) {
                        Tensor.record(.cumulativeSum(axis: axes[0]), $0, at: nil)
                    }
                }
            }
        case .topK:
            let samples: [(SampleInput, Int)] = [
                (SampleInput(shape: [3, 10]), 3), (SampleInput(shape: [7, 4], layout: .transposed), 4),
                (SampleInput(shape: [5, 12], type: .int32), 5), (SampleInput(shape: [2, 6]), 0),
                (SampleInput(shape: [9]), 9), (SampleInput(shape: [64, 3000]), 10),
            ]
            return samples.flatMap { input, k in
                TopKOutput.allCases.map { part in
                    make("k \(k) \(part)", [input]) { Tensor.record(.topK(k: k, output: part), $0, at: nil) }
                }
            }
        case .matmul:
            let pairs: [([Int], SampleLayout, [Int], SampleLayout)] = [
                ([2, 3], .contiguous, [3, 4], .contiguous), ([5, 7], .transposed, [7, 6], .contiguous),
                ([5, 7], .contiguous, [7, 6], .transposed), ([4, 8], .transposed, [8, 3], .transposed),
                ([2, 3, 4], .contiguous, [2, 4, 5], .contiguous), ([3, 4, 6], .contiguous, [3, 6, 5], .broadcast(from: [6, 5])),
                ([1, 64], .contiguous, [64, 50], .contiguous), ([40, 64], .contiguous, [64, 1], .contiguous),
                ([1, 1], .contiguous, [1, 1], .contiguous), ([3, 0], .contiguous, [0, 4], .contiguous),
                ([0, 5], .contiguous, [5, 3], .contiguous), ([4, 6], .strided, [6, 5], .reversed),
                ([128, 256], .contiguous, [256, 96], .contiguous), ([2, 64, 96], .contiguous, [2, 96, 80], .transposed),
            ]
            return [ScalarType.float32, .float16].flatMap { type in
                pairs.filter { type == .float32 || $0.0.reduce(1, *) < 1000 }.map { a, la, b, lb in
                    make("\(type)", [SampleInput(shape: a, type: type, layout: la), SampleInput(shape: b, type: type, layout: lb)], k: a.last ?? 1) {
                        Tensor.record(.matmul, $0, at: nil)
                    }
                }
            }
        case .softmax, .logSoftmax, .layerNorm:
            let samples: [([Int], SampleLayout, Int)] = [
                ([3, 5], .contiguous, 1), ([3, 5], .contiguous, 0), ([2, 3, 4], .transposed, 1), ([4, 6], .strided, 1),
                ([1, 1], .contiguous, 1), ([0, 4], .contiguous, 1), ([5], .reversed, 0), ([300, 1000], .contiguous, 1),
                ([128, 384], .contiguous, 1),
            ]
            let kind = self
            let special = make("float32 special values", [SampleInput(shape: [11, 4], values: .special(shift: 0))], k: 4) { inputs in
                let op: Op = switch kind {
                case .softmax: .softmax(axis: 1)
                case .logSoftmax: .logSoftmax(axis: 1)
                default: .layerNorm(axis: 1, epsilon: 1e-5)
                }
                return Tensor.record(op, inputs, at: nil)
            }
            return [special] + [ScalarType.float32, .float16].flatMap { type in
                samples.filter { type == .float32 || $0.0.reduce(1, *) < 1000 }.map { shape, layout, axis in
                    make("\(type) axis \(axis)", [SampleInput(shape: shape, type: type, layout: layout)], k: shape[axis]) { inputs in
                        let op: Op = switch kind {
                        case .softmax: .softmax(axis: axis)
                        case .logSoftmax: .logSoftmax(axis: axis)
                        default: .layerNorm(axis: axis, epsilon: 1e-5)
                        }
                        return Tensor.record(op, inputs, at: nil)
                    }
                }
            }
        case .reshape:
            return [
                make("contiguous", [SampleInput(shape: [3, 4])]) { $0[0].reshaped(to: [2, 6]) },
                make("transposed, copied first", [SampleInput(shape: [3, 4], layout: .transposed)]) { $0[0].reshaped(to: [12]) },
                make("squeeze of a broadcast", [SampleInput(shape: [1, 4, 1], layout: .broadcast(from: [4, 1]))]) { $0[0].reshaped(to: [4]) },
                make("int32 strided", [SampleInput(shape: [2, 3], type: .int32, layout: .strided)]) { $0[0].reshaped(to: [3, 2]) },
            ]
        case .permute:
            return [
                make("rank 3", [SampleInput(shape: [2, 3, 4])]) { $0[0].transposed(permutation: [2, 0, 1]) },
                make("reversed", [SampleInput(shape: [2, 3, 4], type: .int32, layout: .reversed)]) { $0[0].transposed(permutation: [1, 2, 0]) },
            ]
        case .broadcast:
            return [
                make("row", [SampleInput(shape: [1, 4])]) { $0[0].broadcast(to: [3, 4]) },
                make("scalar", [SampleInput(shape: [], type: .bool)]) { $0[0].broadcast(to: [2, 3]) },
            ]
        case .slice:
            return [
                make("stepped", [SampleInput(shape: [6, 7])]) {
                    Tensor.record(.slice([SliceDimension(start: 1, count: 3, step: 2), SliceDimension(start: 6, count: 4, step: -2)]), $0, at: nil)
                },
                make("empty", [SampleInput(shape: [4, 3], type: .int32)]) {
                    Tensor.record(.slice([SliceDimension(start: 0, count: 0, step: 1), SliceDimension(start: 0, count: 3, step: 1)]), $0, at: nil)
                },
            ]
        case .contiguous:
            let layouts: [SampleLayout] = [.transposed, .reversed, .strided, .broadcast(from: [1, 5])]
            return [ScalarType.float32, .float16, .int32, .bool].flatMap { type in
                layouts.map { layout in
                    make("\(type)", [SampleInput(shape: [4, 5], type: type, layout: layout)]) { Tensor.record(.contiguous, $0, at: nil) }
                }
            } + [make("large transposed", [SampleInput(shape: [700, 900], layout: .transposed)]) { Tensor.record(.contiguous, $0, at: nil) }]
        case .pad:
            let padding = [Padding(before: 1, after: 2), Padding(before: 0, after: 3)]
            return [ScalarType.float32, .int32, .bool, .float16].map { type in
                make("\(type)", [SampleInput(shape: [3, 4], type: type, layout: .transposed)]) { Tensor.record(.pad(padding, value: 1.5), $0, at: nil) }
            } + [make("empty", [SampleInput(shape: [0, 2])]) { Tensor.record(.pad(padding, value: -1), $0, at: nil) }]
        case .concat:
            return [
                make("axis 0", [SampleInput(shape: [2, 3]), SampleInput(shape: [4, 3], layout: .transposed)]) { Tensor.record(.concat(axis: 0), $0, at: nil) },
                make("axis 1 with empty part", [SampleInput(shape: [2, 3]), SampleInput(shape: [2, 0]), SampleInput(shape: [2, 2], layout: .reversed)]) { Tensor.record(.concat(axis: 1), $0, at: nil) },
                make("int32 axis 1", [SampleInput(shape: [3, 2, 2], type: .int32), SampleInput(shape: [3, 1, 2], type: .int32, layout: .strided)]) { Tensor.record(.concat(axis: 1), $0, at: nil) },
                make("bool single", [SampleInput(shape: [5], type: .bool)]) { Tensor.record(.concat(axis: 0), $0, at: nil) },
                make("large", [SampleInput(shape: [300, 500]), SampleInput(shape: [300, 700])]) { Tensor.record(.concat(axis: 1), $0, at: nil) },
            ]
        case .gather:
            return [
                make("rows", [SampleInput(shape: [5, 4]), SampleInput(shape: [3], type: .int32, values: .indices(below: 5))]) { Tensor.record(.gather(axis: 0), $0, at: nil) },
                make("columns by a matrix", [SampleInput(shape: [3, 6], layout: .transposed), SampleInput(shape: [2, 2], type: .int32, values: .indices(below: 6))]) { Tensor.record(.gather(axis: 1), $0, at: nil) },
                make("int32 values", [SampleInput(shape: [4, 3, 2], type: .int32), SampleInput(shape: [5], type: .int32, values: .indices(below: 3))]) { Tensor.record(.gather(axis: 1), $0, at: nil) },
                make("no indices", [SampleInput(shape: [4, 3]), SampleInput(shape: [0], type: .int32)]) { Tensor.record(.gather(axis: 0), $0, at: nil) },
                make("embedding lookup", [SampleInput(shape: [1000, 384]), SampleInput(shape: [2, 128], type: .int32, values: .indices(below: 1000))]) { Tensor.record(.gather(axis: 0), $0, at: nil) },
            ]
        }
    }

    /// Shapes and layouts for one-operand elementwise cases.
    private static func elementwiseShapes(_ type: ScalarType, large: Bool) -> [[(shape: [Int], layout: SampleLayout)]] {
        var shapes: [[(shape: [Int], layout: SampleLayout)]] = [
            [([], .contiguous)], [([1], .contiguous)], [([0, 3], .contiguous)], [([3, 4], .contiguous)],
            [([3, 4], .transposed)], [([4, 5], .reversed)], [([3, 5], .strided)], [([3, 4], .broadcast(from: [1, 4]))],
        ]
        if large { shapes.append([([300, 1001], .contiguous)]) }
        return shapes
    }

    /// Shape pairs and layouts for two-operand elementwise cases.
    private static func binaryShapes(large: Bool) -> [[(shape: [Int], layout: SampleLayout)]] {
        var pairs: [[(shape: [Int], layout: SampleLayout)]] = [
            [([], .contiguous), ([], .contiguous)], [([1], .contiguous), ([1], .contiguous)],
            [([3, 4], .contiguous), ([3, 4], .contiguous)], [([3, 4], .transposed), ([3, 4], .broadcast(from: [1, 4]))],
            [([4, 5], .reversed), ([4, 5], .strided)], [([0, 3], .contiguous), ([0, 3], .contiguous)],
            [([2, 3], .broadcast(from: [])), ([2, 3], .contiguous)],
        ]
        if large { pairs.append([([300, 1001], .contiguous), ([300, 1001], .broadcast(from: [1001]))]) }
        return pairs
    }

    /// Shapes, layouts, axes and keepRank flags for reductions.
    private static func reductionShapes(_ type: ScalarType) -> [([Int], SampleLayout, [Int], Bool)] {
        var samples: [([Int], SampleLayout, [Int], Bool)] = [
            ([3, 4, 5], .contiguous, [0], false), ([3, 4, 5], .contiguous, [2], true), ([3, 4, 5], .contiguous, [0, 2], false),
            ([3, 4, 5], .transposed, [1], false), ([3, 4, 5], .contiguous, [0, 1, 2], false), ([4, 6], .strided, [1], false),
            ([1], .contiguous, [0], false), ([0, 4], .contiguous, [0], false), ([5, 3], .reversed, [0], true),
        ]
        if type != .float16 {
            samples += [([256, 1100], .contiguous, [1], false), ([256, 1100], .contiguous, [0], false), ([64, 5000], .contiguous, [1], false)]
        }
        return samples
    }

    /// Cases that exercise composite ops and fused elementwise regions.
    static var compositeCases: [ParityCase] {
        func make(_ label: String, bound kind: OpKind, _ inputs: [SampleInput], k: Int = 1, _ build: @escaping @Sendable ([Tensor]) -> Tensor) -> ParityCase {
            ParityCase(kind: kind, isComposite: true, label: label, inputs: inputs, reductionLength: k, build: build)
        }
        let large = [SampleInput(shape: [512, 1031]), SampleInput(shape: [512, 1031], layout: .transposed), SampleInput(shape: [512, 1031], layout: .broadcast(from: [1031]))]
        return [
            make("fused chain relu(a*b + c) * 0.5 + tanh(a)", bound: .unary(.tanh), large) { x in (x[0] * x[1] + x[2]).relu() * 0.5 + x[0].tanh() },
            make("fused chain small", bound: .unary(.tanh), [SampleInput(shape: [3, 4]), SampleInput(shape: [3, 4], layout: .reversed), SampleInput(shape: [4])]) { x in (x[0] * x[1] + x[2]).relu() * 0.5 + x[0].tanh() },
            make("gelu exact", bound: .unary(.erf), [SampleInput(shape: [64, 257])]) { $0[0].gelu() },
            make("gelu tanh", bound: .unary(.tanh), [SampleInput(shape: [64, 257], layout: .transposed)]) { $0[0].gelu(approximation: .tanh) },
            make("silu", bound: .unary(.sigmoid), [SampleInput(shape: [33, 65])]) { $0[0].silu() },
            make("clamped and compared", bound: .binary(.minimum), [SampleInput(shape: [40, 50])]) { x in x[0].clamped(to: -0.5...0.75).replacing(with: 9, where: x[0] .> 1) },
            make("int chain", bound: .binary(.divide), [SampleInput(shape: [40, 50], type: .int32), SampleInput(shape: [50], type: .int32)]) { x in (x[0] * x[1] - 3).abs().cast(to: Float.self) / 7 },
            make("variance", bound: .reduce(.mean), [SampleInput(shape: [30, 70])], k: 70) { $0[0].variance(alongAxes: 1) },
            make("layer norm with scale and bias", bound: .layerNorm, [SampleInput(shape: [64, 384]), SampleInput(shape: [384]), SampleInput(shape: [384])], k: 384) { x in x[0].layerNorm(alongAxis: -1, epsilon: 1e-12, scale: x[1], bias: x[2]) },
            make("attention", bound: .matmul, [SampleInput(shape: [4, 32, 16]), SampleInput(shape: [4, 32, 16]), SampleInput(shape: [4, 32, 16])], k: 32) { x in
                (x[0].matmul(x[1].transposed(permutation: 0, 2, 1)) / 4).softmax(alongAxis: -1).matmul(x[2])
            },
        ]
    }

    /// Every parity case: each op's samples, then the composites.
    static var allParityCases: [ParityCase] { allCases.flatMap(\.parityCases) + compositeCases }
}
