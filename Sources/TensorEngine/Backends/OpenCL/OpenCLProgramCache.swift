import Foundation
import Synchronization

/// A 128-bit FNV-1a style digest (two independent 64-bit lanes): names cache entries and checks
/// their payloads. Not cryptographic; collisions are harmless beyond a rebuild.
struct ContentDigest: Sendable, Hashable, CustomStringConvertible {
    private(set) var high: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var low: UInt64 = 0x8422_2325_cbf2_9ce4

    init() {}

    init(_ parts: [String]) {
        for part in parts {
            add(Array(part.utf8))
            add([0xff])
        }
    }

    mutating func add<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        for byte in bytes {
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            low = (low ^ UInt64(byte ^ 0x5a)) &* 0x0000_0100_0000_01b3
        }
    }

    var description: String { String(format: "%016llx%016llx", high, low) }
}

/// Built program binaries on disk, one file per program, keyed by a digest of the source, build
/// options, device name and driver version.
///
/// A file is `TECLBIN1`, the payload's byte count and digest, then the payload (the device binary
/// from `CL_PROGRAM_BINARIES`). Files are written to a temporary name and renamed, so a reader never
/// sees half a file; a file whose header or digest does not match is treated as missing, and the
/// rebuilt program replaces it.
final class ProgramDiskCache: Sendable {
    /// Counters for tests and diagnostics.
    struct Statistics: Sendable, Hashable {
        var hits = 0
        var misses = 0
        var corrupt = 0
        var writes = 0
    }

    let directory: URL?
    private let counters = Guarded(Statistics())

    /// `$TENSORENGINE_CACHE_DIR/opencl`, else `~/.cache/tensorengine/opencl`; `nil` when no home is known.
    static func defaultDirectory() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        if let custom = environment["TENSORENGINE_CACHE_DIR"], !custom.isEmpty {
            return URL(fileURLWithPath: custom).appendingPathComponent("opencl")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/tensorengine/opencl")
    }

    init(directory: URL?) { self.directory = directory }

    var statistics: Statistics { counters.withLock { $0 } }

    /// The cache key of a program on a device.
    static func key(source: String, options: String, device: OpenCLDeviceInfo) -> ContentDigest {
        ContentDigest([source, options, device.name, device.driverVersion, device.platformName])
    }

    func url(for key: ContentDigest) -> URL? {
        directory?.appendingPathComponent("\(key).bin")
    }

    private static let magic = Array("TECLBIN1".utf8)

    /// The cached binary, or `nil` (counted as a miss, or as corrupt when the file is unusable).
    func load(_ key: ContentDigest) -> [UInt8]? {
        guard let url = url(for: key), let data = try? Data(contentsOf: url) else {
            counters.withLock { $0.misses += 1 }
            return nil
        }
        let bytes = [UInt8](data)
        let header = Self.magic.count + 8 + 16
        guard bytes.count >= header, Array(bytes[0..<Self.magic.count]) == Self.magic else {
            markCorrupt(url)
            return nil
        }
        var count: UInt64 = 0
        for i in 0..<8 { count |= UInt64(bytes[Self.magic.count + i]) << (8 * UInt64(i)) }
        let payload = Array(bytes[header...])
        var digest = ContentDigest()
        digest.add(payload)
        guard count == UInt64(payload.count), Array(bytes[(Self.magic.count + 8)..<header]) == Self.digestBytes(digest) else {
            markCorrupt(url)
            return nil
        }
        counters.withLock { $0.hits += 1 }
        return payload
    }

    /// Marks an entry whose binary the driver rejected: removed, counted as corrupt.
    func reject(_ key: ContentDigest) {
        guard let url = url(for: key) else { return }
        markCorrupt(url)
    }

    /// Writes an entry atomically (temporary file, then rename). Failures are ignored: the cache is
    /// an optimisation, and the program is already built.
    func store(_ payload: [UInt8], for key: ContentDigest) {
        guard let directory, let url = url(for: key), !payload.isEmpty else { return }
        var digest = ContentDigest()
        digest.add(payload)
        var count = UInt64(payload.count)
        var bytes = Self.magic
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: count))
            count >>= 8
        }
        bytes += Self.digestBytes(digest) + payload
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let temporary = directory.appendingPathComponent(".\(key).\(UUID().uuidString).tmp")
            try Data(bytes).write(to: temporary)
            if rename(temporary.path, url.path) != 0 { try? FileManager.default.removeItem(at: temporary) } else {
                counters.withLock { $0.writes += 1 }
            }
        } catch {
            return
        }
    }

    private func markCorrupt(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
        counters.withLock { $0.corrupt += 1 }
    }

    private static func digestBytes(_ digest: ContentDigest) -> [UInt8] {
        let words = [digest.high, digest.low]
        return words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * UInt64($0))) } }
    }
}
