import Dispatch
import Testing
@testable import TensorEngine

/// The graph walk behind every evaluation: positions, wiring, uses and hash worked out by hand on
/// a small graph, the same whichever way the walk keeps its marks, and from many threads at once.
@Suite("Graph walk")
struct GraphWalkTests {
    /// `e = c · d` with `c = a · b`, `d = c + a`, asked for `e` and `c`: sources where the walk
    /// first meets them, each pending node after its operands, operands in order.
    @Test func positionsWiringAndUsesByHand() throws {
        let a = Tensor(shape: [2], scalars: [1, 2] as [Float]), b = Tensor(shape: [2], scalars: [3, 4] as [Float])
        let c = a * b, d = c + a, e = c * d
        let targets = try [e, c].map { try #require($0.node) }
        let graph = PendingGraph(targets: targets)
        let expected = try [a, b, c, d, e].map { try #require($0.node) }
        #expect(graph.nodes.count == 5)
        #expect(zip(graph.nodes, expected).allSatisfy { $0 === $1 })
        #expect(graph.wiring == [0, 1, -2, 2, 0, -2, 2, 3, -2, 4, 2])
        #expect(graph.sourceCount == 2 && graph.pendingCount == 3)
        #expect((0..<5).map(graph.isSource(at:)) == [true, true, false, false, false])
        #expect(expected.map { graph.uses(of: $0.id) } == [2, 1, 3, 1, 1])
        #expect(expected.map { graph.position(of: $0.id) } == [0, 1, 2, 3, 4])
        #expect(expected.map(graph.isSource) == [true, true, false, false, false])
        let outside = try #require((a - b).node)
        #expect(graph.position(of: outside.id) == nil && graph.uses(of: outside.id) == 0)
    }

    /// A graph with shared operands, a materialized node inside it and a target that is a source:
    /// the walk with marks on the nodes and the walk with a map give the same result.
    @Test func marksOnNodesAndInAMapAgree() async throws {
        let (targets, keep) = try await Self.sharedGraph()
        let onNodes = GraphWalk.walk(from: targets, marksOnNodes: true)
        let inMap = GraphWalk.walk(from: targets, marksOnNodes: false)
        #expect(onNodes.nodes.count == inMap.nodes.count)
        #expect(zip(onNodes.nodes, inMap.nodes).allSatisfy { $0 === $1 })
        #expect(onNodes.wiring == inMap.wiring)
        #expect(onNodes.sourceFlags == inMap.sourceFlags)
        #expect(onNodes.sourceCount == inMap.sourceCount)
        #expect(onNodes.structureHash == inMap.structureHash)
        withExtendedLifetime(keep) {}
    }

    /// Walks from many threads at once (one of them holding the marks on the nodes at a time, the
    /// others keeping theirs in maps) each give the walk of one thread alone.
    @Test func concurrentWalksAgree() async throws {
        let (targets, keep) = try await Self.sharedGraph()
        let alone = GraphWalk.walk(from: targets, marksOnNodes: false)
        let agreed = Guarded(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var same = 0
            for _ in 0..<200 {
                let walk = GraphWalk.walk(from: targets)
                if walk.wiring == alone.wiring, walk.structureHash == alone.structureHash,
                    walk.sourceFlags == alone.sourceFlags, zip(walk.nodes, alone.nodes).allSatisfy({ $0 === $1 })
                {
                    same += 1
                }
            }
            agreed.withLock { $0 += same }
        }
        #expect(agreed.withLock { $0 } == 8 * 200)
        withExtendedLifetime(keep) {}
    }

    /// Shared operands, a scalar constant used twice, a materialized node read by pending ones,
    /// and a source among the targets.
    private static func sharedGraph() async throws -> (targets: [Node], keep: [Tensor]) {
        let x = Tensor(randomNormal: [3, 4], seed: 7), w = Tensor(randomNormal: [4, 2], seed: 8)
        let product = x.matmul(w)
        let evaluated = (x * 2).exp()
        _ = try await evaluated.shapedArray(of: Float.self)
        let y = (product * product + 1).relu()
        let z = evaluated.sum(alongAxes: [1]) - (evaluated * 2).mean(alongAxes: [1])
        let tensors = [y, z, x, y.softmax(alongAxis: -1) * 2]
        return (try tensors.map { try #require($0.node) }, tensors + [product, evaluated])
    }
}
