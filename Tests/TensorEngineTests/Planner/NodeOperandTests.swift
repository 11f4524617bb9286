import Testing
@testable import TensorEngine

/// A node's operands: kept in place for one or two, in an array beyond, in order either way; and
/// a graph let go of frees each node once, keeping what is still held elsewhere.
@Suite("Node operands")
struct NodeOperandTests {
    @Test func operandsInOrderForEveryCount() throws {
        let a = Tensor(shape: [2], scalars: [1, 2] as [Float]), b = Tensor(shape: [2], scalars: [3, 4] as [Float])
        let c = Tensor(shape: [2], scalars: [5, 6] as [Float]), d = Tensor(shape: [2], scalars: [7, 8] as [Float])
        let sources = try [a, b, c, d].map { try #require($0.node) }
        let cases: [(Tensor, [Node])] = [
            (a, []), (a.exp(), [sources[0]]), (b - a, [sources[1], sources[0]]),
            (Tensor(concatenating: [c, a, d], alongAxis: 0), [sources[2], sources[0], sources[3]]),
            (Tensor(concatenating: [d, c, b, a], alongAxis: 0), sources.reversed()),
        ]
        for (tensor, expected) in cases {
            let node = try #require(tensor.node)
            #expect(node.inputCount == expected.count)
            #expect(node.inputs.count == expected.count)
            #expect(zip(node.inputs, expected).allSatisfy { $0 === $1 })
            for (position, operand) in expected.enumerated() {
                #expect(node.unretainedInput(at: position)?.takeUnretainedValue() === operand)
            }
            #expect(node.unretainedInput(at: expected.count) == nil)
        }
    }

    /// Three chains of 2 000 steps over a shared source and a shared middle node, joined by a
    /// concatenation of four operands: let go of, every node is freed; while the middle tensor is
    /// still held, it and everything behind it stay, and it still evaluates to its value. (The
    /// graph's every operand is a tensor of its own: scalar operands would be constants the engine
    /// keeps for reuse.)
    @Test func aGraphLetGoOfFreesEachNodeOnceAndKeepsWhatIsHeld() async throws {
        var weakNodes: [WeakNode] = []
        var kept: Tensor?
        do {
            let shared = Tensor(shape: [1], scalars: [1] as [Float])
            var middle = shared
            for _ in 0..<2_000 { middle = middle + shared }
            var branches: [Tensor] = []
            for factor in 2...4 {
                var branch = middle * Tensor(shape: [1], scalars: [Float(factor)])
                for _ in 0..<2_000 { branch = branch - shared }
                branches.append(branch)
            }
            let joined = Tensor(concatenating: branches + [middle], alongAxis: 0)
            weakNodes = PendingGraph(targets: [try #require(joined.node)]).nodes.map(WeakNode.init)
            #expect(weakNodes.count == 2_001 + 3 * 2_002 + 1)
            let expected: [Float] = [2_001 * 2 - 2_000, 2_001 * 3 - 2_000, 2_001 * 4 - 2_000, 2_001]
            #expect(try await joined.shapedArray(of: Float.self).scalars == expected)
            kept = middle
        }
        do {
            let keptNode = try #require(kept?.node)
            let alive = weakNodes.filter { $0.node != nil }
            // The kept middle node and its chain of 2 000 additions back to the shared source stay.
            #expect(alive.count == 2_001)
            #expect(alive.contains { $0.node === keptNode })
        }
        #expect(try await kept?.shapedArray(of: Float.self).scalars == [2_001])
        kept = nil
        #expect(weakNodes.allSatisfy { $0.node == nil })
    }

    final class WeakNode {
        weak var node: Node?
        init(_ node: Node) { self.node = node }
    }
}
