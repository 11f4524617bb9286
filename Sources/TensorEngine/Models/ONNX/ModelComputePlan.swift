import Foundation

/// The compute plan of a model, by the model's own operations: for each ONNX node its name and op
/// type, where it runs, what it may run on, and its estimated cost and share of the whole — the
/// view Core ML's `MLComputePlan` gives of a model's program.
///
/// ```swift
/// let plan = try model.computePlan(inputShapes: ["input_ids": [1, 128], "attention_mask": [1, 128]])
/// for operation in plan.operations { print(operation.name, operation.deviceUsage?.preferred ?? "host") }
/// ```
///
/// It is built from the engine's plan for the model's graph (``enginePlan``): every engine
/// operation is attributed to the ONNX node it was recorded for. Nodes folded on the host while
/// importing (shape arithmetic) run nowhere at prediction time; a node whose ops were fused into a
/// later node's kernel lists no engine operations of its own.
public struct ModelComputePlan: Sendable {
    /// One node of the model.
    public struct Operation: Sendable, Hashable {
        /// The node's name (may be empty: ONNX does not require names).
        public let name: String
        /// The ONNX op type (`MatMul`, `com.microsoft.FusedGelu`).
        public let opType: String
        /// The values the node reads, in its order (empty names are omitted optional inputs).
        public let inputs: [String]
        /// The values the node defines.
        public let outputs: [String]
        /// Where it runs and may run; `nil` for a node folded on the host or fused into a later one.
        public let deviceUsage: ComputePlan.DeviceUsage?
        /// Its estimated seconds (copies included) and share of the plan; `nil` as for `deviceUsage`.
        public let estimatedCost: ComputePlan.EstimatedCost?
        /// The positions in ``enginePlan``'s operations that compute it.
        public let engineOperations: [Int]
        /// Whether the importer computed the node on the host (a shape computation).
        public let isFoldedOnHost: Bool
        /// The values each named parameter reads (a MIL operation's `x`, `weight`...); empty for
        /// an ONNX node, whose operands are positional.
        let parameters: [String: [String]]
    }

    /// The model's nodes in execution order.
    public let operations: [Operation]
    /// The engine's plan the model's plan summarises; `evaluate()` on it runs the prediction.
    public let enginePlan: ComputePlan
    /// The model's inputs with the shapes planned for.
    public let inputValues: [ModelStructure.NamedValueType]
    /// The model's outputs' names.
    public let outputNames: [String]

    /// One of the model's operations as the plan lists it: an ONNX node or a MIL operation.
    struct Source {
        let name: String
        let opType: String
        let inputs: [String]
        let outputs: [String]
        var parameters: [String: [String]] = [:]
    }

    init(graph: ONNXGraph, trace: ONNXTrace, enginePlan: ComputePlan, inputs: [String: Tensor]) {
        let sources = graph.nodes.map { node in
            let opType = node.domain.isEmpty || node.domain == "ai.onnx" ? node.opType : "\(node.domain).\(node.opType)"
            return Source(name: node.name, opType: opType, inputs: node.inputs, outputs: node.outputs)
        }
        let inputValues = graph.inputs.map { info in
            ModelStructure.NamedValueType(
                name: info.name, shape: inputs[info.name]?.shape, scalarType: inputs[info.name]?.dtype)
        }
        self.init(
            sources: sources, inputValues: inputValues, outputNames: graph.outputs.map(\.name), trace: trace,
            enginePlan: enginePlan)
    }

    /// The plan of `sources` (the model's operations in order), from the engine plan and the
    /// trace attributing each engine node to the position of the operation that recorded it.
    init(
        sources: [Source], inputValues: [ModelStructure.NamedValueType], outputNames: [String], trace: ONNXTrace,
        enginePlan: ComputePlan
    ) {
        self.enginePlan = enginePlan
        self.inputValues = inputValues
        self.outputNames = outputNames
        nodeInputs = sources.map(\.inputs)
        let folded = trace.folded
        var byNode: [Int: [Int]] = [:]
        for (position, node) in enginePlan.operationNodes.enumerated() {
            if let origin = trace.origins[node], origin >= 0 { byNode[origin, default: []].append(position) }
        }
        operations = sources.enumerated().map { index, node in
            let opType = node.opType
            let positions = byNode[index] ?? []
            guard !positions.isEmpty else {
                return Operation(
                    name: node.name, opType: opType, inputs: node.inputs, outputs: node.outputs, deviceUsage: nil,
                    estimatedCost: nil,
                    engineOperations: [], isFoldedOnHost: folded.contains(index), parameters: node.parameters)
            }
            let steps = positions.map { enginePlan.operations[$0] }
            var secondsByBackend: [BackendID: Double] = [:]
            for step in steps {
                secondsByBackend[step.deviceUsage.preferred, default: 0] +=
                    step.estimatedCost.seconds + step.copies.reduce(0) { $0 + $1.estimatedSeconds }
            }
            let preferred =
                secondsByBackend.max { $0.value < $1.value || ($0.value == $1.value && $0.key.name > $1.key.name) }?.key
                ?? steps[0].deviceUsage.preferred
            let supported = steps.dropFirst().reduce(Set(steps[0].deviceUsage.supported)) {
                $0.intersection($1.deviceUsage.supported)
            }
            let usage = ComputePlan.DeviceUsage(preferred: preferred, supported: supported.sorted { $0.name < $1.name })
            let cost = ComputePlan.EstimatedCost(
                seconds: secondsByBackend.values.reduce(0, +), weight: steps.reduce(0) { $0 + $1.estimatedCost.weight })
            return Operation(
                name: node.name, opType: opType, inputs: node.inputs, outputs: node.outputs, deviceUsage: usage,
                estimatedCost: cost,
                engineOperations: positions, isFoldedOnHost: false, parameters: node.parameters)
        }
    }

    /// An aligned table: node, op type, device, estimate, share, engine operations.
    public func text() -> String {
        var rows = [["#", "node", "op type", "device", "estimate", "share", "engine ops"]]
        for (index, operation) in operations.enumerated() {
            let device: String
            if let usage = operation.deviceUsage {
                device = usage.preferred.name
            } else {
                device = operation.isFoldedOnHost ? "host (folded)" : "(fused)"
            }
            rows.append([
                "\(index)", operation.name.isEmpty ? "-" : operation.name, operation.opType, device,
                operation.estimatedCost.map { String(format: "%.1f µs", $0.seconds * 1e6) } ?? "-",
                operation.estimatedCost.map { String(format: "%.1f%%", $0.weight * 100) } ?? "-",
                operation.engineOperations.map { "%\($0)" }.joined(separator: " "),
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        let folded = operations.filter(\.isFoldedOnHost).count
        let total = String(format: "%.3f ms", enginePlan.totalEstimatedSeconds * 1e3)
        return lines.joined(separator: "\n")
            + "\n\(operations.count) nodes (\(folded) folded on the host), \(enginePlan.operations.count) engine operations, "
            + "estimated \(total), policy \(enginePlan.policy)\n"
    }

    /// The plan as JSON: `{"policy", "estimatedSeconds", "operations": [{name, opType, ...}], "enginePlan"}`.
    public func json() -> String {
        func escape(_ text: String) -> String {
            var result = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": result += "\\\""
                case "\\": result += "\\\\"
                case "\n": result += "\\n"
                case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
                default: result.unicodeScalars.append(scalar)
                }
            }
            return "\"\(result)\""
        }
        let entries = operations.map { operation -> String in
            var fields = [
                "\"name\": \(escape(operation.name))", "\"opType\": \(escape(operation.opType))",
                "\"outputs\": [\(operation.outputs.map(escape).joined(separator: ", "))]",
                "\"foldedOnHost\": \(operation.isFoldedOnHost)",
                "\"engineOperations\": [\(operation.engineOperations.map(String.init).joined(separator: ", "))]",
            ]
            if let usage = operation.deviceUsage {
                fields.append("\"preferredDevice\": \(escape(usage.preferred.name))")
                fields.append(
                    "\"supportedDevices\": [\(usage.supported.map { escape($0.name) }.joined(separator: ", "))]")
            }
            if let cost = operation.estimatedCost {
                fields.append("\"estimatedSeconds\": \(cost.seconds)")
                fields.append("\"weight\": \(cost.weight)")
            }
            return "    {" + fields.joined(separator: ", ") + "}"
        }
        return "{\n  \"policy\": \(escape(enginePlan.policy.description)),\n"
            + "  \"estimatedSeconds\": \(enginePlan.totalEstimatedSeconds),\n"
            + "  \"operations\": [\n" + entries.joined(separator: ",\n") + "\n  ],\n"
            + "  \"enginePlan\": "
            + enginePlan.json().split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
            + "\n}\n"
    }

    /// The model's nodes as a Graphviz graph, each labelled with its op type, device and share.
    public func dot() -> String {
        var producer: [String: Int] = [:]
        for (index, operation) in operations.enumerated() {
            for output in operation.outputs { producer[output] = index }
        }
        var lines = ["digraph model {", "  rankdir=TB;", "  node [shape=box, fontname=\"Helvetica\"];"]
        for (index, operation) in operations.enumerated() {
            let device = operation.deviceUsage?.preferred.name ?? (operation.isFoldedOnHost ? "host" : "fused")
            let share = operation.estimatedCost.map { String(format: " %.1f%%", $0.weight * 100) } ?? ""
            let label =
                "\(operation.opType)\\n\(operation.name.replacingOccurrences(of: "\"", with: "'"))\\n\(device)\(share)"
            let style = operation.isFoldedOnHost ? ", style=dashed" : ""
            lines.append("  n\(index) [label=\"\(label)\"\(style)];")
        }
        for index in operations.indices {
            for input in inputs(of: index) {
                if let source = producer[input] { lines.append("  n\(source) -> n\(index);") }
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The inputs of each node, for the DOT edges.
    private let nodeInputs: [[String]]

    private func inputs(of index: Int) -> [String] { index < nodeInputs.count ? nodeInputs[index] : [] }
}
