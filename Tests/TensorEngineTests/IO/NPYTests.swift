import Foundation
import Testing
@testable import TensorEngine

/// A `.npy` file's bytes built by hand: a version, a header text and raw data.
func npyBytes(version: UInt8 = 1, header: String, data: [UInt8]) -> Data {
    var bytes = Data(NPYHeader.magic + [version, 0])
    let length = header.utf8.count
    let lengthBytes = version == 1 ? 2 : 4
    bytes.append(contentsOf: (0..<lengthBytes).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) })
    bytes.append(contentsOf: Array(header.utf8))
    bytes.append(contentsOf: data)
    return bytes
}

func floatBytes(_ values: [Float]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }

func temporaryURL(_ name: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("tensorengine-\(UUID().uuidString)-\(name)")
}

@Suite("NPY") struct NPYTests {
    @Test func roundTripsEverySupportedType() async throws {
        let floats = ShapedArray<Float>(scalars: [1, -2.5, 3, 4, 5, 6], shape: [2, 3])!
        #expect(try ShapedArray<Float>(npyData: floats.npyData) == floats)
        let halves = ShapedArray<Float16>(scalars: [1, 0.5, -2], shape: [3])!
        #expect(try ShapedArray<Float16>(npyData: halves.npyData) == halves)
        let ints = ShapedArray<Int32>(scalars: [7, -8, .max, .min], shape: [2, 1, 2])!
        #expect(try ShapedArray<Int32>(npyData: ints.npyData) == ints)
        let bools = ShapedArray<Bool>(scalars: [true, false, true], shape: [3])!
        #expect(try ShapedArray<Bool>(npyData: bools.npyData) == bools)
        let scalar = ShapedArray<Float>(scalar: 42)
        #expect(try ShapedArray<Float>(npyData: scalar.npyData) == scalar)
        let empty = ShapedArray<Int32>(scalars: [], shape: [0, 3])!
        #expect(try ShapedArray<Int32>(npyData: empty.npyData) == empty)
    }

    @Test func writesNumPyCompatibleHeaderAlignedTo64() throws {
        let data = ShapedArray<Float>(scalars: [1, 2, 3], shape: [3])!.npyData
        let text = String(decoding: data[10..<128], as: UTF8.self)
        #expect(text.hasPrefix("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"))
        #expect(text.hasSuffix("\n"))
        #expect(data.count == 128 + 12)
    }

    @Test func readsFileIntoTensorWithoutCopyingAlignedData() async throws {
        let url = temporaryURL("x.npy")
        defer { try? FileManager.default.removeItem(at: url) }
        let array = ShapedArray<Float>(scalars: (0..<12).map(Float.init), shape: [3, 4])!
        try array.write(npy: url)
        let tensor = try Tensor(npyFile: url)
        #expect(tensor.shape == [3, 4])
        #expect(tensor.isBorrowingMemory)
        #expect(try await (tensor * 2).shapedArray(of: Float.self).scalars == array.scalars.map { $0 * 2 })
        let written = temporaryURL("y.npy")
        defer { try? FileManager.default.removeItem(at: written) }
        try await (tensor + 1).write(npy: written)
        #expect(try ShapedArray<Float>(npyFile: written).scalars == array.scalars.map { $0 + 1 })
    }

    @Test func readsVersionTwoAndThreeHeaders() throws {
        for version: UInt8 in [2, 3] {
            let data = npyBytes(version: version, header: "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", data: floatBytes([1, 2]))
            #expect(try ShapedArray<Float>(npyData: data).scalars == [1, 2])
        }
        let unpadded = npyBytes(header: "{\"descr\":\"<i4\",\"shape\":(1, 1),\"fortran_order\":False}", data: [5, 0, 0, 0])
        #expect(try ShapedArray<Int32>(npyData: unpadded).scalars == [5])
    }

    // Computed, not a stored `static let`: Data keeps its storage reference in an enum payload
    // whose spare pointer bits carry the case tag, so LeakSanitizer cannot see a long-lived
    // global's Data values as reachable and reports them as leaks at exit.
    static var malformed: [(String, Data, FileFormatError.Kind)] {
        [
            ("empty", Data(), .truncated),
            ("bad magic", Data("NOTNUMPYxxxxxxxx".utf8), .badMagic),
            ("version 4", npyBytes(version: 4, header: "{}", data: []), .unsupportedVersion),
            ("header longer than file", Data(NPYHeader.magic + [1, 0, 0xFF, 0x7F]) + Data("{".utf8), .truncated),
            ("fortran order", npyBytes(header: "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", data: floatBytes([1, 2, 3, 4])), .fortranOrder),
            ("object array", npyBytes(header: "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", data: [0, 0, 0, 0, 0, 0, 0, 0]), .objectArray),
            ("complex64", npyBytes(header: "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data: [0, 0, 0, 0, 0, 0, 0, 0]), .unsupportedDType),
            ("big-endian int64", npyBytes(header: "{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", data: [0, 0, 0, 0, 0, 0, 0, 1]), .bigEndian),
            ("structured", npyBytes(header: "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", data: [0, 0, 0, 0]), .unsupportedDType),
            ("big endian", npyBytes(header: "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", data: [0, 0, 0, 0]), .bigEndian),
            ("truncated data", npyBytes(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data: floatBytes([1, 2])), .truncated),
            ("lying huge shape", npyBytes(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", data: floatBytes([1])), .truncated),
            ("overflowing shape", npyBytes(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", data: []), .invalidShape),
            ("negative shape", npyBytes(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", data: []), .invalidShape),
            ("trailing data", npyBytes(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", data: floatBytes([1, 2])), .trailingData),
            ("not a dictionary", npyBytes(header: "[1, 2]", data: []), .badHeader),
            ("unterminated", npyBytes(header: "{'descr': '<f4", data: []), .badHeader),
            ("missing shape", npyBytes(header: "{'descr': '<f4', 'fortran_order': False}", data: []), .badHeader),
            ("deep nesting", npyBytes(header: String(repeating: "(", count: 10_000), data: []), .badHeader),
            ("bad bool byte", npyBytes(header: "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", data: [1, 7]), .invalidValue),
        ]
    }

    @Test(arguments: 0..<NPYTests.malformed.count)
    func rejectsMalformedFileWithTypedError(_ index: Int) {
        let (name, data, kind) = NPYTests.malformed[index]
        do {
            let tensor = try Tensor(npyData: data)
            Issue.record("\(name): accepted as \(tensor)")
        } catch {
            #expect(error.kind == kind, "\(name): \(error)")
        }
    }

    @Test func rejectsWrongScalarTypeAndMissingFile() {
        let data = ShapedArray<Int32>(scalars: [1], shape: [1])!.npyData
        #expect(throws: FileFormatError.self) { try ShapedArray<Float>(npyData: data) }
        do {
            _ = try Tensor(npyFile: URL(fileURLWithPath: "/nonexistent/x.npy"))
            Issue.record("a missing file was read")
        } catch {
            #expect(error.kind == .unreadable)
            #expect(error.path == "/nonexistent/x.npy")
        }
    }
}
