import Testing
@testable import TensorEngine

@Suite(.serialized, .enabled(if: openCLAvailable, "no OpenCL device"))
struct OpenCLElementwiseTests {
    @Test func unaryFloatOpsMatchTheReference() async throws {
        for op in unaryKinds where op.descriptor.operandTypes.accepted.contains(.float32) {
            try await expectParity("\(op) special", op) {
                Tensor(shape: [4, 5], scalars: specialFloats).unaryForTest(op)
            }
            try await expectParity("\(op) transposed random", op) {
                random([33, 17], seed: 1, scale: 3).transposed().unaryForTest(op)
            }
            for (scale, seed) in [(Float(3), 2), (Float(1e-3), 3), (Float(60), 4)] {
                try await expectParity("\(op) contiguous random scale \(scale)", op) {
                    random([1003], seed: seed, scale: scale).unaryForTest(op)
                }
            }
            try await expectParity("\(op) float16", op) {
                Tensor(shape: [4, 5], scalars: specialFloats).cast(to: Float16.self).unaryForTest(op)
            }
        }
    }

    @Test func unaryIntOpsWrapLikeTheReference() async throws {
        for op in unaryKinds where op.descriptor.operandTypes.accepted.contains(.int32) {
            try await expectParity("\(op) int32", op) {
                Tensor(shape: [4, 5], scalars: specialInts).unaryForTest(op)
            }
        }
        try await expectParity("logicalNot", .logicalNot) {
            Tensor(shape: [4, 5], scalars: specialFloats).unaryForTest(.sign).unaryForTest(.abs) .== Tensor(zeros: [4, 5])
        }
    }

    @Test func binaryOpsBroadcastAndMatch() async throws {
        let a = Array(specialFloats.prefix(20))
        let b = Array(specialFloats.reversed())
        for op in binaryKinds where op.descriptor.operandTypes.accepted.contains(.float32) {
            try await expectParity("\(op) special pairs", op) {
                Tensor(shape: [20], scalars: a).binaryForTest(op, Tensor(shape: [20], scalars: b))
            }
            try await expectParity("\(op) broadcast [5,1] x [1,7]", op) {
                random([5, 1], seed: 2).binaryForTest(op, random([1, 7], seed: 3))
            }
            try await expectParity("\(op) contiguous random", op) {
                random([1003], seed: 25, scale: 3).binaryForTest(op, random([1003], seed: 26, scale: 2))
            }
            try await expectParity("\(op) with a uniform scalar", op) {
                random([1003], seed: 27, scale: 3).binaryForTest(op, Tensor(shape: [], scalars: [1.5] as [Float]).broadcast(to: [1003]))
            }
            try await expectParity("\(op) sliced and reversed", op) {
                random([9, 8], seed: 4)[1..<7, 2..<6].reversed(alongAxes: 0).binaryForTest(op, random([4, 6], seed: 5).transposed())
            }
            try await expectParity("\(op) float16", op) {
                Tensor(shape: [20], scalars: a).cast(to: Float16.self).binaryForTest(op, Tensor(shape: [20], scalars: b).cast(to: Float16.self))
            }
        }
        for op in binaryKinds where op.descriptor.operandTypes.accepted.contains(.int32) {
            try await expectParity("\(op) int32", op) {
                Tensor(shape: [20], scalars: specialInts).binaryForTest(op, Tensor(shape: [20], scalars: Array(specialInts.reversed())))
            }
        }
        for op in binaryKinds where op.descriptor.operandTypes.accepted.contains(.bool) {
            try await expectParity("\(op) bool", op) {
                (random([6, 5], seed: 6) .> Float(0)).binaryForTest(op, random([6, 1], seed: 7) .< Float(0.3))
            }
        }
    }

    @Test func selectAndCastMatch() async throws {
        try await expectParity("select broadcast", .select) {
            random([4, 6], seed: 8).replacing(with: random([1, 6], seed: 9), where: random([4, 1], seed: 10) .> Float(0))
        }
        let sources: [(String, () -> Tensor)] = [
            ("float32", { Tensor(shape: [20], scalars: specialFloats) }),
            ("float16", { Tensor(shape: [20], scalars: specialFloats).cast(to: Float16.self) }),
            ("int32", { Tensor(shape: [20], scalars: specialInts) }),
            ("bool", { Tensor(shape: [20], scalars: specialInts) .> Tensor(zeros: [20], scalarType: Int32.self) }),
        ]
        for (name, source) in sources {
            try await expectParity("cast \(name) to float32", .cast) { source().cast(to: Float.self) }
            try await expectParity("cast \(name) to float16", .cast) { source().cast(to: Float16.self) }
            try await expectParity("cast \(name) to int32", .cast) { source().cast(to: Int32.self) }
            try await expectParity("cast \(name) to bool", .cast) { source().cast(to: Bool.self) }
        }
    }

    @Test func fusedChainIsOneKernelAndMatches() async throws {
        let chain = { (a: Tensor, b: Tensor, c: Tensor) in (a * b + c).relu() * Float(0.5) + a.tanh() }
        try await expectParity("fused chain", .tanh) {
            chain(random([64, 33], seed: 11), random([64, 33], seed: 12), random([33], seed: 13))
        }
        try await expectParity("fused chain float16", .tanh) {
            chain(random([16, 9], seed: 14).cast(to: Float16.self), random([16, 9], seed: 15).cast(to: Float16.self),
                  random([16, 9], seed: 16).cast(to: Float16.self))
        }
        try await expectParity("fused int chain with compare and select", .select) {
            let x = Tensor(shape: [20], scalars: specialInts)
            return (x * x - x).replacing(with: x / Tensor(shape: [20], scalars: Array(specialInts.reversed())), where: x .> Tensor(zeros: [20], scalarType: Int32.self))
        }
        let plan = try withComputePolicyPlan(.only(.opencl)) {
            chain(random([64, 33], seed: 11), random([64, 33], seed: 12), random([33], seed: 13))
        }
        #expect(plan.contains { if case .fused = $0 { true } else { false } }, "the chain should be planned as a fused region")
    }

    @Test func broadcastRowsMatch() async throws {
        for n in [16, 13] {
            try await expectParity("bias add [37, \(n)] + [\(n)]", .add) { random([37, n], seed: 140) + random([n], seed: 141) }
            try await expectParity("bias chain [37, \(n)]", .tanh) { ((random([37, n], seed: 142) * random([n], seed: 143)).tanh() - random([n], seed: 144)).relu() }
            try await expectParity("int rows [5, \(n)]", .multiply) {
                Tensor(randomUniform: [5, n], in: -100..<100, seed: 145, scalarType: Int32.self) * Tensor(randomUniform: [n], in: -100..<100, seed: 146, scalarType: Int32.self)
            }
            try await expectParity("float16 rows [5, \(n)]", .subtract) {
                random([5, n], seed: 147).cast(to: Float16.self) - random([n], seed: 148).cast(to: Float16.self)
            }
        }
        try await expectParity("rank 3 row [3, 4, 8] + [4, 8]", .maximum) { random([3, 4, 8], seed: 149).pointwiseMax(random([4, 8], seed: 150)) }
        try await expectParity("row and strided together", .add) { random([8, 16], seed: 151) + random([16, 8], seed: 152).transposed() + random([16], seed: 153) }
    }

    @Test func sizeOneEmptyAndLargeShapes() async throws {
        try await expectParity("scalar", .add) { Tensor(shape: [], scalars: [2] as [Float]) + Tensor(shape: [], scalars: [3] as [Float]) }
        try await expectParity("size one axes", .multiply) { random([1, 5, 1], seed: 17) * random([1, 1, 1], seed: 18) }
        try await expectParity("empty", .add) { random([0, 5], seed: 19) + random([0, 5], seed: 20) }
        try await expectParity("large", .add) { random([1 << 20], seed: 21) + random([1 << 20], seed: 22) }
        try await expectParity("rank 6 strided", .subtract) {
            random([2, 3, 2, 3, 2, 3], seed: 23).transposed(permutation: [5, 4, 3, 2, 1, 0]) - random([3, 2, 3, 2, 3, 2], seed: 24)
        }
    }
}

/// The elementwise kinds of one operand (casts aside, whose target is an attribute), and of two.
let unaryKinds = OpKind.elementwise.filter { $0.descriptor.arity == .exactly(1) && $0 != .cast }
let binaryKinds = OpKind.elementwise.filter { $0.descriptor.arity == .exactly(2) }

extension Tensor {
    func unaryForTest(_ kind: OpKind) -> Tensor { Tensor.record(Op(kind), [self], at: nil) }
    func binaryForTest(_ kind: OpKind, _ other: Tensor) -> Tensor { Tensor.binary(kind, self, other, at: nil) }
}

/// The kernels of the plan the engine would run for a tensor under a policy.
func withComputePolicyPlan(_ policy: ComputePolicy, _ make: () -> Tensor) throws -> [Kernel] {
    let tensor = make()
    guard let node = tensor.node else { return [] }
    let planner = Planner(backends: Engine.shared.backends, profiles: Engine.shared.profiles, policy: policy)
    let plan = try planner.plan(targets: [node])
    return plan.steps.map(plan.kernel(of:))
}
