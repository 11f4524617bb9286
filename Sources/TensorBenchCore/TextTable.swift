import Foundation

/// A plain-text table whose columns line up in a terminal (widths count characters, not bytes).
public struct TextTable: Sendable {
    /// Which side of its column a cell hugs.
    public enum Alignment: Sendable { case left, right }

    /// A column: its header and alignment.
    public struct Column: Sendable {
        /// The header text.
        public let header: String
        /// How cells line up.
        public let alignment: Alignment

        /// Creates a column; numbers read best right-aligned, so that is the default.
        public init(_ header: String, alignment: Alignment = .right) {
            self.header = header
            self.alignment = alignment
        }
    }

    /// The columns, in order; the first is always left-aligned.
    public let columns: [Column]
    private var rows: [[String]] = []

    /// Creates an empty table.
    public init(columns: [Column]) { self.columns = columns }

    /// Adds a row; missing cells are blank, extra cells are dropped.
    public mutating func append(_ cells: [String]) {
        rows.append((0..<columns.count).map { $0 < cells.count ? cells[$0] : "" })
    }

    /// The table with a header line and a rule under it.
    public func rendered() -> String {
        let all = [columns.map(\.header)] + rows
        let widths = columns.indices.map { index in all.map { $0[index].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: widths[index] - cell.count)
                return index == 0 || columns[index].alignment == .left ? cell + pad : pad + cell
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(columns.map(\.header)), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}

/// Number formatting shared by the tables, the comparison and the chart.
public enum Format {
    /// `812 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`.
    public static func seconds(_ seconds: Double) -> String {
        switch seconds {
        case ..<1e-6: String(format: "%.0f ns", seconds * 1e9)
        case ..<1e-3: String(format: "%.1f µs", seconds * 1e6)
        case ..<1: String(format: "%.2f ms", seconds * 1e3)
        default: String(format: "%.2f s", seconds)
        }
    }

    /// `512 B`, `1.5 KiB`, `12.0 MiB`, `1.25 GiB`.
    public static func bytes(_ bytes: Int) -> String {
        let value = Double(bytes)
        switch value {
        case ..<1024: return "\(bytes) B"
        case ..<(1024 * 1024): return String(format: "%.1f KiB", value / 1024)
        case ..<(1024 * 1024 * 1024): return String(format: "%.1f MiB", value / (1024 * 1024))
        default: return String(format: "%.2f GiB", value / (1024 * 1024 * 1024))
        }
    }

    /// `0.98×`, `12.3×`, `1234×`.
    public static func ratio(_ ratio: Double) -> String {
        guard ratio.isFinite else { return "—" }
        switch ratio {
        case ..<10: return String(format: "%.2f×", ratio)
        case ..<100: return String(format: "%.1f×", ratio)
        default: return String(format: "%.0f×", ratio)
        }
    }

    /// A throughput with its unit: `25.1 GB/s` for bandwidth-bound workloads, else
    /// `123.4 GFLOP/s`, falling back to whichever figure the row has.
    public static func throughput(_ row: BenchRow, bandwidthBound: Bool) -> String {
        let bandwidth = row.gigabytesPerSecond.map { "\(significant($0)) GB/s" }
        let arithmetic = row.gflopsPerSecond.map { "\(significant($0)) GFLOP/s" }
        return (bandwidthBound ? bandwidth ?? arithmetic : arithmetic ?? bandwidth) ?? ""
    }

    /// `123`, `12.3`, `1.23`, `0.012`: three significant digits at most, one decimal at least.
    static func significant(_ value: Double) -> String {
        switch value {
        case 100...: String(format: "%.0f", value)
        case 10...: String(format: "%.1f", value)
        case 1...: String(format: "%.2f", value)
        default: String(format: "%.3f", value)
        }
    }
}
