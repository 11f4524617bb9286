import Foundation

/// A model prepared by ``Model/compileModel(at:)``: a folder with `manifest.json`, the model's ONNX
/// graph (`model.onnx`) and its weights in `weights.bin`, each tensor at a 64-byte-aligned offset
/// so that loading maps it and wraps it in place, without a copy.
///
/// An ONNX file keeps weights in `raw_data` fields at whatever offsets the serializer reached; a
/// weight that is not aligned to its element size must be copied when it is loaded. The compiled
/// graph is the source's, byte for byte, except that each initializer of 64 bytes or more, and
/// each one already in external data, points into `weights.bin` (ONNX's external-data fields).
enum CompiledModel {
    /// The manifest's `format` value.
    static let format = "tensorengine-compiled-onnx"
    /// The manifest's version this engine writes and reads.
    static let version = 1
    /// The revision of the writer, part of a cached folder's name, so that a fix to the writer is
    /// not hidden by folders an earlier one cached (revision 2: external data under 64 bytes moves
    /// into `weights.bin` too).
    static let writerRevision = 2

    /// The ONNX file of a compiled folder, or `nil` when the folder is not one.
    ///
    /// - Throws: ``FileFormatError`` for a manifest of another version or one that names no model.
    static func source(in folder: URL) throws(FileFormatError) -> URL? {
        let manifestURL = folder.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: manifestURL) else { return nil }
        guard let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            manifest["format"] as? String == format
        else { return nil }
        guard manifest["version"] as? Int == version else {
            throw FileFormatError(
                .unsupportedVersion, format: "compiled model", path: manifestURL.path,
                message: "version \(manifest["version"] ?? "none") is not \(version)")
        }
        return folder.appendingPathComponent("model.onnx")
    }

    /// Where compiled models are cached: `$TENSORENGINE_CACHE_DIR/compiled`, else
    /// `~/.cache/tensorengine/compiled`.
    static var cacheDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["TENSORENGINE_CACHE_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path).appendingPathComponent("compiled")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/tensorengine/compiled")
    }

    /// Compiles the ONNX file at `url` into the cache (once per content hash) and returns a fresh
    /// copy of the compiled folder in a temporary directory, which the caller may move.
    static func compile(_ url: URL) throws -> URL {
        if try source(in: url) != nil {
            return try temporaryCopy(of: url, name: url.deletingPathExtension().lastPathComponent)
        }
        if CoreMLPackage.isPackage(url) || url.pathExtension.lowercased() == "mlmodel" {
            return try compileCoreML(url)
        }
        let file = try MappedFile(url: url, format: "onnx")
        var hasher = SHA256()
        hasher.update(file.bytes)
        let digest = hasher.hexDigest()
        let cached = cacheDirectory.appendingPathComponent("\(digest)-r\(writerRevision).tensorengine")
        if (try? source(in: cached)) == nil {
            // Checks the model first: a model that cannot load is not compiled.
            _ = try ONNXModel(contentsOf: url)
            try write(file: file, source: url, digest: digest, to: cached)
        }
        return try temporaryCopy(of: cached, name: url.deletingPathExtension().lastPathComponent)
    }

    /// Writes the compiled folder, atomically: into a sibling folder renamed at the end.
    private static func write(file: MappedFile, source: URL, digest: String, to folder: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        let staging = folder.deletingLastPathComponent().appendingPathComponent(".\(digest)-\(UUID().uuidString)")
        try manager.createDirectory(at: staging, withIntermediateDirectories: true)
        defer { try? manager.removeItem(at: staging) }
        var weights = Data()
        let model = try ONNXWeightRelayout(
            source: ONNXDataSource(file: file, directory: source.deletingLastPathComponent()), weightsName: "weights.bin"
        ).model(appendingWeightsTo: &weights)
        try model.write(to: staging.appendingPathComponent("model.onnx"))
        try weights.write(to: staging.appendingPathComponent("weights.bin"))
        let manifest: [String: Any] = [
            "format": format, "version": version, "source": source.lastPathComponent, "sha256": digest,
            "weightsBytes": weights.count,
        ]
        let json = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys])
        try json.write(to: staging.appendingPathComponent("manifest.json"))
        if manager.fileExists(atPath: folder.path) { try? manager.removeItem(at: folder) }
        do {
            try manager.moveItem(at: staging, to: folder)
        } catch {
            // Another process compiling the same content may have finished first: its folder serves.
            guard (try? CompiledModel.source(in: folder)) != nil else { throw error }
        }
    }

    /// A Core ML model, checked by loading it, as a package in a new temporary directory named
    /// `NAME.mlmodelc` as Core ML names its compiled models (its weight file is already laid out
    /// for mapping, so the package is linked, not rewritten); a bare `.mlmodel` becomes a package.
    private static func compileCoreML(_ url: URL) throws -> URL {
        _ = try CoreMLModel(contentsOf: url)
        let manager = FileManager.default
        let parent = manager.temporaryDirectory.appendingPathComponent("tensorengine-\(UUID().uuidString)")
        let target = parent.appendingPathComponent(url.deletingPathExtension().lastPathComponent + ".mlmodelc")
        try manager.createDirectory(at: parent, withIntermediateDirectories: true)
        if CoreMLPackage.isPackage(url) {
            do { try manager.linkItem(at: url, to: target) } catch { try manager.copyItem(at: url, to: target) }
            return target
        }
        let data = target.appendingPathComponent("Data/com.apple.CoreML")
        try manager.createDirectory(at: data, withIntermediateDirectories: true)
        try manager.copyItem(at: url, to: data.appendingPathComponent("model.mlmodel"))
        let manifest: [String: Any] = [
            "fileFormatVersion": "1.0.0", "rootModelIdentifier": "model",
            "itemInfoEntries": [
                "model": [
                    "author": "com.apple.CoreML", "description": "CoreML Model Specification", "name": "model.mlmodel",
                    "path": "com.apple.CoreML/model.mlmodel",
                ]
            ],
        ]
        let json = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys])
        try json.write(to: target.appendingPathComponent("Manifest.json"))
        return target
    }

    /// A copy of a compiled folder in a new temporary directory (hard links where the file system
    /// allows, so a large model is not copied).
    private static func temporaryCopy(of folder: URL, name: String) throws -> URL {
        let manager = FileManager.default
        let parent = manager.temporaryDirectory.appendingPathComponent("tensorengine-\(UUID().uuidString)")
        let target = parent.appendingPathComponent("\(name).tensorengine")
        try manager.createDirectory(at: target, withIntermediateDirectories: true)
        for file in ["manifest.json", "model.onnx", "weights.bin"] {
            let from = folder.appendingPathComponent(file)
            let to = target.appendingPathComponent(file)
            do { try manager.linkItem(at: from, to: to) } catch { try manager.copyItem(at: from, to: to) }
        }
        return target
    }
}

extension Model {
    /// Prepares the ONNX model at `url` for fast loading and returns the prepared folder's
    /// location in a temporary directory (Core ML's `MLModel.compileModel(at:)`): move it where it
    /// should live, and load it with ``load(contentsOf:configuration:)``. A Core ML model
    /// (`.mlpackage`, `.mlmodel`) is checked by loading it and handed back as a package named
    /// `NAME.mlmodelc`, as Core ML names compiled models, which loads under any name.
    ///
    /// The prepared form keeps every weight at an aligned offset of one file, so loading maps the
    /// weights in place instead of copying those the ONNX file left unaligned. It is cached on disk
    /// by the source's SHA-256 (`$TENSORENGINE_CACHE_DIR/compiled`, else
    /// `~/.cache/tensorengine/compiled`): compiling the same file again costs a hash and a link.
    ///
    /// - Throws: what loading the source throws (a model that cannot run is not compiled), and
    ///   file-system errors.
    public static func compileModel(at url: URL) async throws -> URL {
        try await Model.offPool { try CompiledModel.compile(url) }.value
    }
}
