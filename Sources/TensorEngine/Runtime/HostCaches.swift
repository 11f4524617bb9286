import Foundation

/// The host CPU's caches as Linux lists them (`/sys/devices/system/cpu/cpu0/cache`): what the
/// planner needs to tell work whose bytes stay in cache from work that streams from memory.
enum HostCaches {
    /// Bytes of the largest data (or unified) cache of the first CPU, its last level; `nil` where
    /// sysfs does not say (a container without it, another system).
    static let lastLevelBytes: Int? = {
        let folder = "/sys/devices/system/cpu/cpu0/cache"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        var largest: Int?
        for entry in entries where entry.hasPrefix("index") {
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: "\(folder)/\(entry)/\(name)", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let type = read("type"), type == "Data" || type == "Unified",
                let size = read("size").flatMap(parseSize)
            else { continue }
            largest = Swift.max(largest ?? 0, size)
        }
        return largest
    }()

    /// Bytes of a sysfs cache size: `32768K`, `1M`, or a plain count of bytes; `nil` when it is
    /// none of those.
    static func parseSize(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = text.last else { return nil }
        let (digits, unit) = units[last].map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard let count = Int(digits), count > 0 else { return nil }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }
}
