import Foundation
import Testing

@testable import TensorEngine

/// MIL operations the fixture models do not reach, each lowered on hand-made parameters and
/// compared with values worked out by hand from MIL's definitions.
@Suite("MIL operations") struct MILOperatorTests {
    /// Lowers one operation of `type` on `arguments`, its outputs declared with `outputs`
    /// (element type and shape), and reads each result.
    static func run(
        _ type: String, _ arguments: [String: MILValue], outputs: [(MILDataType, [Int])] = [(.float32, [])],
        unknownShapes: Bool = true
    ) async throws -> [[Float]] {
        var operation = MILOperationSpec()
        operation.type = type
        operation.outputs = outputs.enumerated().map { index, output in
            let dimensions = output.1.map { MILDimension.fixed($0) }
            let tensor = MILTensorType(
                dataType: output.0, rank: unknownShapes ? -1 : Int64(dimensions.count), dimensions: dimensions)
            return MILNamedValueType(name: "out\(index)", type: .tensor(tensor))
        }
        let context = MILOperationContext(
            operation: operation, arguments: arguments.mapValues { [$0] }, run: MILRunState())
        let lowered = try #require(MILOperators.lookup(type), "\(type) is not implemented")
        var results: [[Float]] = []
        for value in try lowered.lower(context) {
            // Results of constants only are folded on the host.
            let tensor: Tensor
            switch value {
            case .imported(.tensor(let computed, _)): tensor = computed
            case .imported(.constant(let folded)): tensor = try folded.tensor()
            default:
                Issue.record("\(type) gave a value that is not a tensor")
                continue
            }
            results.append(try await tensor.cast(to: Float.self).shapedArray(of: Float.self).scalars)
        }
        return results
    }

    static func tensor(_ values: [Float], _ shape: [Int]) -> MILValue {
        .imported(.tensor(Tensor(shape: shape, scalars: values), .float))
    }

    static func ints(_ values: [Int32], _ shape: [Int]? = nil) -> MILValue {
        .imported(.tensor(Tensor(shape: shape ?? [values.count], scalars: values), .int32))
    }

    static func integers(_ values: [Int64]) -> MILValue { .imported(.constant(.integers(values, type: .int32))) }

    static func scalar(_ value: Double) -> MILValue {
        .imported(.constant(ONNXConstant(dataType: .float, shape: [], values: .reals([value]))))
    }

    static func flag(_ value: Bool) -> MILValue {
        .imported(.constant(ONNXConstant(dataType: .bool, shape: [], values: .booleans([value]))))
    }

    static func flags(_ values: [Bool]) -> MILValue {
        .imported(.constant(ONNXConstant(dataType: .bool, shape: [values.count], values: .booleans(values))))
    }

    @Test func slicesWithMasksNegativeStridesAndSqueezes() async throws {
        // x = 0..<12 as [3, 4]; rows reversed from the end, every other column, row axis kept.
        let x = Self.tensor((0..<12).map(Float.init), [3, 4])
        let reversed = try await Self.run(
            "slice_by_index",
            [
                "x": x, "begin": Self.integers([-1, 0]), "end": Self.integers([0, 4]),
                "stride": Self.integers([-1, 2]),
                "begin_mask": Self.flags([false, false]), "end_mask": Self.flags([true, false]),
            ])
        #expect(reversed == [[8, 10, 4, 6, 0, 2]])
        let squeezed = try await Self.run(
            "slice_by_index",
            [
                "x": x, "begin": Self.integers([1, 1]), "end": Self.integers([2, 3]),
                "squeeze_mask": Self.flags([true, false]),
            ])
        #expect(squeezed == [[5, 6]])
        let sized = try await Self.run(
            "slice_by_size", ["x": x, "begin": Self.integers([1, 2]), "size": Self.integers([-1, 2])])
        #expect(sized == [[6, 7, 10, 11]])
    }

    @Test func sliceUpdateWritesAtAPositionComputedByTheGraph() async throws {
        // A [1, 4, 2] cache written at position 2 (given as a tensor, as a model's input is).
        let cache = Self.tensor([Float](repeating: 0, count: 8), [1, 4, 2])
        let result = try await Self.run(
            "slice_update",
            [
                "x": cache, "update": Self.tensor([7, 8], [1, 1, 2]), "begin": Self.ints([0, 2, 0]),
                "end": Self.integers([1, 3, 2]),
            ])
        #expect(result == [[0, 0, 0, 0, 7, 8, 0, 0]])
    }

    @Test func floorDivisionAndModuloFollowTheFloor() async throws {
        let x = Self.ints([7, -7, 7, -7])
        let y = Self.ints([2, 2, -2, -2])
        #expect(try await Self.run("floor_div", ["x": x, "y": y], outputs: [(.int32, [])]) == [[3, -4, -4, 3]])
        #expect(try await Self.run("mod", ["x": x, "y": y], outputs: [(.int32, [])]) == [[1, 1, -1, -1]])
        let real = try await Self.run("mod", ["x": Self.tensor([5.5, -5.5], [2]), "y": Self.tensor([2, 2], [2])])
        #expect(real == [[1.5, 0.5]])
    }

    @Test func padsReflectAndReplicateTheLastAxes() async throws {
        let x = Self.tensor([1, 2, 3], [1, 3])
        let reflect = try await Self.run(
            "pad", ["x": x, "pad": Self.integers([2, 1]), "mode": .strings(["reflect"])])
        #expect(reflect == [[3, 2, 1, 2, 3, 2]])
        let replicate = try await Self.run(
            "pad", ["x": x, "pad": Self.integers([1, 2]), "mode": .strings(["replicate"])])
        #expect(replicate == [[1, 1, 2, 3, 3, 3]])
        let constant = try await Self.run(
            "pad",
            ["x": x, "pad": Self.integers([0, 1]), "mode": .strings(["constant"]), "constant_val": Self.scalar(9)])
        #expect(constant == [[1, 2, 3, 9]])
    }

    @Test func topKAscendingAlongTheFirstAxisAndCumulativeSums() async throws {
        // Columns [3, 1, 2] and [0, 5, 4]: the two smallest of each, with their rows.
        let x = Self.tensor([3, 0, 1, 5, 2, 4], [3, 2])
        let results = try await Self.run(
            "topk", ["x": x, "k": Self.integers([2]), "axis": Self.integers([0]), "ascending": Self.flag(true)],
            outputs: [(.float32, []), (.int32, [])])
        #expect(results == [[1, 0, 2, 4], [1, 0, 2, 2]])
        let exclusiveReversed = try await Self.run(
            "cumsum",
            [
                "x": Self.tensor([1, 2, 3, 4], [4]), "axis": Self.integers([0]), "exclusive": Self.flag(true),
                "reverse": Self.flag(true),
            ])
        #expect(exclusiveReversed == [[9, 7, 4, 0]])
    }

    @Test func gathersWrapNegativeIndices() async throws {
        let x = Self.tensor([10, 11, 20, 21, 30, 31], [3, 2])
        let rows = try await Self.run("gather", ["x": x, "indices": Self.ints([-1, 0]), "axis": Self.integers([0])])
        #expect(rows == [[30, 31, 10, 11]])
        let elements = try await Self.run(
            "gather_along_axis", ["x": x, "indices": Self.ints([1, 0, -2, 1], [2, 2]), "axis": Self.integers([0])])
        #expect(elements == [[20, 11, 20, 21]])
    }

    @Test func splitsConcatenationsAndReshapes() async throws {
        let x = Self.tensor((0..<5).map(Float.init), [5])
        let parts = try await Self.run(
            "split", ["x": x, "num_splits": Self.integers([2]), "axis": Self.integers([0])],
            outputs: [(.float32, []), (.float32, [])])
        #expect(parts == [[0, 1, 2], [3, 4]])
        let interleaved = try await Self.run(
            "concat",
            [
                "values": .list([Self.tensor([1, 2], [2]), Self.tensor([3, 4], [2])]), "axis": Self.integers([0]),
                "interleave": Self.flag(true),
            ])
        #expect(interleaved == [[1, 3, 2, 4]])
        let copied = try await Self.run(
            "reshape", ["x": Self.tensor((0..<6).map(Float.init), [2, 3]), "shape": Self.integers([0, -1, 1])],
            outputs: [(.float32, [2, 3, 1])], unknownShapes: false)
        #expect(copied == [(0..<6).map(Float.init)])
    }

    @Test func normalizationOverLeadingAxesAndAttentionWithABooleanMask() async throws {
        // layer_norm over axis 0 of [[1, 10], [3, 30]]: each column becomes [-1, 1].
        let normalized = try await Self.run(
            "layer_norm",
            ["x": Self.tensor([1, 10, 3, 30], [2, 2]), "axes": Self.integers([0]), "epsilon": Self.scalar(0)])
        let expected: [Float] = [-1, -1, 1, 1]
        #expect(zip(try #require(normalized.first), expected).allSatisfy { abs($0 - $1) < 1e-5 }, "\(normalized)")
        // One query over two keys, the second masked out: the first value comes through.
        let attended = try await Self.run(
            "scaled_dot_product_attention",
            [
                "query": Self.tensor([1, 0], [1, 2]), "key": Self.tensor([1, 0, 0, 1], [2, 2]),
                "value": Self.tensor([5, 6, 7, 8], [2, 2]),
                "attn_mask": .imported(.tensor(Tensor(shape: [1, 2], scalars: [true, false]), .bool)),
            ])
        #expect(attended == [[5, 6]])
    }

    @Test func decompressionsOfTheIOS18Forms() async throws {
        // A 2-bit table per row: row 0 reads [0, 1, 2, 3], row 1 reads [10, 20, 30, 40].
        let indices = try MILPackedIntegers(type: .uint2, shape: [2, 2], bytes: [0b0001_1011])
        let lut = ONNXConstant(dataType: .float, shape: [2, 1, 4, 1], values: .reals([0, 1, 2, 3, 10, 20, 30, 40]))
        let dense = try await Self.run(
            "constexpr_lut_to_dense", ["indices": .packed(indices), "lut": .imported(.constant(lut))])
        #expect(dense == [[3, 2, 20, 10]])
        // Mask bits 0b0101 over four elements: the values go to positions 0 and 2.
        let mask = try MILPackedIntegers(type: .uint1, shape: [4], bytes: [0b0101])
        let sparse = try await Self.run(
            "constexpr_sparse_to_dense", ["nonzero_data": Self.tensor([4, 9], [2]), "mask": .packed(mask)])
        #expect(sparse == [[4, 0, 9, 0]])
        // int4 data, offset and scale per block of two along the last axis.
        let data = try MILPackedIntegers(type: .int4, shape: [1, 4], bytes: [0xF1, 0x32])
        let scale = ONNXConstant(dataType: .float, shape: [1, 2], values: .reals([2, 0.5]))
        let shifted = try await Self.run(
            "constexpr_blockwise_shift_scale",
            ["data": .packed(data), "scale": .imported(.constant(scale)), "offset": Self.tensor([1, 2], [1, 2])])
        // data = [1, -1, 2, 3]: (1 - 1)·2, (-1 - 1)·2, (2 - 2)·0.5, (3 - 2)·0.5.
        #expect(shifted == [[0, -4, 0, 0.5]])
    }

    @Test func extremeArgumentsAreTypedErrors() async throws {
        let x = Self.tensor([1, 2, 3, 4], [4])
        let cases: [(String, [String: MILValue])] = [
            ("range_1d", ["start": Self.scalar(0), "end": Self.scalar(1e300), "step": Self.scalar(1)]),
            (
                "slice_by_index",
                [
                    "x": x, "begin": Self.integers([0]), "end": Self.integers([4]),
                    "stride": Self.integers([Int64.min]),
                ]
            ),
            (
                "slice_update",
                [
                    "x": x, "update": Self.tensor([9, 9], [2]), "begin": Self.ints([0]),
                    "end": Self.integers([4]), "stride": Self.integers([Int64.max]),
                ]
            ),
            (
                "gather",
                [
                    "x": .imported(.tensor(Tensor(shape: [], scalars: [Float(1)]), .float)),
                    "indices": Self.ints([0]), "axis": Self.integers([0]),
                ]
            ),
            ("fill", ["shape": Self.integers([Int64.max, 2]), "value": Self.scalar(1)]),
            (
                "constexpr_affine_dequantize",
                [
                    "quantized_data": .packed(try MILPackedIntegers(type: .int8, shape: [], bytes: [3])),
                    "zero_point": .packed(try MILPackedIntegers(type: .int8, shape: [], bytes: [1])),
                    "scale": Self.scalar(2), "axis": Self.integers([Int64.min]),
                ]
            ),
        ]
        for (type, arguments) in cases {
            do {
                let results = try await Self.run(type, arguments)
                // A scalar quantized value has no axis to read: (3 - 1) · 2.
                #expect(type == "constexpr_affine_dequantize" && results == [[4]], "\(type) gave \(results)")
            } catch is ModelError {
            } catch is TensorError {
            }
        }
    }

    @Test func wrongShapesAreErrorsNamingTheOperation() async throws {
        await #expect(throws: ModelError.self) {
            _ = try await Self.run(
                "reshape", ["x": Self.tensor([1, 2, 3, 4], [4]), "shape": Self.integers([2, 2])],
                outputs: [(.float32, [4, 1])], unknownShapes: false)
        }
        await #expect(throws: ModelError.self) {
            _ = try await Self.run("gelu", ["x": Self.tensor([1], [1]), "mode": .strings(["CUBIC"])])
        }
    }
}

/// Control flow on hand-built programs: a counted loop, a loop that never ends, and a branch on
/// the data.
@Suite("MIL control flow") struct MILControlFlowTests {
    static func tensorType(_ type: MILDataType, _ shape: [Int]) -> MILValueType {
        .tensor(MILTensorType(dataType: type, rank: Int64(shape.count), dimensions: shape.map { .fixed($0) }))
    }

    static func value(_ type: MILDataType, _ values: MILTensorValue, _ shape: [Int]) -> MILBinding {
        .value(MILValueSpec(type: tensorType(type, shape), storage: .immediate(.tensor(values))))
    }

    static func operation(
        _ type: String, _ inputs: [String: [MILBinding]], _ outputs: [(String, MILValueType)], blocks: [MILBlockSpec] = []
    ) -> MILOperationSpec {
        var operation = MILOperationSpec()
        operation.type = type
        operation.inputs = inputs
        operation.outputs = outputs.map { MILNamedValueType(name: $0.0, type: $0.1) }
        operation.blocks = blocks
        return operation
    }

    /// `main(x: fp32[1])`: `(i, acc) = (start, x)`, while `compare(i, bound)`: `(i + 1, acc · 2)`.
    static func loop(start: Int32, compare: String, bound: Int32) throws -> MILProgram {
        let counter = tensorType(.int32, [1])
        let real = tensorType(.float32, [1])
        let variables = [MILNamedValueType(name: "i", type: counter), MILNamedValueType(name: "acc", type: real)]
        let condition = MILBlockSpec(
            inputs: variables, outputs: ["c"],
            operations: [
                operation(
                    compare, ["x": [.name("i")], "y": [value(.int32, .ints([bound]), [1])]],
                    [("c", tensorType(.bool, [1]))])
            ])
        let body = MILBlockSpec(
            inputs: variables, outputs: ["i2", "acc2"],
            operations: [
                operation("add", ["x": [.name("i")], "y": [value(.int32, .ints([1]), [1])]], [("i2", counter)]),
                operation("mul", ["x": [.name("acc")], "y": [value(.float32, .floats([2]), [1])]], [("acc2", real)]),
            ])
        let loop = operation(
            "while_loop", ["loop_vars": [value(.int32, .ints([start]), [1]), .name("x")]],
            [("n", counter), ("y", real)], blocks: [condition, body])
        var function = MILFunctionSpec()
        function.inputs = [MILNamedValueType(name: "x", type: real)]
        function.opset = "CoreML7"
        function.blockSpecializations = ["CoreML7": MILBlockSpec(inputs: [], outputs: ["y"], operations: [loop])]
        var program = MILProgramSpec()
        program.functions = ["main": function]
        return try MILProgram(program: program, functionName: "main", package: nil)
    }

    static func run(_ program: MILProgram, _ x: Float) async throws -> (Float, MILRunState) {
        let state = MILRunState()
        let outputs = try program.run(["x": .tensor(Tensor(shape: [1], scalars: [x]), .float)], state: state)
        guard case .tensor(let y, _) = try #require(outputs["y"]) else { throw ONNXFixture.Missing(description: "y") }
        return (try await y.shapedArray(of: Float.self).scalars[0], state)
    }

    @Test func countedLoopUnrollsOnConstantsOnly() async throws {
        let (y, state) = try await Self.run(try Self.loop(start: 0, compare: "less", bound: 3), 1.5)
        #expect(y == 12)  // 1.5 · 2³
        #expect(!state.readInputData, "a counter from constants leaves the graph reusable")
        let (none, _) = try await Self.run(try Self.loop(start: 5, compare: "less", bound: 3), 1.5)
        #expect(none == 1.5)
    }

    @Test func loopsThatNeverEndAreTypedErrors() async throws {
        let program = try Self.loop(start: 0, compare: "greater_equal", bound: 0)
        await #expect(throws: ModelError.self) { _ = try await Self.run(program, 1) }
    }
}
