import Foundation
import Testing
@testable import TensorEngine

/// Extreme attribute and input values reach importer arithmetic that must not trap: each model
/// here is valid on the wire and gives a typed ``ModelError`` (or a result), never a crash.
@Suite("ONNX extreme arguments") struct ONNXErrorTests {
    private func outcome(_ node: TestNode, opset: Int64 = 18, initializers: [(name: String, dims: [Int64], integers: [Int64])] = []) async -> String {
        let bytes = ONNXBytes.model(opset: opset, nodes: [node], initializers: initializers, inputs: [("x", [2, 3])], outputs: ["y"])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("extreme-\(UUID().uuidString).onnx")
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            try Data(bytes).write(to: url)
            let model = try ONNXModel(contentsOf: url)
            let x = Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float])
            _ = try await model.prediction(from: ["x": x], policy: .only(.naive))
            return "ran"
        } catch let error as ModelError {
            return "ModelError.\(error.kind)"
        } catch let error as TensorError {
            return "TensorError.\(error.kind)"
        } catch {
            return "\(type(of: error))"
        }
    }

    private static let huge = Int64(1) << 40

    @Test func hugeShapesAreErrors() async {
        let reshape = TestNode(op: "Reshape", inputs: ["x", "shape"], outputs: ["y"])
        #expect(await outcome(reshape, initializers: [(name: "shape", dims: [2], integers: [Self.huge, Self.huge])]) == "ModelError.invalidNode")
        #expect(await outcome(reshape, initializers: [(name: "shape", dims: [3], integers: [-1, Self.huge, Self.huge])]) == "ModelError.invalidNode")
        let expand = TestNode(op: "Expand", inputs: ["x", "shape"], outputs: ["y"])
        #expect(await outcome(expand, initializers: [(name: "shape", dims: [4], integers: [Self.huge, Self.huge, 2, 3])]) == "ModelError.invalidNode")
        let tile = TestNode(op: "Tile", inputs: ["x", "repeats"], outputs: ["y"])
        #expect(await outcome(tile, initializers: [(name: "repeats", dims: [2], integers: [Int64.max, 2])]) != "ran")
    }

    @Test func hugeCountsInAttributesAreErrors() async {
        let split = TestNode(op: "Split", inputs: ["x"], outputs: ["y", "z"], attributes: [("axis", .int(1)), ("num_outputs", .int(Int64.max))])
        #expect(await outcome(split) == "ModelError.invalidNode")
        let sizes = TestNode(op: "Split", inputs: ["x", "sizes"], outputs: ["y", "z"], attributes: [("axis", .int(1))])
        #expect(await outcome(sizes, initializers: [(name: "sizes", dims: [2], integers: [Int64.max, Int64.max])]) == "ModelError.invalidNode")
        let lrn = TestNode(op: "LRN", inputs: ["x"], outputs: ["y"], attributes: [("size", .int(Int64(Int32.max)))])
        #expect(await outcome(lrn) == "ModelError.invalidNode")
    }

    @Test func hugePadsAndScalesAreErrors() async {
        let pad = TestNode(op: "Pad", inputs: ["x", "pads"], outputs: ["y"])
        #expect(await outcome(pad, initializers: [(name: "pads", dims: [4], integers: [0, Int64.min, 0, 0])]) == "ModelError.invalidNode")
        #expect(await outcome(pad, initializers: [(name: "pads", dims: [4], integers: [0, Self.huge, 0, Self.huge])]) == "ModelError.invalidNode")
        let wrap = TestNode(op: "Pad", inputs: ["x", "pads"], outputs: ["y"], attributes: [("mode", .string("wrap"))])
        #expect(await outcome(wrap, initializers: [(name: "pads", dims: [4], integers: [0, Self.huge, 0, 0])]) == "ModelError.invalidNode")
        let resize = TestNode(op: "Resize", inputs: ["x", "", "", "sizes"], outputs: ["y"])
        #expect(await outcome(resize, initializers: [(name: "sizes", dims: [2], integers: [Self.huge, Self.huge])]) == "ModelError.invalidNode")
    }

    @Test func rangesThatOverflowDoNotTrap() async {
        // start, limit and delta as int64 scalars whose products overflow Int64 along the way.
        let range = TestNode(op: "Range", inputs: ["start", "limit", "delta"], outputs: ["y"])
        let bounds = [
            (name: "start", dims: [Int64](), integers: [Int64.min]), (name: "limit", dims: [Int64](), integers: [Int64.max]),
            (name: "delta", dims: [Int64](), integers: [Int64(1) << 62]),
        ]
        let result = await outcome(range, initializers: bounds)
        #expect(result == "ran" || result.hasPrefix("ModelError"))
    }
}
