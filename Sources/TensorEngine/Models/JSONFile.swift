import Foundation

/// Reading the small JSON configuration files of a model folder.
enum JSONFile {
    /// The top-level object of a JSON file, or a typed error naming the file.
    static func object(_ url: URL) throws(FileFormatError) -> [String: Any] {
        let format = url.lastPathComponent
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw FileFormatError(.unreadable, format: format, path: url.path, message: "cannot read the file: \(error.localizedDescription)")
        }
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: data) } catch {
            throw FileFormatError(.badJSON, format: format, path: url.path, message: "not valid JSON: \(error.localizedDescription)")
        }
        guard let object = parsed as? [String: Any] else {
            throw FileFormatError(.badJSON, format: format, path: url.path, message: "the top level is not a JSON object")
        }
        return object
    }

    /// The top-level object of a JSON file, `nil` when the file does not exist.
    static func optionalObject(_ url: URL) throws(FileFormatError) -> [String: Any]? {
        FileManager.default.fileExists(atPath: url.path) ? try object(url) : nil
    }

    /// A JSON integer (not a boolean or a fraction), or `nil`.
    static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double, Swift.abs(double) < 9.0e15 else { return nil }
        return number.intValue
    }

    /// A JSON number as a `Double`, or `nil`.
    static func number(_ value: Any?) -> Double? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        return number.doubleValue
    }
}
