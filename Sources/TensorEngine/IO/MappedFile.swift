#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A whole file mapped read-only (copy-on-write) into memory, unmapped when the last reference goes.
///
/// Tensors read from the file may borrow its pages (``HostBuffer/init(borrowing:byteCount:owner:)``),
/// so the mapping lives as long as any of them.
final class MappedFile: @unchecked Sendable {
    /// The first byte of the mapping (`nil` for an empty file).
    let base: UnsafeMutableRawPointer?
    /// The file's length in bytes.
    let byteCount: Int
    /// The file's path, for errors.
    let path: String

    /// Maps the file at `url`, or throws ``FileFormatError/Kind/unreadable``.
    init(url: URL, format: String) throws(FileFormatError) {
        path = url.path
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else {
            throw FileFormatError(.unreadable, format: format, path: url.path, message: "cannot open the file: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw FileFormatError(.unreadable, format: format, path: url.path, message: "not a regular file")
        }
        byteCount = Int(status.st_size)
        guard byteCount > 0 else {
            base = nil
            return
        }
        let mapped = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else {
            throw FileFormatError(.unreadable, format: format, path: url.path, message: "cannot map the file: \(String(cString: strerror(errno)))")
        }
        base = mapped
    }

    deinit {
        if let base { munmap(base, byteCount) }
    }

    /// The mapped bytes (empty for an empty file).
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: base == nil ? 0 : byteCount) }
}

extension Tensor {
    /// A constant tensor over a value that already holds its data: usually row-major host memory;
    /// a state's cache may be a prefix of a growable buffer, or in a device's memory, and is read
    /// by users only through a host copy (``State/tensor(for:)``).
    static func constant(value: Value, op: String) -> Tensor {
        let signature = TensorSignature(shape: value.shape, scalarType: value.scalarType)
        return Tensor(node: Node(op: .constant, inputs: [], signature: signature, location: nil, data: value))
    }

    /// A constant tensor of `type` and `shape` whose row-major data are `bytes`.
    ///
    /// When the bytes are aligned to the element size inside `owner`'s memory they are wrapped
    /// without copying (every host backend reads such memory correctly: the naive one element by
    /// element, the openblas one with unaligned vector loads and BLAS); otherwise they are copied
    /// once into a fresh 64-byte-aligned host buffer.
    static func constant(
        bytes: UnsafeRawBufferPointer, shape: [Int], type: ScalarType, owner: (any AnyObject & Sendable)?, op: String
    ) throws(TensorError) -> Tensor {
        let layout = Layout(contiguous: shape)
        if let owner, let start = bytes.baseAddress, Int(bitPattern: start) % type.byteCount == 0 {
            let buffer = HostBuffer(borrowing: UnsafeMutableRawPointer(mutating: start), byteCount: bytes.count, owner: owner)
            return constant(value: Value(buffer: buffer, layout: layout, scalarType: type), op: op)
        }
        let buffer = try HostBuffer(byteCount: bytes.count, op: op)
        if let start = bytes.baseAddress, bytes.count > 0 { buffer.pointer.copyMemory(from: start, byteCount: bytes.count) }
        return constant(value: Value(buffer: buffer, layout: layout, scalarType: type), op: op)
    }

    /// Whether the tensor is a constant whose data borrow memory owned by another object (a mapping).
    var isBorrowingMemory: Bool {
        guard let buffer = node?.storedResult?.buffer as? HostBuffer else { return false }
        return buffer.owner != nil
    }
}
