import Testing
@testable import TensorBenchCore

@Suite struct ArgumentParserTests {
    func options(_ arguments: [String]) throws -> BenchOptions {
        let command = try ArgumentParser.parse(arguments)
        guard case .run(let options) = command else {
            Issue.record("expected a run, got \(command)")
            return BenchOptions()
        }
        return options
    }

    @Test func defaultsToTheQuickSuite() throws {
        let parsed = try options([])
        #expect(parsed.suite == .quick)
        #expect(parsed.effectiveBudgetSeconds == Suite.quick.defaultBudgetSeconds)
        #expect(parsed.suiteLabel == "quick")
    }

    @Test func parsesEveryFlagInBothSpellings() throws {
        let parsed = try options([
            "--suite", "full", "--workload", "gemm-64", "--workload=mlp", "--backend", "openblas", "--backend=auto",
            "--budget", "0.5", "--iterations=20", "--naive-limit", "1.5", "--json", "out.json", "--svg=chart.svg",
            "--compare", "old.json", "--from", "saved.json",
        ])
        #expect(parsed.suite == .full)
        #expect(parsed.workloads == ["gemm-64", "mlp"])
        #expect(parsed.backends == ["openblas", "auto"])
        #expect(parsed.budgetSeconds == 0.5)
        #expect(parsed.maximumIterations == 20)
        #expect(parsed.naiveLimitSeconds == 1.5)
        #expect(parsed.jsonPath == "out.json" && parsed.svgPath == "chart.svg")
        #expect(parsed.comparePath == "old.json" && parsed.fromPath == "saved.json")
        #expect(parsed.suiteLabel == "custom")
    }

    @Test func openCLMatmulSizes() throws {
        #expect(try ArgumentParser.parse(["--opencl-matmul", "1024,2048, 4096"]) == .openCLMatmul([1024, 2048, 4096]))
        #expect(try ArgumentParser.parse(["--opencl-matmul=64"]) == .openCLMatmul([64]))
        for bad in ["", "0", "1024,x", "-5", "99999"] {
            #expect(throws: ArgumentError.self, "'\(bad)'") { try ArgumentParser.parse(["--opencl-matmul", bad]) }
        }
    }

    @Test func helpAndList() throws {
        #expect(try ArgumentParser.parse(["--help"]) == .help)
        #expect(try ArgumentParser.parse(["--suite", "full", "-h"]) == .help)
        #expect(try ArgumentParser.parse(["--list"]) == .list)
    }

    @Test func helpDocumentsEveryFlag() {
        for flag in ["--suite", "--workload", "--backend", "--budget", "--iterations", "--naive-limit", "--json", "--svg", "--compare", "--from", "--list", "--help"] {
            #expect(ArgumentParser.helpText.contains(flag), "--help does not mention \(flag)")
        }
    }

    @Test(arguments: [
        (["--frobnicate"], "unknown flag '--frobnicate'"),
        (["stray"], "unexpected argument 'stray'"),
        (["--suite", "medium"], "unknown suite 'medium'"),
        (["--workload", "gemm-3"], "unknown workload 'gemm-3'"),
        (["--backend", "cuda"], "unknown backend 'cuda'"),
        (["--budget", "-1"], "--budget needs a positive number"),
        (["--budget", "soon"], "--budget needs a positive number"),
        (["--budget", "nan"], "--budget needs a positive number"),
        (["--iterations", "0"], "--iterations needs a whole number"),
        (["--json"], "--json needs a value"),
        (["--json", "--svg", "x.svg"], "--json needs a value"),
        (["--json="], "--json needs a file path"),
        (["--list=yes"], "--list takes no value"),
    ])
    func badCommandLinesGiveAClearError(arguments: [String], message: String) {
        do {
            let command = try ArgumentParser.parse(arguments)
            Issue.record("\(arguments) parsed as \(command)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
            #expect(error.description.contains("--help"))
        }
        #expect(ArgumentError.exitCode == 2)
    }
}
