import Foundation
import TensorEngineChecks
import Testing

@testable import TensorEngine

/// Activations after a projection run as the product's epilogue: GELU written out as PyTorch
/// exports it is recorded as one `gelu` op, and it or a `Relu` after a `MatMul → Add` becomes
/// one `linear` op that applies it as each piece of the product is finished.
@Suite("Activations fused into products") struct ONNXActivationEpilogueTests {
    /// Written-out GELU (`Div → Erf → Add → Mul → Mul`) and a `Relu`, each after a projection, on
    /// a batch of rows, and a `Relu` after a `Gemm`: the outputs match the same ops recorded
    /// unfused on the reference, and the plan shows every node of the activations folded into
    /// their products. A projection that is also a graph output keeps its activation apart.
    @Test func activationsFuseIntoTheirProducts() async throws {
        let nodes = [
            TestNode(op: "Constant", inputs: [], outputs: ["root2"], attributes: [("value_float", .float(1.4142135))]),
            TestNode(op: "Constant", inputs: [], outputs: ["one"], attributes: [("value_float", .float(1))]),
            TestNode(op: "Constant", inputs: [], outputs: ["half"], attributes: [("value_float", .float(0.5))]),
            TestNode(op: "MatMul", inputs: ["x", "w"], outputs: ["p"]),
            TestNode(op: "Add", inputs: ["b", "p"], outputs: ["h"]),
            TestNode(op: "Div", inputs: ["h", "root2"], outputs: ["d"]),
            TestNode(op: "Erf", inputs: ["d"], outputs: ["e"]),
            TestNode(op: "Add", inputs: ["e", "one"], outputs: ["s"]),
            TestNode(op: "Mul", inputs: ["h", "s"], outputs: ["m"]),
            TestNode(op: "Mul", inputs: ["m", "half"], outputs: ["gelu"]),
            TestNode(op: "MatMul", inputs: ["x", "w2"], outputs: ["q"]),
            TestNode(op: "Add", inputs: ["q", "b2"], outputs: ["r"]),
            TestNode(op: "Relu", inputs: ["r"], outputs: ["relu"]),
            TestNode(op: "MatMul", inputs: ["x", "w2"], outputs: ["q2"]),
            TestNode(op: "Add", inputs: ["q2", "b2"], outputs: ["kept"]),
            TestNode(op: "Relu", inputs: ["kept"], outputs: ["apart"]),
            TestNode(op: "Gemm", inputs: ["rows", "w2", "b2"], outputs: ["g"]),
            TestNode(op: "Relu", inputs: ["g"], outputs: ["head"]),
        ]
        let shapes: [(String, [Int])] = [
            ("x", [2, 7, 24]), ("w", [24, 40]), ("b", [40]), ("w2", [24, 9]), ("b2", [9]), ("rows", [5, 24]),
        ]
        let url = try ONNXFixture.temporaryModel(
            "activation", opset: 13, nodes: nodes, shapes: shapes, outputs: ["gelu", "relu", "kept", "apart", "head"])
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        let inputs = ONNXFixture.patternedInputs(shapes)
        func input(_ name: String) throws -> Tensor { try #require(inputs[name]) }
        let h = try input("x").matmul(try input("w")) + input("b")
        let kept = try input("x").matmul(try input("w2")) + input("b2")
        let unfused = [
            "gelu": h * ((h / Float(1.4142135)).erf() + 1) * 0.5, "relu": kept.relu(), "kept": kept,
            "apart": kept.relu(), "head": (try input("rows").matmul(try input("w2")) + input("b2")).relu(),
        ]
        var expected: [String: ShapedArray<Float>] = [:]
        for (name, tensor) in unfused {
            expected[name] = try await withComputePolicy(.only(.naive)) { try await tensor.shapedArray(of: Float.self) }
        }
        try await ONNXFixture.expectOutputs(of: model, from: inputs, toMatch: expected, tolerance: 1e-5)
        // The constants are folded on the host; every other node without an operation of its own
        // is part of a product's: the third `Add` is the kept projection's bias, its `Relu` apart;
        // the last `Relu` is the `Gemm`'s.
        let fused = try await ONNXFixture.fusedOperators(ofModelAt: url).filter { $0 != "Constant" }
        #expect(fused == ["Add", "Div", "Erf", "Add", "Mul", "Mul", "Add", "Relu", "Add", "Relu"], "\(fused)")
    }

    /// A residual sum after a projection (the shortcut on either side), and after a `Gemm`, is
    /// added by the product as it finishes each piece: the outputs match the unfused ops on the
    /// reference, and the plan shows the sums folded into their products; a residual after a
    /// projection that is a graph output stays apart.
    @Test func residualsFuseIntoTheirProjections() async throws {
        let nodes = [
            TestNode(op: "MatMul", inputs: ["x", "w"], outputs: ["p"]),
            TestNode(op: "Add", inputs: ["p", "b"], outputs: ["h"]),
            TestNode(op: "Add", inputs: ["h", "x"], outputs: ["y"]),
            TestNode(op: "MatMul", inputs: ["y", "w"], outputs: ["q"]),
            TestNode(op: "Add", inputs: ["b", "q"], outputs: ["r"]),
            TestNode(op: "Add", inputs: ["y", "r"], outputs: ["z"]),
            TestNode(op: "Gemm", inputs: ["rows", "w", "b"], outputs: ["g"]),
            TestNode(op: "Add", inputs: ["g", "shortcut"], outputs: ["u"]),
            TestNode(op: "MatMul", inputs: ["x", "w"], outputs: ["p2"]),
            TestNode(op: "Add", inputs: ["p2", "b"], outputs: ["kept"]),
            TestNode(op: "Add", inputs: ["kept", "x"], outputs: ["apart"]),
        ]
        let shapes: [(String, [Int])] = [
            ("x", [2, 7, 8]), ("w", [8, 8]), ("b", [8]), ("rows", [5, 8]), ("shortcut", [5, 8]),
        ]
        let url = try ONNXFixture.temporaryModel(
            "residual", opset: 13, nodes: nodes, shapes: shapes, outputs: ["z", "u", "kept", "apart"])
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        let inputs = ONNXFixture.patternedInputs(shapes)
        func input(_ name: String) throws -> Tensor { try #require(inputs[name]) }
        let (x, w, b) = (try input("x"), try input("w"), try input("b"))
        let y = x.matmul(w) + b + x
        let unfused = [
            "z": y + (y.matmul(w) + b), "u": try input("rows").matmul(w) + b + input("shortcut"),
            "kept": x.matmul(w) + b, "apart": x.matmul(w) + b + x,
        ]
        var expected: [String: ShapedArray<Float>] = [:]
        for (name, tensor) in unfused {
            expected[name] = try await withComputePolicy(.only(.naive)) { try await tensor.shapedArray(of: Float.self) }
        }
        try await ONNXFixture.expectOutputs(of: model, from: inputs, toMatch: expected, tolerance: 1e-5)
        let fused = try await ONNXFixture.fusedOperators(ofModelAt: url)
        #expect(fused == ["Add", "Add", "Add", "Add", "Add", "Add"], "\(fused)")
    }

    /// The written-out forms recognised as one `gelu` (the factors in other orders, `· (1/√2)`
    /// for `/ √2`), their values those of the closed form, and near misses left as written.
    @Test func writtenOutGELUIsOneOp() async throws {
        let x = Tensor([-3.0, -1.0, 0.0, 0.5, 1.0, 2.5] as [Float])
        let forms = [
            x * ((x / Float(2.0.squareRoot())).erf() + 1) * 0.5,
            x * 0.5 * (1 + (x * Float(0.5.squareRoot())).erf()),
            0.5 * (x * (1 + (Float(0.5.squareRoot()) * x).erf())),
        ]
        let closedForm = [-3.0, -1.0, 0.0, 0.5, 1.0, 2.5].map { 0.5 * $0 * (1 + Foundation.erf($0 / 2.0.squareRoot())) }
        for form in forms {
            #expect(form.node?.op.kind == .gelu)
            let values = try await form.shapedArray(of: Float.self).scalars
            for (value, expected) in zip(values, closedForm) { #expect(abs(Double(value) - expected) <= 1e-6) }
        }
        // Another divisor, another shift, another input on the outside: not GELU.
        #expect((x * ((x / Float(2)).erf() + 1) * 0.5).node?.op.kind == .multiply)
        #expect((x * ((x / Float(2.0.squareRoot())).erf() + 2) * 0.5).node?.op.kind == .multiply)
        let y = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0] as [Float])
        #expect((y * ((x / Float(2.0.squareRoot())).erf() + 1) * 0.5).node?.op.kind == .multiply)
    }

    /// The rules the importer and the BERT encoder rely on: only a `linear` result without an
    /// activation, or one reshaped back to more axes, takes one; only one without an activation or
    /// a residual takes a residual of its shape.
    @Test func onlyALinearResultTakesAnActivation() throws {
        let x = Tensor(shape: [2, 3, 4], scalars: (0..<24).map(Float.init))
        let w = Tensor(shape: [4, 5], scalars: (0..<20).map(Float.init))
        let projected = try #require(x.matmul(w).addingBias(Tensor([1.0, 2.0, 3.0, 4.0, 5.0] as [Float])))
        let fused = try #require(projected.fusingActivation(.gelu(.none)))
        #expect(fused.shape == [2, 3, 5])
        #expect(fused.node?.inputs.first?.op == .linear(activation: .gelu(.none)))
        #expect(fused.fusingActivation(.relu) == nil)
        #expect(x.matmul(w).fusingActivation(.relu) == nil)
        #expect((x + 1).fusingActivation(.relu) == nil)
        // A residual of the result's shape joins a linear result without one and without an
        // activation (which would come after the sum).
        let shortcut = Tensor(shape: [2, 3, 5], scalars: (0..<30).map(Float.init))
        let summed = try #require(projected.fusingResidual(shortcut))
        #expect(summed.shape == [2, 3, 5] && summed.node?.inputs.first?.inputs.count == 4)
        #expect(summed.fusingResidual(shortcut) == nil)
        #expect(fused.fusingResidual(shortcut) == nil)
        #expect(projected.fusingResidual(Tensor(zeros: [2, 3, 4])) == nil)
        #expect(summed.fusingActivation(.relu)?.node?.inputs.first?.inputs.count == 4)
    }
}
