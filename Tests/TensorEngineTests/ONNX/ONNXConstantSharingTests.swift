import Foundation
import Testing

@testable import TensorEngine

/// Equal one-element real constants of a model are one engine node, as onnxruntime shares equal
/// scalar initializers: a chain of `x * 0.5` steps reads one constant, not one per step.
@Suite("ONNX constant sharing") struct ONNXConstantSharingTests {
    /// Three `Constant`s, two of them 0.5: the graph has two constant sources beside the input, and
    /// the result is x · 0.5 · 0.5 + 2 (exact in binary).
    @Test func equalScalarConstantsAreOneNode() async throws {
        let nodes = [
            TestNode(op: "Constant", inputs: [], outputs: ["half"], attributes: [("value_float", .float(0.5))]),
            TestNode(op: "Constant", inputs: [], outputs: ["alsoHalf"], attributes: [("value_float", .float(0.5))]),
            TestNode(op: "Constant", inputs: [], outputs: ["two"], attributes: [("value_float", .float(2))]),
            TestNode(op: "Mul", inputs: ["x", "half"], outputs: ["a"]),
            TestNode(op: "Mul", inputs: ["a", "alsoHalf"], outputs: ["b"]),
            TestNode(op: "Add", inputs: ["b", "two"], outputs: ["y"]),
        ]
        let url = try ONNXFixture.temporaryModel(
            "share", opset: 17, nodes: nodes, shapes: [("x", [2, 3])], outputs: ["y"])
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        let x = Tensor(shape: [2, 3], scalars: [-4, -2, 0, 1, 6, 10] as [Float])
        let y = try #require(try model.outputs(for: ["x": x])["y"])
        let graph = PendingGraph(targets: [try #require(y.node)])
        #expect(graph.sourceCount == 3)
        #expect(try await y.shapedArray(of: Float.self).scalars == [1, 1.5, 2, 2.25, 3.5, 4.5])
    }
}
