import Foundation
import Testing
@testable import TensorBenchCore

@Suite struct ReportSchemaTests {
    @Test func roundTripsThroughJSON() throws {
        var row = try Fixtures.row("gemm-256", "auto", min: 0.001, median: 0.0012, p90: 0.0015)
        row.setThroughput(flops: 2 * 256 * 256 * 256, bytes: 3 * 256 * 256 * 4)
        row.referenceRatio = 1.1
        row.estimatedSeconds = 0.0009
        row.peakLiveBytes = 262_144
        row.totalIntermediateBytes = 524_288
        row.peakResidentBytes = 50_000_000
        let reference = try Fixtures.row("gemm-256", "reference", kind: .reference, min: 0.001, median: 0.0011, p90: 0.0012)
        let report = Fixtures.report([row, reference], skipped: [SkippedRow(workload: "gemm-1024", backend: "naive", reason: "too slow", detail: "7.2 s")])
        let decoded = try BenchReport.decode(try report.encoded(), source: "test")
        #expect(decoded == report)
    }

    @Test func writesTheDocumentedSnakeCaseKeys() throws {
        var row = try Fixtures.row("gemm-64", "openblas", min: 1e-5, median: 2e-5, p90: 3e-5)
        row.peakResidentBytes = 1
        let object = try JSONSerialization.jsonObject(with: try Fixtures.report([row]).encoded())
        let top = try #require(object as? [String: Any])
        for key in ["schema_version", "tool", "created", "suite", "budget_seconds", "machine", "versions", "backends", "rows", "skipped"] {
            #expect(top[key] != nil, "missing top-level key \(key)")
        }
        let machine = try #require(top["machine"] as? [String: Any])
        #expect(Set(machine.keys) == ["cpu_model", "cores", "memory_bytes", "os"])
        let rows = try #require(top["rows"] as? [[String: Any]])
        let first = try #require(rows.first)
        for key in ["workload", "backend", "kind", "iterations", "first_run_seconds", "min_seconds", "median_seconds", "p90_seconds", "peak_resident_bytes"] {
            #expect(first[key] != nil, "missing row key \(key)")
        }
        #expect(first["p99_seconds"] == nil)  // optional keys are left out, not null
    }

    @Test func readsAMinimalPeerFileWithNulls() throws {
        // What bench/peers.py writes: optional fields as null, unknown version keys.
        let json = """
            {"schema_version": 1, "tool": "peers.py", "created": "2026-01-01T00:00:00Z", "suite": "quick",
             "budget_seconds": 0.25, "machine": {"cpu_model": "x", "cores": 2, "memory_bytes": 1, "os": "Linux"},
             "versions": {"python": "3.11.2", "numpy": "1.24.2"},
             "backends": [{"name": "numpy", "available": true, "detail": "1.24.2"}],
             "rows": [{"workload": "gemm-64", "backend": "numpy", "kind": "peer", "iterations": 3,
                       "first_run_seconds": 0.1, "min_seconds": 0.01, "median_seconds": 0.02, "p90_seconds": 0.03,
                       "p99_seconds": null, "gflops_per_second": 1.5, "detail": null}],
             "skipped": []}
            """
        let report = try BenchReport.decode(Data(json.utf8), source: "peers.json")
        #expect(report.rows.first?.kind == .peer)
        #expect(report.rows.first?.p99Seconds == nil)
        #expect(report.rows.first?.gflopsPerSecond == 1.5)
    }

    @Test func refusesNewerSchemasAndGarbageWithAMessage() throws {
        var report = Fixtures.report([])
        report.schemaVersion = BenchReport.currentSchemaVersion + 1
        #expect(throws: ReportError.self) { try BenchReport.decode(try report.encoded(), source: "new.json") }
        do {
            _ = try BenchReport.decode(Data("{\"rows\": []}".utf8), source: "bad.json")
            Issue.record("a file without the schema's keys decoded")
        } catch {
            #expect(error.description.contains("bad.json"))
            #expect(error.description.contains("missing key"))
        }
        #expect(throws: ReportError.self) { try BenchReport.load(path: "/nonexistent/old.json") }
    }

    @Test func throughputFromFlopsAndBytes() throws {
        var row = try Fixtures.row("eltwise-1m", "openblas", min: 0.001, median: 0.002, p90: 0.003)
        row.setThroughput(flops: 4e6, bytes: 16_000_000)
        #expect(row.gflopsPerSecond == 2)
        #expect(row.gigabytesPerSecond == 8)
        #expect(Format.throughput(row, bandwidthBound: true) == "8.00 GB/s")
        #expect(Format.throughput(row, bandwidthBound: false) == "2.00 GFLOP/s")
        row.setThroughput(flops: 0, bytes: 16_000_000)
        #expect(row.gflopsPerSecond == nil)
        #expect(Format.throughput(row, bandwidthBound: false) == "8.00 GB/s")
    }
}
