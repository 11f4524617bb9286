import Foundation
import Testing

@testable import TensorEngine

/// Operators whose meaning changed between opsets, each at both versions, against hand-computed
/// values: attributes that became inputs (Squeeze, ReduceSum at 13; the other reductions at 18;
/// Slice at 10; Pad and Clip at 11) and Softmax's axis (the 2-D coercion before 13).
@Suite("ONNX opsets") struct ONNXOpsetTests {
    /// Loads a model from bytes and predicts `y` for `x` = [[1, 2, 3], [4, 5, 6]].
    private func run(_ bytes: [UInt8], policy: ComputePolicy = .only(.naive)) async throws -> ShapedArray<Float> {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("opset-\(UUID().uuidString).onnx")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        let x = Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float])
        let outputs = try await model.prediction(from: ["x": x], policy: policy)
        return try await #require(outputs["y"]).shapedArray(of: Float.self)
    }

    private func model(
        _ opset: Int64, _ node: TestNode, initializers: [(name: String, dims: [Int64], integers: [Int64])] = []
    ) -> [UInt8] {
        ONNXBytes.model(
            opset: opset, nodes: [node], initializers: initializers, inputs: [("x", [2, 3])], outputs: ["y"])
    }

    @Test func softmaxCoercesTo2DBeforeOpset13() async throws {
        let node = TestNode(op: "Softmax", inputs: ["x"], outputs: ["y"], attributes: [("axis", .int(0))])
        // Opset 11, axis 0: one softmax over all six elements.
        let flat = try await run(model(11, node))
        let total = (1...6).map { Foundation.exp(Double($0)) }.reduce(0, +)
        for (index, value) in flat.scalars.enumerated() {
            #expect(Swift.abs(Double(value) - Foundation.exp(Double(index + 1)) / total) < 1e-6)
        }
        // Opset 13, axis 0: one softmax per column, each pair (a, a + 3) giving 1/(1 + e³) and e³/(1 + e³).
        let columns = try await run(model(13, node))
        let low = 1 / (1 + Foundation.exp(3.0))
        for column in 0..<3 {
            #expect(Swift.abs(Double(columns[scalarAt: 0, column]) - low) < 1e-6)
            #expect(Swift.abs(Double(columns[scalarAt: 1, column]) - (1 - low)) < 1e-6)
        }
    }

    @Test func reductionAxesMovedFromAttributeToInput() async throws {
        let attribute = TestNode(
            op: "ReduceSum", inputs: ["x"], outputs: ["y"], attributes: [("axes", .ints([1])), ("keepdims", .int(0))])
        #expect(try await run(model(11, attribute)).scalars == [6, 15])
        let input = TestNode(
            op: "ReduceSum", inputs: ["x", "axes"], outputs: ["y"], attributes: [("keepdims", .int(0))])
        let axes = [(name: "axes", dims: [Int64(1)], integers: [Int64(0)])]
        #expect(try await run(model(13, input, initializers: axes)).scalars == [5, 7, 9])
        // ReduceMean keeps its attribute until 18.
        let mean17 = TestNode(
            op: "ReduceMean", inputs: ["x"], outputs: ["y"], attributes: [("axes", .ints([0])), ("keepdims", .int(0))])
        #expect(try await run(model(17, mean17)).scalars == [2.5, 3.5, 4.5])
        let mean18 = TestNode(
            op: "ReduceMean", inputs: ["x", "axes"], outputs: ["y"], attributes: [("keepdims", .int(0))])
        #expect(
            try await run(model(18, mean18, initializers: [(name: "axes", dims: [1], integers: [1])])).scalars == [
                2, 5,
            ])
    }

    @Test func squeezeAndUnsqueezeAxes() async throws {
        let unsqueeze11 = TestNode(
            op: "Unsqueeze", inputs: ["x"], outputs: ["y"], attributes: [("axes", .ints([0, 3]))])
        #expect(try await run(model(11, unsqueeze11)).shape == [1, 2, 3, 1])
        let unsqueeze13 = TestNode(op: "Unsqueeze", inputs: ["x", "axes"], outputs: ["y"])
        #expect(
            try await run(model(13, unsqueeze13, initializers: [(name: "axes", dims: [1], integers: [-1])])).shape == [
                2, 3, 1,
            ])
    }

    @Test func sliceFromAttributesToInputsWithSteps() async throws {
        let old = TestNode(
            op: "Slice", inputs: ["x"], outputs: ["y"],
            attributes: [("starts", .ints([1])), ("ends", .ints([Int64.max])), ("axes", .ints([1]))])
        #expect(try await run(model(9, old)).scalars == [2, 3, 5, 6])
        let new = TestNode(op: "Slice", inputs: ["x", "starts", "ends", "axes", "steps"], outputs: ["y"])
        let bounds = [
            (name: "starts", dims: [Int64(1)], integers: [Int64(-1)]), (name: "ends", dims: [1], integers: [Int64.min]),
            (name: "axes", dims: [1], integers: [1]), (name: "steps", dims: [1], integers: [-2]),
        ]
        #expect(try await run(model(13, new, initializers: bounds)).scalars == [3, 1, 6, 4])
    }

    @Test func clipAndPadFromAttributesToInputs() async throws {
        let clip6 = TestNode(
            op: "Clip", inputs: ["x"], outputs: ["y"], attributes: [("min", .float(2)), ("max", .float(4.5))])
        #expect(try await run(model(6, clip6)).scalars == [2, 2, 3, 4, 4.5, 4.5])
        let pad2 = TestNode(
            op: "Pad", inputs: ["x"], outputs: ["y"],
            attributes: [("pads", .ints([0, 1, 0, 0])), ("value", .float(-1))])
        #expect(try await run(model(2, pad2)).scalars == [-1, 1, 2, 3, -1, 4, 5, 6])
        let pad11 = TestNode(op: "Pad", inputs: ["x", "pads"], outputs: ["y"], attributes: [("mode", .string("edge"))])
        let pads = [(name: "pads", dims: [Int64(4)], integers: [Int64(1), 0, 0, 1])]
        #expect(try await run(model(11, pad11, initializers: pads)).scalars == [1, 2, 3, 3, 1, 2, 3, 3, 4, 5, 6, 6])
    }

    @Test func everyBackendAgreesOnTheOldForms() async throws {
        let node = TestNode(op: "Softmax", inputs: ["x"], outputs: ["y"], attributes: [("axis", .int(1))])
        let reference = try await run(model(9, node))
        for policy in ONNXFixture.policies {
            let values = try await run(model(9, node), policy: policy)
            for (a, b) in zip(values.scalars, reference.scalars) { #expect(Swift.abs(a - b) < 1e-6, "\(policy)") }
        }
    }
}

/// Model-local functions and weights kept in the file.
@Suite("ONNX functions and weights") struct ONNXFunctionTests {
    @Test func localFunctionsAreInlinedWithTheirAttributes() async throws {
        // y = Scale(x) with the model's function Scale(X) = Mul(X, Constant(value_float = factor)),
        // called with factor = 3.
        var model = ProtobufWriter()
        model.int(1, 8)
        model.message(8) { set in
            set.string(1, "")
            set.int(2, 17)
        }
        model.message(8) { set in
            set.string(1, "local")
            set.int(2, 1)
        }
        model.message(7) { graph in
            graph.message(1) { node in
                node.string(1, "x")
                node.string(2, "y")
                node.string(3, "call")
                node.string(4, "Scale")
                node.string(7, "local")
                node.message(5) { attribute in
                    attribute.string(1, "factor")
                    attribute.float(2, 3)
                    attribute.int(20, 1)
                }
            }
            graph.message(11) { ONNXBytes.valueInfo("x", dims: [2, 3], into: &$0) }
            graph.message(12) { ONNXBytes.valueInfo("y", dims: [2, 3], into: &$0) }
        }
        model.message(25) { function in
            function.string(1, "Scale")
            function.string(10, "local")
            function.string(4, "X")
            function.string(5, "Y")
            function.string(6, "factor")
            function.message(7) { node in
                node.string(2, "k")
                node.string(4, "Constant")
                node.message(5) { attribute in
                    attribute.string(1, "value_float")
                    attribute.int(20, 1)
                    attribute.string(21, "factor")
                }
            }
            function.message(7) { node in
                node.string(1, "X")
                node.string(1, "k")
                node.string(2, "Y")
                node.string(4, "Mul")
            }
            function.message(9) { set in
                set.string(1, "")
                set.int(2, 17)
            }
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("function-\(UUID().uuidString).onnx")
        try Data(model.bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let loaded = try ONNXModel(contentsOf: url)
        #expect(loaded.nodeCount == 2)  // the call replaced by the function's two nodes
        let x = Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float])
        let y = try await #require(loaded.prediction(from: ["x": x])["y"]).shapedArray(of: Float.self)
        #expect(y.scalars == [3, 6, 9, 12, 15, 18])
    }

    @Test func alignedWeightsAreWrappedInTheMappedFile() throws {
        let url = try ONNXFixture.minilmL3()
        let model = try ONNXModel(contentsOf: url)
        let data = try Data(contentsOf: url, options: .alwaysMapped)
        let proto = try data.withUnsafeBytes { try ONNXModelProto.decode($0) }
        var wrapped = 0
        for initializer in proto.graph.initializers {
            guard let range = initializer.rawData, case .tensor(let tensor, _)? = model.graph.initializers[initializer.name] else { continue }
            // Data aligned to the element size are used in place; others are copied once.
            #expect(tensor.isBorrowingMemory == (range.lowerBound % 4 == 0), "\(initializer.name)")
            if tensor.isBorrowingMemory { wrapped += 1 }
        }
        #expect(wrapped > 0)
    }
}
