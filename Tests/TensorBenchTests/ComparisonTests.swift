import Testing
@testable import TensorBenchCore

@Suite struct ComparisonTests {
    @Test func ratioIsNewMedianOverOldMedian() throws {
        let new = try Fixtures.row("gemm-256", "openblas", min: 1.0, median: 1.5, p90: 2.0)
        let old = try Fixtures.row("gemm-256", "openblas", min: 2.0, median: 3.0, p90: 4.0)
        let entry = ComparisonEntry(new: new, old: old)
        #expect(entry.ratio == 0.5)
    }

    @Test func marksOnlyChangesBeyondTheSpreads() throws {
        let old = try Fixtures.row("w", "openblas", min: 10, median: 11, p90: 12)
        // Disjoint spreads: p90 below old min → faster; min above old p90 → slower.
        #expect(ChangeVerdict(new: try Fixtures.row("w", "openblas", min: 5, median: 6, p90: 9.9), old: old) == .faster)
        #expect(ChangeVerdict(new: try Fixtures.row("w", "openblas", min: 12.1, median: 13, p90: 14), old: old) == .slower)
        // Overlapping spreads, even with a different median: noise.
        #expect(ChangeVerdict(new: try Fixtures.row("w", "openblas", min: 9, median: 9.5, p90: 10), old: old) == .withinNoise)
        #expect(ChangeVerdict(new: try Fixtures.row("w", "openblas", min: 12, median: 13, p90: 15), old: old) == .withinNoise)
    }

    @Test func pairsSameBackendsAndPutsPeersAgainstAuto() throws {
        let new = Fixtures.report([
            try Fixtures.row("gemm-64", "openblas", min: 1, median: 2, p90: 3),
            try Fixtures.row("gemm-64", "auto", min: 1, median: 2, p90: 3),
            try Fixtures.row("mlp", "openblas", min: 4, median: 4, p90: 4),
        ])
        let old = Fixtures.report([
            try Fixtures.row("gemm-64", "openblas", min: 1, median: 4, p90: 5),
            try Fixtures.row("gemm-64", "numpy", kind: .peer, min: 1, median: 1, p90: 1),
            try Fixtures.row("mlp", "torch", kind: .peer, min: 8, median: 8, p90: 8),
            try Fixtures.row("softmax-vocab", "numpy", kind: .peer, min: 1, median: 1, p90: 1),
        ], tool: "peers.py")
        let entries = Comparison.entries(new: new, old: old)
        let pairs = entries.map { "\($0.workload) \($0.newBackend)/\($0.oldBackend)" }
        // numpy on gemm-64 meets auto; torch on mlp meets openblas (no auto row); softmax-vocab has no engine row.
        #expect(pairs == ["gemm-64 openblas/openblas", "gemm-64 auto/numpy", "mlp openblas/torch"])
        #expect(entries.map(\.ratio) == [0.5, 2, 0.5])
        let table = Comparison.table(entries)
        #expect(table.contains("0.50×"))
        #expect(table.contains("numpy"))
    }

    @Test func peersAsTheNewReportMeetTheOldEngineRows() throws {
        let engine = Fixtures.report([try Fixtures.row("gemm-64", "auto", min: 1, median: 2, p90: 3)])
        let peers = Fixtures.report([try Fixtures.row("gemm-64", "numpy", kind: .peer, min: 4, median: 4, p90: 4)], tool: "peers.py")
        let entries = Comparison.entries(new: peers, old: engine)
        #expect(entries.map { "\($0.newBackend)/\($0.oldBackend)" } == ["numpy/auto"])
        #expect(entries.first?.ratio == 2)
        #expect(entries.first?.verdict == .slower)
    }

    @Test func formatsRatiosAndTimes() {
        #expect(Format.ratio(0.5) == "0.50×")
        #expect(Format.ratio(12.34) == "12.3×")
        #expect(Format.ratio(1234) == "1234×")
        #expect(Format.ratio(.infinity) == "—")
        #expect(Format.seconds(2.5e-7) == "250 ns")
        #expect(Format.seconds(1.5e-5) == "15.0 µs")
        #expect(Format.seconds(0.0123) == "12.30 ms")
        #expect(Format.seconds(2) == "2.00 s")
        #expect(Format.bytes(512) == "512 B")
        #expect(Format.bytes(3 << 20) == "3.0 MiB")
    }

    @Test func tableColumnsLineUp() throws {
        var reference = try Fixtures.row("gemm-64", "reference", kind: .reference, min: 1e-5, median: 1e-5, p90: 1e-5)
        reference.detail = "cblas_sgemm"
        var auto = try Fixtures.row("gemm-64", "auto", min: 1e-5, median: 2e-5, p90: 3e-5)
        auto.referenceRatio = 2
        auto.estimatedSeconds = 1.5e-5
        let report = Fixtures.report([reference, auto], skipped: [SkippedRow(workload: "gemm-64", backend: "naive", reason: "too slow")])
        let lines = ReportTable.rendered(report).split(separator: "\n").map(String.init)
        #expect(lines.count == 5)  // header, rule, three rows
        #expect(lines[2].hasPrefix("gemm-64") && lines[2].contains("naive") && lines[2].contains("skipped (too slow)"))
        #expect(lines[4].contains("reference (cblas_sgemm)"))
        #expect(lines[3].contains("2.00×"))
        #expect(lines[0].contains("planner est."))
        // Every "median" cell ends in the same character column as its header.
        let header = lines[0]
        let end = header.distance(from: header.startIndex, to: try #require(header.range(of: "median")).upperBound)
        for line in [lines[3], lines[4]] {
            let cellEnd = line.index(line.startIndex, offsetBy: end)
            #expect(line[line.index(before: cellEnd)] == "s" && line[cellEnd] == " ", "median cell misaligned: \(line)")
        }
    }
}
