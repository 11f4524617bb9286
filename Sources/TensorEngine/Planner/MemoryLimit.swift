import Foundation

/// A limit on the bytes of intermediate tensors one evaluation may keep alive at once.
///
/// A plan whose estimated peak exceeds the limit fails before running anything, with an error that
/// names the largest tensor, instead of being killed by the operating system halfway through. Set
/// it per task with ``withMemoryLimit(_:_:)`` or per process with `TENSORENGINE_MEMORY_LIMIT`
/// (bytes, or with a `K`, `M` or `G` suffix; any other value, or one over `Int.max` bytes, makes
/// every evaluation fail with ``TensorError/Kind/invalidArgument``). By default there is no limit
/// beyond the machine's.
public enum MemoryLimit {
    @TaskLocal static var scoped: Int?

    /// Parses `512M`, `2G`, `1048576`.
    static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = trimmed.last, let multiplier = multipliers[last] {
            guard let count = Int(trimmed.dropLast()) else { return nil }
            let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier)
            return overflow ? nil : bytes
        }
        return Int(trimmed)
    }

    /// `TENSORENGINE_MEMORY_LIMIT` as set: `nil` when unset, else its value parsed (`nil` inside
    /// when it is not a byte count, which every evaluation then reports).
    static let environment: (text: String, bytes: Int?)? = ProcessInfo.processInfo
        .environment["TENSORENGINE_MEMORY_LIMIT"].map { ($0, parse($0)) }

    /// The limit in force: the task-local one, else the environment's, else none; an error when
    /// the environment's is not a byte count.
    static var current: Int? {
        get throws(TensorError) {
            if let scoped { return scoped }
            guard let environment else { return nil }
            guard let bytes = environment.bytes else {
                throw TensorError(
                    .invalidArgument, op: "evaluate",
                    message: "TENSORENGINE_MEMORY_LIMIT=\(environment.text) is not a byte count (bytes, or a number "
                        + "with a K, M or G suffix, at most \(Int.max) bytes)")
            }
            return bytes
        }
    }

    /// Throws ``TensorError/Kind/memoryLimitExceeded`` when the plan's peak exceeds the limit.
    static func check(_ plan: Plan) throws(TensorError) {
        guard let limit = try current else { return }
        let peak = ComputePlan(plan, cached: false).estimatedPeakBytes
        guard peak > limit else { return }
        let largest = plan.steps.map(plan.node(of:)).max { $0.signature.byteCount < $1.signature.byteCount }
        let name = largest.map { "\($0.op.name) \(describe($0.signature.shape)) \($0.signature.scalarType) (\($0.signature.byteCount) bytes)" } ?? "none"
        throw TensorError(
            .memoryLimitExceeded, op: "evaluate", operandShapes: plan.targets.map(\.signature.shape),
            message: "the plan keeps \(peak) bytes of intermediates alive at its peak, over the limit of \(limit); the largest tensor is \(name)",
            location: largest?.location)
    }
}

/// Runs `body` with a memory limit (in bytes) on every evaluation inside it.
public func withMemoryLimit<R>(_ bytes: Int, _ body: () async throws -> R) async rethrows -> R {
    try await MemoryLimit.$scoped.withValue(bytes) { try await body() }
}
