/// Whether two measurements of the same thing differ by more than their noise.
public enum ChangeVerdict: String, Sendable, Hashable, CaseIterable {
    /// The new run's slowest typical time (p90) is below the old run's fastest (min).
    case faster
    /// The new run's fastest time is above the old run's p90.
    case slower
    /// The two runs' min…p90 spreads overlap: no change beyond the measured noise.
    case withinNoise

    /// The mark printed beside a ratio.
    public var mark: String {
        switch self {
        case .faster: "faster"
        case .slower: "SLOWER"
        case .withinNoise: "~ noise"
        }
    }

    /// Compares two rows by their min…p90 spreads.
    ///
    /// Each run's spread `[min, p90]` is the range its typical iterations fall in; only when the
    /// spreads are disjoint is the change larger than what either run measured as noise.
    public init(new: BenchRow, old: BenchRow) {
        if new.p90Seconds < old.minSeconds {
            self = .faster
        } else if new.minSeconds > old.p90Seconds {
            self = .slower
        } else {
            self = .withinNoise
        }
    }
}

/// One line of a comparison: a new row against an old one.
public struct ComparisonEntry: Sendable, Hashable {
    /// The workload both rows measured.
    public let workload: String
    /// The new row's backend.
    public let newBackend: String
    /// The old row's backend (another name when comparing the engine against a peer).
    public let oldBackend: String
    /// New median over old median: below 1 means the new run is faster.
    public let ratio: Double
    /// Whether the difference is beyond the noise.
    public let verdict: ChangeVerdict
    /// The new row.
    public let new: BenchRow
    /// The old row.
    public let old: BenchRow

    /// Pairs two rows.
    public init(new: BenchRow, old: BenchRow) {
        self.workload = new.workload
        self.newBackend = new.backend
        self.oldBackend = old.backend
        self.new = new
        self.old = old
        self.ratio = old.medianSeconds > 0 ? new.medianSeconds / old.medianSeconds : .infinity
        self.verdict = ChangeVerdict(new: new, old: old)
    }
}

/// Pairs the rows of two reports.
public enum Comparison {
    /// The backends an old-only row (a peer) is compared with, in order of preference: the planner's
    /// choice, else the fast CPU backend.
    public static let engineBackendsForPeers = ["auto", "openblas"]

    /// Pairs every new row with the old row of the same workload and backend; an old peer row
    /// (`numpy`, `torch`) whose backend the new report never ran is paired with the new report's
    /// `auto` row of that workload (else its `openblas` row), so the engine shows beside its peers;
    /// likewise a new peer row whose backend the old report never ran meets the old engine row.
    public static func entries(new: BenchReport, old: BenchReport) -> [ComparisonEntry] {
        let newBackends = Set(new.rows.map(\.backend))
        var entries: [ComparisonEntry] = []
        for row in new.rows {
            if let match = old.row(workload: row.workload, backend: row.backend) {
                entries.append(ComparisonEntry(new: row, old: match))
            }
        }
        for oldRow in old.rows where oldRow.kind == .peer && !newBackends.contains(oldRow.backend) {
            let engine = engineBackendsForPeers.lazy.compactMap { new.row(workload: oldRow.workload, backend: $0) }.first
            if let engine { entries.append(ComparisonEntry(new: engine, old: oldRow)) }
        }
        // The other way round (a peers file compared with an engine report).
        let oldBackends = Set(old.rows.map(\.backend))
        for newRow in new.rows where newRow.kind == .peer && !oldBackends.contains(newRow.backend) {
            let engine = engineBackendsForPeers.lazy.compactMap { old.row(workload: newRow.workload, backend: $0) }.first
            if let engine { entries.append(ComparisonEntry(new: newRow, old: engine)) }
        }
        let order = Dictionary(new.rows.enumerated().map { ($0.element.workload, $0.offset) }, uniquingKeysWith: min)
        return entries.enumerated().sorted { a, b in
            let (ka, kb) = (order[a.element.workload] ?? .max, order[b.element.workload] ?? .max)
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
    }

    /// The comparison as an aligned table.
    public static func table(_ entries: [ComparisonEntry]) -> String {
        var table = TextTable(columns: [
            .init("workload"), .init("new", alignment: .left), .init("old", alignment: .left),
            .init("new median"), .init("old median"), .init("new/old"), .init("change", alignment: .left),
        ])
        for entry in entries {
            table.append([
                entry.workload, entry.newBackend, entry.oldBackend,
                Format.seconds(entry.new.medianSeconds), Format.seconds(entry.old.medianSeconds),
                Format.ratio(entry.ratio), entry.verdict.mark,
            ])
        }
        return table.rendered()
    }
}
