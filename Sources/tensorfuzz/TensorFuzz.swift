import Foundation
import TensorEngine
import TensorEngineChecks

// The fuzz targets (FuzzChecks): built for libFuzzer by scripts/fuzz.sh, which compiles this file
// with -DTENSORFUZZ_LIBFUZZER under `--sanitize=fuzzer` (libFuzzer then provides `main` and the
// target comes from TENSORFUZZ_TARGET); built normally, the same checks replay saved inputs or
// run pseudo-random ones, without libFuzzer.

#if TENSORFUZZ_LIBFUZZER
/// What the libFuzzer build checks: a target, or one of the self-tests that scripts/fuzz.sh runs
/// first to see that a finding and a crash each leave their input (`TENSORFUZZ_TARGET`).
private enum FuzzMode {
    case target(FuzzChecks.Target)
    /// `selftest-finding`: every input is checked as a graph, then reported as a finding.
    case reportEveryInput
    /// `selftest-trap`: every input is checked as a graph, then traps.
    case trapOnEveryInput

    var name: String {
        switch self {
        case .target(let target): target.rawValue
        case .reportEveryInput: "selftest-finding"
        case .trapOnEveryInput: "selftest-trap"
        }
    }
}

private let fuzzMode: FuzzMode = {
    let modes = FuzzChecks.Target.allCases.map(FuzzMode.target) + [.reportEveryInput, .trapOnEveryInput]
    let name = ProcessInfo.processInfo.environment["TENSORFUZZ_TARGET"] ?? ""
    guard let mode = modes.first(where: { $0.name == name }) else {
        let names = modes.map(\.name).joined(separator: ", ")
        FileHandle.standardError.write(Data("tensorfuzz: set TENSORFUZZ_TARGET to one of \(names)\n".utf8))
        exit(2)
    }
    return mode
}()

/// libFuzzer's entry point: one input per call.
///
/// A finding exits the process from inside the callback, which libFuzzer reports as "fuzz target
/// exited" after writing the input to `-artifact_prefix` as `crash-<sha1>`. It used to `abort()`,
/// which left no input: the first evaluation starts the engine, whose OpenCL discovery loads
/// PoCL, and PoCL's LLVM installs its own handlers for SIGABRT and the other crash signals over
/// libFuzzer's. LLVM's handler puts libFuzzer's back and returns, which is enough for a fault
/// that recurs when the instruction runs again (a trap, a bad access), but `abort()` then dies of
/// the default action without libFuzzer seeing it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let finding: String?
    switch fuzzMode {
    case .target(let target):
        finding = FuzzChecks.check(target, bytes)
    case .reportEveryInput:
        _ = FuzzChecks.check(.graph, bytes)
        finding = "every input is a finding (self-test)"
    case .trapOnEveryInput:
        _ = FuzzChecks.check(.graph, bytes)
        // Deliberate: what a failed precondition or an index out of range in the engine does.
        preconditionFailure("every input traps (self-test)")
    }
    if let finding {
        FileHandle.standardError.write(Data("tensorfuzz finding (\(fuzzMode.name)): \(finding)\n".utf8))
        exit(1)
    }
    return 0
}
#else
/// `tensorfuzz reencode-graph STEPS FILE...` rewrites saved graph inputs written when the step
/// list had STEPS steps so that they decode to the same programs today (see
/// `RandomGraph.reencoded`);
/// `tensorfuzz TARGET PATH...` replays inputs (files, or every file in a folder);
/// `tensorfuzz TARGET --random COUNT [--seed N]` checks pseudo-random inputs and
/// `tensorfuzz TARGET --hex HEX...` the given ones (a finding prints its input so); `--verbose`
/// prints each random graph output's shape or error.
@main
enum TensorFuzz {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let verbose = arguments.firstIndex(of: "--verbose") {
            arguments.remove(at: verbose)
            FuzzChecks.report = { print($0) }
        }
        if arguments.first == "reencode-graph" {
            guard arguments.count >= 3, let steps = Int(arguments[1]), steps > 0 else {
                fail("usage: tensorfuzz reencode-graph STEPS FILE...")
            }
            for (path, bytes) in arguments.dropFirst(2).flatMap(files) {
                let rewritten = RandomGraph.reencoded(bytes, fromStepCount: steps)
                do { try Data(rewritten).write(to: URL(fileURLWithPath: path)) } catch { fail("\(path): \(error)") }
                print("\(path): \(rewritten == bytes ? "unchanged" : "rewritten")")
            }
            exit(0)
        }
        let names = FuzzChecks.Target.allCases.map(\.rawValue).joined(separator: "|")
        guard let first = arguments.first, let target = FuzzChecks.Target(rawValue: first), arguments.count >= 2 else {
            fail("usage: tensorfuzz \(names) PATH...\n       tensorfuzz \(names) --random COUNT [--seed N]")
        }
        let inputs: [(String, [UInt8])]
        if arguments[1] == "--random" {
            guard arguments.count >= 3, let count = Int(arguments[2]), count > 0 else { fail("--random needs a positive count") }
            let seed = arguments.count >= 5 && arguments[3] == "--seed" ? UInt64(arguments[4]) ?? 1 : 1
            inputs = randomInputs(count: count, seed: seed)
        } else if arguments[1] == "--hex" {
            inputs = arguments.dropFirst(2).map { ("hex \($0)", bytes(hex: $0)) }
        } else {
            inputs = arguments.dropFirst().flatMap(files)
        }
        var findings = 0
        for (name, bytes) in inputs {
            if let finding = FuzzChecks.check(target, bytes) {
                findings += 1
                print("\(name): \(finding)")
                print("  input: --hex \(bytes.map { String(format: "%02x", $0) }.joined())")
            }
        }
        print("tensorfuzz \(target.rawValue): \(inputs.count) inputs, \(findings) findings")
        exit(findings == 0 ? 0 : 1)
    }

    static func files(_ path: String) -> [(String, [UInt8])] {
        let url = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { fail("\(path): no such file") }
        let urls = isFolder.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? []).sorted { $0.path < $1.path }
            : [url]
        return urls.compactMap { file in (try? Data(contentsOf: file)).map { (file.path, Array($0)) } }
    }

    /// Inputs of 8 to 72 bytes from a SplitMix64 generator.
    static func randomInputs(count: Int, seed: UInt64) -> [(String, [UInt8])] {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return (0..<count).map { index in
            let length = 8 + Int(next() % 65)
            return ("random #\(index) (seed \(seed))", (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) })
        }
    }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map { index in
            UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) ?? 0
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("tensorfuzz: \(message)\n".utf8))
        exit(2)
    }
}
#endif
