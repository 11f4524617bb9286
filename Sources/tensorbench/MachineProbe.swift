import Foundation
import TensorBenchCore
import TensorEngine

#if canImport(Glibc)
import Glibc
#endif

/// What the report records about the machine and the software measured.
enum MachineProbe {
    /// CPU model, cores, memory and OS, from `/proc` and `/etc/os-release` where they exist.
    static func describe() -> MachineDescription {
        let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = field("model name", in: cpuInfo, separator: ":") ?? "unknown CPU"
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let system = field("PRETTY_NAME", in: osRelease, separator: "=")?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "Linux"
        return MachineDescription(
            cpuModel: model, cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: Int(clamping: ProcessInfo.processInfo.physicalMemory), operatingSystem: system)
    }

    /// The value after `separator` on the first line that starts with `key`.
    private static func field(_ key: String, in text: String, separator: Character) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            guard let position = line.firstIndex(of: separator) else { continue }
            return line[line.index(after: position)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// `swift` (the toolchain's `swift --version` first line, else the compiler the tool was built
    /// with) and `openblas` (`OpenBLASCore.configuration`).
    static func versions() -> [String: String] {
        var versions = ["swift": swiftVersion()]
        versions["openblas"] = OpenBLASCore.configuration
        // The engine sets OpenBLAS's thread count per product (one per piece for products it
        // splits itself); the reference rows and the largest products use one thread per core.
        versions["openblas_threads"] = "\(ProcessInfo.processInfo.activeProcessorCount)"
        return versions
    }

    private static func swiftVersion() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            if process.terminationStatus == 0, let first = text.split(separator: "\n").first(where: { $0.contains("Swift version") }) {
                return first.trimmingCharacters(in: .whitespaces)
            }
        } catch {}
        return compilerVersion
    }

    /// The compiler this tool was built with, to the minor version known here.
    private static var compilerVersion: String {
        #if compiler(>=6.3)
        "built with Swift 6.3 or later"
        #elseif compiler(>=6.2)
        "built with Swift 6.2"
        #elseif compiler(>=6.1)
        "built with Swift 6.1"
        #else
        "built with Swift 6.0"
        #endif
    }

    /// The process's peak resident size so far, in bytes (`getrusage`; Linux reports KiB).
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        return usage.ru_maxrss * 1024
    }
}
