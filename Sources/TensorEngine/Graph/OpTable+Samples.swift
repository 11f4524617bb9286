// The hand-written parity samples of the ops whose cases cannot be derived from their category:
// products, selections, views and data movement. Read by the table's rows.

enum Samples {
    private static func sample(_ label: String, _ inputs: [SampleInput], _ op: Op, k: Int = 1) -> ParitySample {
        ParitySample(label: label, inputs: inputs, apply: .op(op), reductionLength: k)
    }

    private static func frontEnd(
        _ label: String, _ inputs: [SampleInput],
        _ build: @escaping @Sendable ([Tensor]) -> Tensor
    ) -> ParitySample {
        ParitySample(label: label, inputs: inputs, apply: .frontEnd(build))
    }

    static let topK: [ParitySample] = [
        (SampleInput(shape: [3, 10]), 3), (SampleInput(shape: [7, 4], layout: .transposed), 4),
        (SampleInput(shape: [5, 12], type: .int32), 5), (SampleInput(shape: [2, 6]), 0),
        (SampleInput(shape: [9]), 9), (SampleInput(shape: [64, 3000]), 10),
        (SampleInput(shape: [4, 9], type: .float16), 4), (SampleInput(shape: [3, 7], values: .special(shift: 1)), 7),
    ].flatMap { input, k in
        TopKOutput.allCases.map { part in sample("k \(k) \(part)", [input], .topK(k: k, output: part)) }
    }

    static let matmul: [ParitySample] = {
        let pairs: [([Int], SampleLayout, [Int], SampleLayout)] = [
            ([2, 3], .contiguous, [3, 4], .contiguous), ([5, 7], .transposed, [7, 6], .contiguous),
            ([5, 7], .contiguous, [7, 6], .transposed), ([4, 8], .transposed, [8, 3], .transposed),
            ([2, 3, 4], .contiguous, [2, 4, 5], .contiguous),
            ([3, 4, 6], .contiguous, [3, 6, 5], .broadcast(from: [6, 5])),
            ([1, 64], .contiguous, [64, 50], .contiguous), ([40, 64], .contiguous, [64, 1], .contiguous),
            ([1, 1], .contiguous, [1, 1], .contiguous), ([3, 0], .contiguous, [0, 4], .contiguous),
            ([0, 5], .contiguous, [5, 3], .contiguous), ([4, 6], .strided, [6, 5], .reversed),
            ([128, 256], .contiguous, [256, 96], .contiguous), ([2, 64, 96], .contiguous, [2, 96, 80], .transposed),
        ]
        return [ScalarType.float32, .float16].flatMap { type in
            pairs.filter { type == .float32 || $0.0.reduce(1, *) < 1000 }.map { a, la, b, lb in
                sample(
                    "\(type)",
                    [SampleInput(shape: a, type: type, layout: la), SampleInput(shape: b, type: type, layout: lb)],
                    .matmul, k: a.last ?? 1)
            }
        }
    }()

    static let reshape: [ParitySample] = [
        frontEnd("contiguous", [SampleInput(shape: [3, 4])]) { $0[0].reshaped(to: [2, 6]) },
        frontEnd("transposed, copied first", [SampleInput(shape: [3, 4], layout: .transposed)]) {
            $0[0].reshaped(to: [12])
        },
        frontEnd("squeeze of a broadcast", [SampleInput(shape: [1, 4, 1], layout: .broadcast(from: [4, 1]))]) {
            $0[0].reshaped(to: [4])
        },
        frontEnd("int32 strided", [SampleInput(shape: [2, 3], type: .int32, layout: .strided)]) {
            $0[0].reshaped(to: [3, 2])
        },
    ]

    static let permute: [ParitySample] = [
        sample("rank 3", [SampleInput(shape: [2, 3, 4])], .permute([2, 0, 1])),
        sample("reversed", [SampleInput(shape: [2, 3, 4], type: .int32, layout: .reversed)], .permute([1, 2, 0])),
    ]

    static let broadcast: [ParitySample] = [
        sample("row", [SampleInput(shape: [1, 4])], .broadcast([3, 4])),
        sample("scalar", [SampleInput(shape: [], type: .bool)], .broadcast([2, 3])),
    ]

    static let slice: [ParitySample] = [
        sample(
            "stepped", [SampleInput(shape: [6, 7])],
            .slice([SliceDimension(start: 1, count: 3, step: 2), SliceDimension(start: 6, count: 4, step: -2)])),
        sample(
            "empty", [SampleInput(shape: [4, 3], type: .int32)],
            .slice([SliceDimension(start: 0, count: 0, step: 1), SliceDimension(start: 0, count: 3, step: 1)])),
    ]

    static let contiguous: [ParitySample] =
        ScalarType.allCases.flatMap { type in
            [SampleLayout.transposed, .reversed, .strided, .broadcast(from: [1, 5])].map { layout in
                sample("\(type)", [SampleInput(shape: [4, 5], type: type, layout: layout)], .contiguous)
            }
        } + [sample("large transposed", [SampleInput(shape: [700, 900], layout: .transposed)], .contiguous)]

    static let pad: [ParitySample] = {
        let padding = [Padding(before: 1, after: 2), Padding(before: 0, after: 3)]
        return ScalarType.allCases.map { type in
            sample("\(type)", [SampleInput(shape: [3, 4], type: type, layout: .transposed)], .pad(padding, value: 1.5))
        } + [sample("empty", [SampleInput(shape: [0, 2])], .pad(padding, value: -1))]
    }()

    static let concat: [ParitySample] = [
        sample(
            "axis 0", [SampleInput(shape: [2, 3]), SampleInput(shape: [4, 3], layout: .transposed)],
            .alongAxis(.concat, 0)),
        sample(
            "axis 1 with empty part",
            [SampleInput(shape: [2, 3]), SampleInput(shape: [2, 0]), SampleInput(shape: [2, 2], layout: .reversed)],
            .alongAxis(.concat, 1)),
        sample(
            "int32 axis 1",
            [
                SampleInput(shape: [3, 2, 2], type: .int32),
                SampleInput(shape: [3, 1, 2], type: .int32, layout: .strided),
            ],
            .alongAxis(.concat, 1)),
        sample("bool single", [SampleInput(shape: [5], type: .bool)], .alongAxis(.concat, 0)),
        sample(
            "float16 axis 0",
            [SampleInput(shape: [1, 3], type: .float16), SampleInput(shape: [2, 3], type: .float16)],
            .alongAxis(.concat, 0)),
        sample("large", [SampleInput(shape: [300, 500]), SampleInput(shape: [300, 700])], .alongAxis(.concat, 1)),
        sample(
            "large float16, split by bytes across runs, with an empty part",
            [
                SampleInput(shape: [2, 37, 33, 17], type: .float16), SampleInput(shape: [2, 0, 33, 17], type: .float16),
                SampleInput(shape: [2, 11, 33, 17], type: .float16, layout: .reversed),
            ],
            .alongAxis(.concat, 1)),
    ]

    /// Appends: the first operand is never a growable buffer here, so each result is a prefix of
    /// a new one (the in-place path has its own tests).
    static let append: [ParitySample] = [
        sample(
            "axis 2 of a cache", [SampleInput(shape: [1, 4, 3, 8]), SampleInput(shape: [1, 4, 1, 8], layout: .transposed)],
            .alongAxis(.append, 2)),
        sample(
            "axis 0", [SampleInput(shape: [2, 3]), SampleInput(shape: [4, 3], layout: .reversed)],
            .alongAxis(.append, 0)),
        sample(
            "empty first", [SampleInput(shape: [2, 0, 3]), SampleInput(shape: [2, 5, 3])], .alongAxis(.append, 1)),
        sample(
            "strided first, empty part",
            [SampleInput(shape: [3, 2]), SampleInput(shape: [3, 0]), SampleInput(shape: [3, 3], layout: .strided)],
            .alongAxis(.append, 1)),
        sample(
            "int32",
            [SampleInput(shape: [2, 2, 2], type: .int32), SampleInput(shape: [2, 1, 2], type: .int32)],
            .alongAxis(.append, 1)),
        sample("float16 single", [SampleInput(shape: [3, 4], type: .float16)], .alongAxis(.append, 1)),
        sample("large", [SampleInput(shape: [8, 300, 64]), SampleInput(shape: [8, 40, 64])], .alongAxis(.append, 1)),
    ]

    static let scatter: [ParitySample] = [
        sample(
            "rows",
            [
                SampleInput(shape: [5, 4]), SampleInput(shape: [3, 4], type: .int32, values: .indices(below: 5)),
                SampleInput(shape: [3, 4]),
            ],
            .alongAxis(.scatter, 0)),
        sample(
            "columns, transposed data",
            [
                SampleInput(shape: [3, 6], layout: .transposed),
                SampleInput(shape: [3, 2], type: .int32, values: .indices(below: 6)), SampleInput(shape: [3, 2]),
            ],
            .alongAxis(.scatter, 1)),
        sample(
            "int32 middle axis",
            [
                SampleInput(shape: [4, 3, 2], type: .int32),
                SampleInput(shape: [4, 5, 2], type: .int32, values: .indices(below: 3)),
                SampleInput(shape: [4, 5, 2], type: .int32),
            ],
            .alongAxis(.scatter, 1)),
        sample(
            "bool",
            [
                SampleInput(shape: [4, 2], type: .bool), SampleInput(shape: [2, 2], type: .int32, values: .indices(below: 4)),
                SampleInput(shape: [2, 2], type: .bool),
            ],
            .alongAxis(.scatter, 0)),
        sample(
            "no indices",
            [SampleInput(shape: [4, 3]), SampleInput(shape: [0, 3], type: .int32), SampleInput(shape: [0, 3])],
            .alongAxis(.scatter, 0)),
        sample(
            "size 1",
            [
                SampleInput(shape: [1, 1]), SampleInput(shape: [1, 1], type: .int32, values: .indices(below: 1)),
                SampleInput(shape: [1, 1]),
            ],
            .alongAxis(.scatter, 1)),
        sample(
            "float16 updates broadcast",
            [
                SampleInput(shape: [3, 5], type: .float16),
                SampleInput(shape: [3, 2], type: .int32, values: .indices(below: 5)),
                SampleInput(shape: [3, 2], type: .float16, layout: .broadcast(from: [2])),
            ],
            .alongAxis(.scatter, 1)),
        sample(
            "large",
            [
                SampleInput(shape: [300, 500]), SampleInput(shape: [300, 64], type: .int32, values: .indices(below: 500)),
                SampleInput(shape: [300, 64]),
            ],
            .alongAxis(.scatter, 1)),
    ]

    static let gather: [ParitySample] = [
        sample(
            "rows", [SampleInput(shape: [5, 4]), SampleInput(shape: [3], type: .int32, values: .indices(below: 5))],
            .alongAxis(.gather, 0)),
        sample(
            "columns by a matrix",
            [
                SampleInput(shape: [3, 6], layout: .transposed),
                SampleInput(shape: [2, 2], type: .int32, values: .indices(below: 6)),
            ],
            .alongAxis(.gather, 1)),
        sample(
            "int32 values",
            [
                SampleInput(shape: [4, 3, 2], type: .int32),
                SampleInput(shape: [5], type: .int32, values: .indices(below: 3)),
            ],
            .alongAxis(.gather, 1)),
        sample(
            "bool values",
            [
                SampleInput(shape: [4, 2], type: .bool),
                SampleInput(shape: [3], type: .int32, values: .indices(below: 4)),
            ],
            .alongAxis(.gather, 0)),
        sample(
            "no indices", [SampleInput(shape: [4, 3]), SampleInput(shape: [0], type: .int32)], .alongAxis(.gather, 0)),
        sample(
            "embedding lookup",
            [
                SampleInput(shape: [1000, 384]),
                SampleInput(shape: [2, 128], type: .int32, values: .indices(below: 1000)),
            ],
            .alongAxis(.gather, 0)),
    ]
}
