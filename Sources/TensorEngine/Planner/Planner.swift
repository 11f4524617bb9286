/// Decides where each pending op runs: the cheapest placement of the whole graph, copies included.
///
/// For every step and every backend the policy allows and that supports the step, the planner
/// computes the cheapest way to have the step's result on that backend: the kernel's estimated time
/// plus, for each operand, the cheapest of producing it on some backend and copying it over. This
/// dynamic programme over the topological order is exact for trees and a close, deterministic
/// approximation for shared subgraphs (each consumer sees the operand's best placement).
struct Planner {
    let backends: [any Backend]
    let profiles: [BackendKind: DeviceProfile]
    let policy: ComputePolicy

    /// A step before placement: the kernel, its node and operands.
    struct Candidate {
        let node: Node
        let kernel: Kernel
        let operands: [Node]
        let absorbed: [Node]
    }

    func plan(targets: [Node]) throws(TensorError) -> Plan {
        let graph = PendingGraph(targets: targets)
        let candidates = FusionPass.candidates(for: graph)
        let allowed = backends.filter { policy.allows($0.kind) }
        guard !allowed.isEmpty else {
            throw TensorError(.unsupported, op: "plan", message: "no available backend is allowed by the compute policy \(policy)")
        }
        let spaces = Dictionary(allowed.map { ($0.kind, $0.memorySpace) }, uniquingKeysWith: { a, _ in a })

        // best[node][backend]: estimated seconds to have the node's value in that backend's memory.
        var best: [UInt64: [BackendKind: Double]] = [:]
        var options: [UInt64: (supported: [BackendKind], seconds: [BackendKind: Double], cost: Cost)] = [:]
        for source in graph.sources {
            best[source.id] = Dictionary(allowed.map { ($0.kind, transferSeconds(source.signature.byteCount, from: .host, to: $0)) }, uniquingKeysWith: { a, _ in a })
        }
        for candidate in candidates {
            let inputs = candidate.operands.map(\.signature)
            let cost = Self.cost(of: candidate)
            var seconds: [BackendKind: Double] = [:]
            var supported: [BackendKind] = []
            var reasons: [String] = []
            for backend in allowed {
                switch backend.capability(for: candidate.kernel, inputs: inputs, output: candidate.node.signature) {
                case .supported:
                    supported.append(backend.kind)
                    seconds[backend.kind] = estimate(candidate, cost: cost, on: backend.kind)
                case .unsupported(let reason):
                    reasons.append("\(backend.kind): \(reason)")
                }
            }
            guard !supported.isEmpty else {
                throw TensorError(.unsupported, op: candidate.node.op.name, operandShapes: inputs.map(\.shape), message: "no backend allowed by policy \(policy) runs it (\(reasons.joined(separator: "; ")))", location: candidate.node.location)
            }
            options[candidate.node.id] = (supported, seconds, cost)
            var table: [BackendKind: Double] = [:]
            for kind in supported {
                let inputCost = candidate.operands.reduce(0.0) { total, operand in
                    total + cheapestArrival(of: operand, at: kind, best: best, spaces: spaces)
                }
                table[kind] = (seconds[kind] ?? 0) + inputCost
            }
            // A value can also arrive by a copy from where it is cheapest to produce.
            var arrival: [BackendKind: Double] = [:]
            for backend in allowed {
                arrival[backend.kind] = allowed.compactMap { producer in
                    table[producer.kind].map { $0 + transferSeconds(candidate.node.signature.byteCount, from: producer.memorySpace, to: backend) }
                }.min() ?? .infinity
            }
            best[candidate.node.id] = arrival
        }

        // Assign backwards: targets go where they are cheapest to bring to the host; each step
        // asks its operands to be produced where they are cheapest to bring to it.
        var placement: [UInt64: BackendKind] = [:]
        var wanted: [UInt64: BackendKind] = [:]
        let host = allowed.first { $0.memorySpace == .host }
        for target in targets where options[target.id] != nil {
            wanted[target.id] = host?.kind ?? allowed[0].kind
        }
        for candidate in candidates.reversed() {
            guard let option = options[candidate.node.id] else { continue }
            let destination = wanted[candidate.node.id] ?? option.supported[0]
            let chosen = option.supported.min { a, b in
                let ca = (option.seconds[a] ?? .infinity) + candidate.operands.reduce(0.0) { $0 + cheapestArrival(of: $1, at: a, best: best, spaces: spaces) }
                    + transferSeconds(candidate.node.signature.byteCount, from: spaces[a] ?? .host, to: backend(destination))
                let cb = (option.seconds[b] ?? .infinity) + candidate.operands.reduce(0.0) { $0 + cheapestArrival(of: $1, at: b, best: best, spaces: spaces) }
                    + transferSeconds(candidate.node.signature.byteCount, from: spaces[b] ?? .host, to: backend(destination))
                return ca < cb
            } ?? option.supported[0]
            placement[candidate.node.id] = chosen
            for operand in candidate.operands where wanted[operand.id] == nil { wanted[operand.id] = chosen }
        }

        var location: [UInt64: MemorySpace] = Dictionary(graph.sources.map { ($0.id, MemorySpace.host) }, uniquingKeysWith: { a, _ in a })
        var steps: [PlanStep] = []
        for candidate in candidates {
            guard let kind = placement[candidate.node.id], let option = options[candidate.node.id] else { continue }
            let space = spaces[kind] ?? .host
            let copies = candidate.operands.compactMap { operand -> PlannedCopy? in
                guard let from = location[operand.id], from != space else { return nil }
                let bytes = operand.signature.byteCount
                return PlannedCopy(nodeID: operand.id, from: from, to: space, bytes: bytes, estimatedSeconds: transferSeconds(bytes, from: from, to: backend(kind)))
            }
            location[candidate.node.id] = space
            steps.append(PlanStep(
                node: candidate.node, kernel: candidate.kernel, operands: candidate.operands, absorbed: candidate.absorbed,
                backend: kind, estimatedSeconds: option.seconds[kind] ?? 0, cost: option.cost, supported: option.supported,
                reason: reason(for: kind, option.supported, option.seconds), copies: copies))
        }
        return Plan(steps: steps, targets: targets, sources: graph.sources, policy: policy,
                    calibrated: allowed.allSatisfy { profiles[$0.kind]?.calibrated ?? false })
    }

    private func backend(_ kind: BackendKind) -> any Backend {
        backends.first { $0.kind == kind } ?? backends[0]
    }

    private func cheapestArrival(of operand: Node, at kind: BackendKind, best: [UInt64: [BackendKind: Double]], spaces: [BackendKind: MemorySpace]) -> Double {
        best[operand.id]?[kind] ?? 0
    }

    private func transferSeconds(_ bytes: Int, from: MemorySpace, to backend: any Backend) -> Double {
        guard from != backend.memorySpace else { return 0 }
        // A copy crosses the device link once; whichever side is the device sets the speed.
        let device = from == .host ? backend.kind : (backends.first { $0.memorySpace == from }?.kind ?? backend.kind)
        return profiles[device]?.transferSeconds(bytes: Double(bytes)) ?? 0
    }

    func estimate(_ candidate: Candidate, cost: Cost, on kind: BackendKind) -> Double {
        guard let profile = profiles[kind] else { return 0 }
        let shape = candidate.node.signature.shape
        let matmulShape: (m: Int, n: Int, k: Int)? = if case .op(.matmul) = candidate.kernel, shape.count >= 2 {
            (m: shape[shape.count - 2], n: shape[shape.count - 1], k: candidate.operands[0].signature.shape.last ?? 1)
        } else { nil }
        let category: OpKind.Category = switch candidate.kernel {
        case .op(let op): op.kind.category
        case .fused: .elementwise
        }
        return profile.seconds(for: cost, category: category, matmulShape: matmulShape)
    }

    static func cost(of candidate: Candidate) -> Cost {
        switch candidate.kernel {
        case .op(let op):
            return op.cost(inputs: candidate.operands.map(\.signature), output: candidate.node.signature)
        case .fused(let region):
            let read = candidate.operands.reduce(0.0) { $0 + Double($1.signature.byteCount) }
            return Cost(flops: region.flopsPerElement * Double(candidate.node.signature.elementCount), bytesRead: read,
                        bytesWritten: Double(candidate.node.signature.byteCount), launches: 1)
        }
    }

    private func reason(for chosen: BackendKind, _ supported: [BackendKind], _ seconds: [BackendKind: Double]) -> String {
        if case .only = policy { return "policy \(policy)" }
        if supported.count == 1 { return "only \(chosen) supports it" }
        return "cheapest with copies: " + supported.map { "\($0) \(formatSeconds(seconds[$0] ?? 0))" }.joined(separator: ", ")
    }
}

/// `12.3 µs`, `4.56 ms`, `1.23 s`.
func formatSeconds(_ seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: return String(format: "%.0f ns", seconds * 1e9)
    case ..<1e-3: return String(format: "%.1f µs", seconds * 1e6)
    case ..<1: return String(format: "%.2f ms", seconds * 1e3)
    default: return String(format: "%.2f s", seconds)
    }
}

import Foundation
