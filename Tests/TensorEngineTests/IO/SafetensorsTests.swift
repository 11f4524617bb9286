import Foundation
import Testing
@testable import TensorEngine

/// A safetensors file's bytes: a JSON header (padded with spaces to `align`) and a data section.
func safetensorsBytes(header: String, data: [UInt8], align: Int = 8, declaredLength: UInt64? = nil) -> Data {
    var json = Array(header.utf8)
    while (8 + json.count) % align != 0 { json.append(0x20) }
    let length = declaredLength ?? UInt64(json.count)
    var bytes = Data((0..<8).map { UInt8(truncatingIfNeeded: length >> (8 * UInt64($0))) })
    bytes.append(contentsOf: json)
    bytes.append(contentsOf: data)
    return bytes
}

func writeTemporary(_ data: Data, _ name: String) throws -> URL {
    let url = temporaryURL(name)
    try data.write(to: url)
    return url
}

@Suite("Safetensors") struct SafetensorsTests {
    @Test func loadsTensorsOfEverySupportedType() async throws {
        let header = """
        {"__metadata__": {"format": "pt"},
         "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
         "h": {"dtype": "F16", "shape": [2], "data_offsets": [16, 20]},
         "i": {"dtype": "I32", "shape": [1], "data_offsets": [20, 24]},
         "b": {"dtype": "BF16", "shape": [2], "data_offsets": [24, 28]},
         "m": {"dtype": "BOOL", "shape": [2], "data_offsets": [28, 30]},
         "p": {"dtype": "I64", "shape": [1], "data_offsets": [32, 40]}}
        """
        let half: [Float16] = [1.5, -2]
        var data = floatBytes([1, 2, 3, 4]) + half.withUnsafeBytes { Array($0) } + [9, 0, 0, 0]
        data += [0x80, 0x3F, 0x20, 0xC0]  // bfloat16 1.0 and -2.5
        data += [1, 0, 0, 0] + [7, 0, 0, 0, 0, 0, 0, 0]
        let url = try writeTemporary(safetensorsBytes(header: header, data: data, align: 64), "a.safetensors")
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try SafetensorsFile(url: url)
        #expect(file.tensorNames == ["b", "h", "i", "m", "p", "w"])
        #expect(file.metadata == ["format": "pt"])
        let w = try file.tensor(named: "w")
        #expect(w.isBorrowingMemory)
        #expect(try await w.shapedArray(of: Float.self) == ShapedArray(scalars: [1, 2, 3, 4], shape: [2, 2])!)
        #expect(try await file.tensor(named: "h").shapedArray(of: Float16.self).scalars == half)
        #expect(try await file.tensor(named: "i").shapedArray(of: Int32.self).scalars == [9])
        #expect(try await file.tensor(named: "b").shapedArray(of: Float.self).scalars == [1, -2.5])
        #expect(try await file.tensor(named: "m").shapedArray(of: Bool.self).scalars == [true, false])
        #expect(throws: FileFormatError.self) { try file.tensor(named: "p") }
        #expect(throws: FileFormatError.self) { try file.tensor(named: "missing") }
        #expect(try file.tensors().keys.sorted() == ["b", "h", "i", "m", "w"])
    }

    @Test func copiesUnalignedDataAndOutlivesTheFileObject() async throws {
        let header = #"{"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "m": {"dtype": "BOOL", "shape": [1], "data_offsets": [4, 5]}, "h": {"dtype": "F16", "shape": [1], "data_offsets": [5, 7]}}"#
        let half: [Float16] = [3]
        let data = floatBytes([2]) + [1] + half.withUnsafeBytes { Array($0) }
        let url = try writeTemporary(safetensorsBytes(header: header, data: data, align: 64), "b.safetensors")
        defer { try? FileManager.default.removeItem(at: url) }
        var tensors: [String: Tensor] = [:]
        do {
            let file = try SafetensorsFile(url: url)
            tensors = try file.tensors()
        }
        #expect(tensors["x"]?.isBorrowingMemory == true)
        #expect(tensors["m"]?.isBorrowingMemory == true)
        #expect(tensors["h"]?.isBorrowingMemory == false)
        #expect(try await tensors["x"]?.shapedArray(of: Float.self).scalars == [2])
        #expect(try await tensors["m"]?.shapedArray(of: Bool.self).scalars == [true])
        #expect(try await tensors["h"]?.shapedArray(of: Float16.self).scalars == half)
    }

    static let oneFloat = floatBytes([1])
    // Computed, not a stored `static let`: Data keeps its storage reference in an enum payload
    // whose spare pointer bits carry the case tag, so LeakSanitizer cannot see a long-lived
    // global's Data values as reachable and reports them as leaks at exit.
    static var malformed: [(String, Data, FileFormatError.Kind)] {
        [
            ("empty", Data(), .truncated),
            ("short length", Data([1, 0, 0]), .truncated),
            ("header length past the end", safetensorsBytes(header: "{}", data: [], declaredLength: 1000), .truncated),
            ("absurd header length", safetensorsBytes(header: "{}", data: [], declaredLength: UInt64.max), .badHeader),
            ("bad JSON", safetensorsBytes(header: "{\"w\": [", data: []), .badJSON),
            ("JSON array", safetensorsBytes(header: "[1, 2]", data: []), .badJSON),
            ("entry not an object", safetensorsBytes(header: #"{"w": 3}"#, data: []), .badHeader),
            ("unknown dtype", safetensorsBytes(header: #"{"w": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 4]}}"#, data: oneFloat), .unsupportedDType),
            ("missing offsets", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [1]}}"#, data: oneFloat), .badHeader),
            ("fractional offset", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4.5]}}"#, data: oneFloat), .badHeader),
            ("boolean shape", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [true], "data_offsets": [0, 4]}}"#, data: oneFloat), .invalidShape),
            ("negative shape", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}"#, data: oneFloat), .invalidShape),
            ("huge shape", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}}"#, data: oneFloat), .invalidShape),
            ("lying shape", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [100000, 100000], "data_offsets": [0, 4]}}"#, data: oneFloat), .invalidOffsets),
            ("out of range", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}"#, data: oneFloat), .invalidOffsets),
            ("reversed offsets", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}}"#, data: oneFloat), .invalidOffsets),
            ("negative offset", safetensorsBytes(header: #"{"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}"#, data: oneFloat), .invalidOffsets),
            ("overlapping", safetensorsBytes(header: #"{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}"#, data: floatBytes([1, 2, 3])), .overlappingData),
            ("metadata not strings", safetensorsBytes(header: #"{"__metadata__": {"a": 1}}"#, data: []), .badHeader),
        ]
    }

    @Test(arguments: 0..<SafetensorsTests.malformed.count)
    func rejectsMalformedFileWithTypedError(_ index: Int) throws {
        let (name, data, kind) = SafetensorsTests.malformed[index]
        let url = try writeTemporary(data, "bad.safetensors")
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            let file = try SafetensorsFile(url: url)
            Issue.record("\(name): accepted with tensors \(file.tensorNames)")
        } catch {
            #expect(error.kind == kind, "\(name): \(error)")
            #expect(error.path == url.path)
        }
    }

    @Test func rejectsInvalidBooleanBytesWhenLoading() throws {
        let url = try writeTemporary(safetensorsBytes(header: #"{"m": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}"#, data: [1, 2]), "m.safetensors")
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try SafetensorsFile(url: url)
        #expect { try file.tensor(named: "m") } throws: { ($0 as? FileFormatError)?.kind == .invalidValue }
    }
}
