import Foundation

/// The JSON form of a ``ComputePlan``: a stable schema (`schema_version` 1), its keys the
/// snake-case names of the properties below.
public struct ComputePlanDocument: Codable, Sendable, Hashable {
    /// One operation of the plan.
    public struct Operation: Codable, Sendable, Hashable {
        public var index: Int
        public var op: String
        public var fusedOps: [String]
        public var shape: [Int]
        public var scalarType: String
        public var inputs: [String]
        public var preferred: String
        public var supported: [String]
        public var estimatedSeconds: Double
        public var weight: Double
        public var flops: Double
        public var bytes: Double
        public var reason: String
        public var copies: [ComputePlan.Copy]
        public var measuredSeconds: Double?

        enum CodingKeys: String, CodingKey {
            case index, op, shape, inputs, preferred, supported, weight, flops, bytes, reason, copies
            case fusedOps = "fused_ops", scalarType = "scalar_type", estimatedSeconds = "estimated_seconds"
            case measuredSeconds = "measured_seconds"
        }
    }

    public var schemaVersion: Int
    public var policy: String
    public var calibrated: Bool
    public var totalEstimatedSeconds: Double
    public var transferBytes: Int
    public var estimatedPeakBytes: Int
    public var deviceSwitches: Int
    public var operations: [Operation]

    enum CodingKeys: String, CodingKey {
        case policy, calibrated, operations
        case schemaVersion = "schema_version", totalEstimatedSeconds = "total_estimated_seconds"
        case transferBytes = "transfer_bytes", estimatedPeakBytes = "estimated_peak_bytes", deviceSwitches = "device_switches"
    }

    /// Decodes a plan dumped by ``ComputePlan/json()``.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(ComputePlanDocument.self, from: json)
    }

    init(_ plan: ComputePlan) {
        schemaVersion = 1
        policy = plan.policy.description
        calibrated = plan.calibrated
        totalEstimatedSeconds = plan.totalEstimatedSeconds
        transferBytes = plan.transferBytes
        estimatedPeakBytes = plan.estimatedPeakBytes
        deviceSwitches = plan.deviceSwitches
        operations = plan.operations.map { op in
            Operation(
                index: op.index, op: op.op, fusedOps: op.fusedOps, shape: op.shape, scalarType: op.scalarType.rawValue, inputs: op.inputs,
                preferred: op.deviceUsage.preferred.name, supported: op.deviceUsage.supported.map(\.name),
                estimatedSeconds: op.estimatedCost.seconds, weight: op.estimatedCost.weight, flops: op.cost.flops,
                bytes: op.cost.bytesMoved, reason: op.reason, copies: op.copies, measuredSeconds: op.measuredSeconds)
        }
    }
}

extension ComputePlan {
    /// The plan as an aligned text table: one row per operation with its device, estimate, share
    /// of the total, measured time (in measure mode) and reason.
    public func text() -> String {
        let measured = operations.contains { $0.measuredSeconds != nil }
        var header = ["#", "op", "shape", "type", "device", "supported", "estimate", "share"]
        if measured { header.append("measured") }
        header.append("reason")
        var rows = [header]
        for op in operations {
            var row = [
                "%\(op.index)", op.op, describe(op.shape), op.scalarType.rawValue, op.deviceUsage.preferred.name,
                op.deviceUsage.supported.map(\.name).joined(separator: ","), formatSeconds(op.estimatedCost.seconds),
                String(format: "%5.1f%%", op.estimatedCost.weight * 100),
            ]
            if measured { row.append(op.measuredSeconds.map(formatSeconds) ?? "-") }
            row.append(op.reason + op.copies.map { " [copy \($0.value) \($0.from)→\($0.to) \($0.bytes) B]" }.joined())
            rows.append(row)
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        let summary = "plan: \(operations.count) operations, policy \(policy), estimated \(formatSeconds(totalEstimatedSeconds)), "
            + "\(transferBytes) B copied, peak \(estimatedPeakBytes) B live, \(deviceSwitches) device switches, "
            + (calibrated ? "calibrated" : "uncalibrated (default profiles: TENSORENGINE_CALIBRATION is off, or run `tensorplan calibrate`)") + (cached ? ", cached" : "")
        return ([summary] + lines).joined(separator: "\n")
    }

    /// The plan as JSON in the documented schema (``ComputePlanDocument``), keys sorted.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(ComputePlanDocument(self)), let text = String(data: data, encoding: .utf8) else { return "{}" }
        return text
    }

    /// The plan as a Graphviz DOT graph: operations coloured by device, labelled with their share
    /// of the estimate; inputs as boxes; copies between memory spaces as dashed red edges.
    public func dot() -> String {
        // A colour per backend, by its place among the backends the engine knows.
        let palette = ["#d9d9d9", "#9ecae1", "#fdae6b", "#a1d99b", "#bcbddc", "#fdd0a2"]
        let known = Engine.shared.known
        func color(_ backend: BackendID) -> String { palette[(known.firstIndex(of: backend) ?? known.count) % palette.count] }
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        var lines = ["digraph plan {", "  rankdir=TB;", "  node [fontname=\"Helvetica\", fontsize=10];",
                     "  label=\(quoted("policy \(policy), estimated \(formatSeconds(totalEstimatedSeconds))"));"]
        var inputs: Set<String> = []
        for op in operations {
            for input in op.inputs where input.hasPrefix("input") && inputs.insert(input).inserted {
                lines.append("  \(quoted(input)) [shape=box, style=dashed];")
            }
            let label = "\(op.op)\\n\(describe(op.shape)) \(op.scalarType)\\n\(op.deviceUsage.preferred) \(String(format: "%.1f%%", op.estimatedCost.weight * 100))"
            lines.append("  \(quoted("%\(op.index)")) [label=\(quoted(label)), style=filled, fillcolor=\(quoted(color(op.deviceUsage.preferred)))];")
            for input in op.inputs {
                if let copy = op.copies.first(where: { $0.value == input }) {
                    lines.append("  \(quoted(input)) -> \(quoted("%\(op.index)")) [style=dashed, color=red, label=\(quoted("copy \(copy.bytes) B"))];")
                } else {
                    lines.append("  \(quoted(input)) -> \(quoted("%\(op.index)"));")
                }
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

/// Prints every plan as it is made when `TENSORENGINE_PRINT_PLANS` is set (`text`, `json` or `dot`).
enum PlanLog {
    static let format = ProcessInfo.processInfo.environment["TENSORENGINE_PRINT_PLANS"]
    static var enabled: Bool { format != nil }

    static func print(_ plan: ComputePlan) {
        let text = switch format {
        case "json": plan.json()
        case "dot": plan.dot()
        default: plan.text()
        }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
