import Foundation
import Testing

/// Runs the built `tensorbench` executable (when the build has made it) on bad command lines:
/// a clear message on stderr, exit status 2, and no crash (a crash ends by signal).
@Suite struct CommandLineTests {
    static let executable: URL? = {
        // Beside the test bundle (the same build folder), else the package's debug or release build.
        let beside = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent().appendingPathComponent("tensorbench")
        // Tests/TensorBenchTests/CommandLineTests.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [beside, root.appendingPathComponent(".build/debug/tensorbench"), root.appendingPathComponent(".build/release/tensorbench")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    func run(_ arguments: [String]) throws -> (status: Int32, reason: Process.TerminationReason, stdout: String, stderr: String) {
        let process = Process()
        guard let executable = Self.executable else { throw CocoaError(.fileNoSuchFile) }
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test(.enabled(if: executable != nil, "the tensorbench executable is not built"), arguments: [
        ["--frobnicate"], ["--suite"], ["--budget", "-3"], ["--workload", "nope"], ["--from", "/nonexistent.json", "--iterations", "x"],
    ])
    func badFlagsExitWithStatusTwo(arguments: [String]) throws {
        let result = try run(arguments)
        #expect(result.reason == .exit)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("tensorbench: "))
        #expect(result.stdout.isEmpty)
    }

    @Test(.enabled(if: executable != nil, "the tensorbench executable is not built"))
    func unreadableReportExitsWithStatusOne() throws {
        let result = try run(["--from", "/nonexistent/report.json"])
        #expect(result.reason == .exit)
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read /nonexistent/report.json"))
    }

    @Test(.enabled(if: executable != nil, "the tensorbench executable is not built"))
    func helpListsEveryFlagAndExitsZero() throws {
        let result = try run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("--compare OLD.json"))
    }
}
