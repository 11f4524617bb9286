import Foundation

/// Device profiles measured by `tensorplan calibrate`, cached on disk so later processes plan with
/// measured numbers at no cost.
///
/// The file (`$TENSORENGINE_CACHE_DIR/profiles.json`, default `~/.cache/tensorengine/profiles.json`)
/// maps `backend|device name|build flavour|kernel revision` to a profile; the device name carries the library or driver version,
/// so an upgrade misses the cache instead of reusing stale numbers. An unreadable or corrupt file is
/// ignored with a warning and replaced by the next calibration.
package enum ProfileStore {
    /// 3: profiles as rows of cost terms per cost class, and seconds per recorded operation.
    /// 4: the rows' GB/s measured in cache, and the memory's beyond it (``DeviceProfile/memory``).
    /// 5: the cache's size as the device's work keeps it, the reads' rate beyond it
    /// (``MemoryTerms/readGBPerSecond``), and the long reduction on 12 MiB.
    /// 6: the shares of working sets beyond the cache read from it (``MemoryTerms/cachedShares``).
    static let schemaVersion = 6

    struct File: Codable {
        var schemaVersion: Int
        var profiles: [String: DeviceProfile]
    }

    /// The cache directory.
    package static var directory: URL {
        if let custom = ProcessInfo.processInfo.environment["TENSORENGINE_CACHE_DIR"], !custom.isEmpty {
            return URL(fileURLWithPath: custom)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/tensorengine")
    }

    package static var fileURL: URL { directory.appendingPathComponent("profiles.json") }

    /// Debug builds run the Swift kernels many times slower, so they keep profiles of their own.
    #if DEBUG
    static let buildFlavor = "debug"
    #else
    static let buildFlavor = "release"
    #endif

    /// The revision of the engine's kernels that calibrations describe. Bump it in a change that
    /// makes a backend's kernels faster or slower, so calibrations of the old kernels stop being
    /// used (a stale profile once rated openblas's elementwise work 100× too slow and sent softmax
    /// to the naive loops).
    static let kernelRevision = 11

    static func key(_ backend: BackendID, _ deviceName: String) -> String {
        "\(backend.name)|\(deviceName)|\(buildFlavor)|kernels r\(kernelRevision)"
    }

    /// The stored profiles, or none (with a warning on standard error) when the file is corrupt.
    static func load(from url: URL = fileURL, warn: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) -> [String: DeviceProfile] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        do {
            let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
            guard file.schemaVersion == schemaVersion else {
                warn("tensorengine: ignoring device profiles in \(url.path): schema \(file.schemaVersion), expected \(schemaVersion); they are measured again on first use, or by `tensorplan calibrate`")
                return [:]
            }
            return file.profiles
        } catch {
            warn("tensorengine: ignoring unreadable device profiles in \(url.path) (\(error.localizedDescription)); the first-use calibration or `tensorplan calibrate` replaces them")
            return [:]
        }
    }

    /// Adds profiles to the file, written atomically (a temporary file renamed into place).
    static func save(_ profiles: [DeviceProfile], to url: URL = fileURL) throws {
        var stored = load(from: url, warn: { _ in })
        for profile in profiles { stored[key(profile.backend, profile.deviceName)] = profile }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(File(schemaVersion: schemaVersion, profiles: stored))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }
}
