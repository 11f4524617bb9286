import Foundation

/// A Core ML model on disk: a `.mlpackage` folder or a `.mlmodel` file, with its specification
/// decoded and its weight files at hand.
///
/// A package holds `Manifest.json`, whose `rootModelIdentifier` names an entry of
/// `itemInfoEntries`; that entry's `path`, relative to the package's `Data` folder, is the
/// specification (`com.apple.CoreML/model.mlmodel`). Weights live beside it
/// (`weights/weight.bin`), and constants name them as `@model_path/weights/weight.bin`. A bare
/// `.mlmodel` file has no weight files: its constants must all be immediate.
final class CoreMLPackage: Sendable {
    /// The package folder or model file.
    let url: URL
    /// The specification file.
    let specificationURL: URL
    /// The decoded specification.
    let spec: CoreMLModelSpec
    /// Keeps the specification's bytes mapped while the model lives (immediate values are copied
    /// out, so nothing borrows them, but decoding errors name the file).
    private let weightFiles = Guarded<[String: MILWeightFile]>([:])

    /// Reads the package or model file at `url`.
    ///
    /// - Throws: ``FileFormatError`` for a missing or malformed manifest or specification.
    init(url: URL) throws(FileFormatError) {
        self.url = url
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw FileFormatError(.unreadable, format: "coreml", path: url.path, message: "no file or folder is there")
        }
        specificationURL = isDirectory.boolValue ? try Self.rootModel(of: url) : url
        let file = try MappedFile(url: specificationURL, format: "coreml")
        do { spec = try CoreMLModelSpec.decode(file.bytes) } catch { throw error.at(specificationURL.path) }
    }

    /// Whether `url` is a folder laid out as a Core ML package (it holds `Manifest.json`), whatever
    /// its name: a package moved to `NAME.mlmodelc` by ``Model/compileModel(at:)``'s caller too.
    static func isPackage(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
            && FileManager.default.fileExists(atPath: url.appendingPathComponent("Manifest.json").path)
    }

    /// The specification file a package's manifest names.
    private static func rootModel(of package: URL) throws(FileFormatError) -> URL {
        let manifestURL = package.appendingPathComponent("Manifest.json")
        let manifest = try JSONFile.object(manifestURL)
        func invalid(_ message: String) -> FileFormatError {
            FileFormatError(.badHeader, format: "Manifest.json", path: manifestURL.path, message: message)
        }
        guard let root = manifest["rootModelIdentifier"] as? String else {
            throw invalid("'rootModelIdentifier' is missing or not a string")
        }
        guard let entries = manifest["itemInfoEntries"] as? [String: Any], let entry = entries[root] as? [String: Any],
            let path = entry["path"] as? String
        else {
            throw invalid("'itemInfoEntries' has no entry '\(root)' with a 'path'")
        }
        let components = path.split(separator: "/")
        guard !path.hasPrefix("/"), !components.contains("..") else {
            throw invalid("the model's path '\(path)' leaves the package")
        }
        return package.appendingPathComponent("Data").appendingPathComponent(path)
    }

    /// The weight file a constant names (`@model_path/weights/weight.bin`), mapped once.
    func weightFile(named name: String) throws(FileFormatError) -> MILWeightFile {
        let prefix = "@model_path/"
        guard name.hasPrefix(prefix) else {
            throw FileFormatError(
                .badHeader, format: "coreml", path: specificationURL.path,
                message: "a constant's weight file '\(name)' is not under @model_path")
        }
        let relative = String(name.dropFirst(prefix.count))
        guard !relative.split(separator: "/").contains(".."), !relative.isEmpty else {
            throw FileFormatError(
                .badHeader, format: "coreml", path: specificationURL.path,
                message: "a constant's weight file '\(name)' leaves the model's folder")
        }
        if let known = weightFiles.withLock({ $0[relative] }) { return known }
        let fileURL = specificationURL.deletingLastPathComponent().appendingPathComponent(relative)
        let weights = try MILWeightFile(file: try MappedFile(url: fileURL, format: "coreml weights"))
        weightFiles.withLock { $0[relative] = weights }
        return weights
    }
}
