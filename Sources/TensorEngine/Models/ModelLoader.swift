import Foundation

/// Finds what kind of model a URL holds and loads its implementation.
enum ModelLoader {
    /// The implementation of the model at `url`: an ONNX file, a folder compiled by
    /// ``Model/compileModel(at:)``, a Core ML package or model file (a package under any name: a
    /// compiled one moved to `NAME.mlmodelc`), or a sentence-embedding folder.
    ///
    /// - Throws: ``FileFormatError/Kind/unreadable`` for a missing file,
    ///   ``ModelError/Kind/unsupportedType`` for a kind of model the engine does not read, and
    ///   what the format's reader throws.
    static func implementation(at url: URL, configuration: ModelConfiguration) throws -> any ModelImplementation {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw FileFormatError(.unreadable, format: "model", path: url.path, message: "no file or folder is there")
        }
        let name = url.lastPathComponent
        if isDirectory.boolValue, let compiled = try CompiledModel.source(in: url) {
            return try ONNXModel(contentsOf: compiled, configuration: configuration)
        }
        if CoreMLPackage.isPackage(url) { return try CoreMLModel(contentsOf: url, configuration: configuration) }
        switch url.pathExtension.lowercased() {
        case "mlpackage", "mlmodel": return try CoreMLModel(contentsOf: url, configuration: configuration)
        case "mlmodelc":
            throw ModelError(
                .unsupportedType,
                "\(name) is a Core ML model compiled for Apple's runtime, whose format is not published; load the "
                    + ".mlpackage or .mlmodel it was compiled from (or what Model.compileModel(at:) made of it)")
        default: break
        }
        if isDirectory.boolValue {
            let has = { (file: String) in FileManager.default.fileExists(atPath: url.appendingPathComponent(file).path)
            }
            if has("config.json"), has("vocab.txt") { return try SentenceEmbedder(folder: url) }
            throw ModelError(
                .unsupportedType,
                "the folder \(name) holds neither a compiled model (manifest.json) nor a sentence-embedding "
                    + "model (config.json, vocab.txt)")
        }
        return try ONNXModel(contentsOf: url, configuration: configuration)
    }
}
