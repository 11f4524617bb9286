import Foundation
import TensorEngineChecks
import Testing

@testable import TensorEngine

/// `MatMul → Add` of a bias per column, and `Gemm` with one, run as one `linear` op: the product
/// adds the bias as it finishes each piece of its result.
@Suite("ONNX product fusion") struct ONNXBiasFusionTests {
    /// A batch of rows times a matrix plus a bias (the bias second, then first and shaped
    /// `[1, n]`), a `Gemm` with `transB` and a bias: each matches the same ops recorded unfused
    /// through the tensor API on the reference, and the plan shows the additions fused. A product
    /// that is also a graph output keeps its addition apart.
    @Test func biasesFuseIntoTheirProducts() async throws {
        let nodes = [
            TestNode(op: "MatMul", inputs: ["x", "w"], outputs: ["p"]),
            TestNode(op: "Add", inputs: ["p", "b"], outputs: ["y"]),
            TestNode(op: "MatMul", inputs: ["x", "w2"], outputs: ["q"]),
            TestNode(op: "Add", inputs: ["c", "q"], outputs: ["z"]),
            TestNode(op: "MatMul", inputs: ["x", "w"], outputs: ["kept"]),
            TestNode(op: "Add", inputs: ["kept", "b"], outputs: ["u"]),
            TestNode(op: "Gemm", inputs: ["rows", "wt", "b"], outputs: ["g"], attributes: [("transB", .int(1))]),
        ]
        let shapes: [(String, [Int])] = [
            ("x", [3, 2, 5]), ("w", [5, 4]), ("b", [4]), ("w2", [5, 3]), ("c", [1, 3]), ("rows", [6, 5]),
            ("wt", [4, 5]),
        ]
        let url = try ONNXFixture.temporaryModel(
            "bias", opset: 13, nodes: nodes, shapes: shapes, outputs: ["y", "z", "kept", "u", "g"])
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        let inputs = ONNXFixture.patternedInputs(shapes)
        func input(_ name: String) throws -> Tensor { try #require(inputs[name]) }
        let kept = try input("x").matmul(try input("w"))
        let (b, c) = (try input("b"), try input("c"))
        let unfused = [
            "y": kept + b, "z": c + (try input("x")).matmul(try input("w2")), "kept": kept, "u": kept + b,
            "g": (try input("rows")).matmul((try input("wt")).transposed()) + b,
        ]
        var expected: [String: ShapedArray<Float>] = [:]
        for (name, tensor) in unfused {
            expected[name] = try await withComputePolicy(.only(.naive)) { try await tensor.shapedArray(of: Float.self) }
        }
        try await ONNXFixture.expectOutputs(of: model, from: inputs, toMatch: expected, tolerance: 1e-5)
        #expect(try await ONNXFixture.fusedOperators(ofModelAt: url) == ["Add", "Add"])
    }

    /// The rule the importer relies on: a bias that is not one value per column of a 2-D
    /// product is not fused.
    @Test func onlyABiasPerColumnOfAProductFuses() {
        let x = Tensor(shape: [3, 4], scalars: (0..<12).map(Float.init))
        let w = Tensor(shape: [4, 2], scalars: (0..<8).map(Float.init))
        let product = x.matmul(w)
        #expect(product.addingBias(Tensor([1.0, 2.0] as [Float])) != nil)
        #expect(product.addingBias(Tensor(shape: [1, 2], scalars: [1, 2])) != nil)
        #expect(product.addingBias(Tensor(shape: [3, 1], scalars: [1, 2, 3])) == nil)
        #expect(product.addingBias(Tensor(shape: [3, 2], scalars: (0..<6).map(Float.init))) == nil)
        #expect(product.addingBias(Tensor(shape: [1, 1, 2], scalars: [1, 2])) == nil)
        #expect((x + 1).addingBias(Tensor([1.0, 2.0, 3.0, 4.0] as [Float])) == nil)
        #expect(product.addingBias(Tensor([1.0, 2.0] as [Double])) == nil)
    }
}
