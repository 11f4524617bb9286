import Foundation

// Tensors over memory the caller provides: copied from `Data`, written in place by a closure, or
// wrapped without a copy.

extension Tensor {
    /// Creates a tensor by copying row-major bytes; `data.count` must be the shape's byte size.
    ///
    /// A count that does not match, or a shape that cannot exist, gives a tensor carrying the
    /// error (``TensorError/Kind/shapeMismatch``, ``TensorError/Kind/invalidArgument``,
    /// ``TensorError/Kind/tooLarge``).
    public init(
        shape: [Int], data: Data, scalarType: any TensorScalar.Type, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        let op = "init(shape:data:scalarType:)"
        let type = scalarType.scalarType
        if let failed = Tensor.byteCountFailure(shape, type, byteCount: data.count, op: op, at: location) {
            self = failed
            return
        }
        let made: Result<Tensor, TensorError> = data.withUnsafeBytes { bytes in
            Result { () throws(TensorError) in
                try Tensor.constant(bytes: bytes, shape: shape, type: type, owner: nil, op: op)
            }
        }
        switch made {
        case .success(let tensor): self = tensor
        case .failure(let error): self = Tensor(failed: error.locatedIfUnknown(location))
        }
    }

    /// Wraps row-major memory the caller owns without copying it; `deallocator` runs when the
    /// engine no longer needs the memory (every tensor and result that reads it is gone).
    ///
    /// The memory must hold `shape`'s elements of `scalarType`, aligned to the element size, and
    /// stay unchanged while the tensor lives (the engine reads it in place, possibly later, when
    /// a result is asked for). A misaligned pointer is copied once instead, and `deallocator`
    /// runs at once. A shape that cannot exist gives a tensor carrying the error, and the memory
    /// stays the caller's (the deallocator is not run).
    public init(
        bytesNoCopy bytes: UnsafeRawPointer, shape: [Int], scalarType: any TensorScalar.Type,
        deallocator: Data.Deallocator, file: StaticString = #fileID, line: UInt = #line
    ) {
        let location = SourceLocation(file, line)
        let op = "init(bytesNoCopy:shape:scalarType:deallocator:)"
        let type = scalarType.scalarType
        if let failed = Tensor.sizeFailure(shape, type, op: op, at: location) {
            self = failed
            return
        }
        let byteCount = shape.reduce(1, *) * type.byteCount
        // `Data` owns the memory from here and runs the deallocator when its last copy goes.
        let owner = BorrowedBytes(
            Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), count: byteCount, deallocator: deallocator))
        do throws(TensorError) {
            self = try Tensor.constant(
                bytes: UnsafeRawBufferPointer(start: bytes, count: byteCount), shape: shape, type: type,
                owner: owner, op: op)
        } catch {
            self = Tensor(failed: error.locatedIfUnknown(location))
        }
    }

    /// Creates a tensor whose row-major bytes `initializer` writes (every byte must be written).
    ///
    /// A shape that cannot exist, or memory that cannot be had, gives a tensor carrying the error
    /// without calling `initializer`.
    public init(
        unsafeUninitializedShape shape: [Int], scalarType: any TensorScalar.Type,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void,
        file: StaticString = #fileID, line: UInt = #line
    ) rethrows {
        let location = SourceLocation(file, line)
        let op = "init(unsafeUninitializedShape:scalarType:initializingWith:)"
        let type = scalarType.scalarType
        if let failed = Tensor.sizeFailure(shape, type, op: op, at: location) {
            self = failed
            return
        }
        let byteCount = shape.reduce(1, *) * type.byteCount
        let buffer: HostBuffer
        do throws(TensorError) { buffer = try HostBuffer(byteCount: byteCount, op: op) } catch {
            self = Tensor(failed: error.locatedIfUnknown(location))
            return
        }
        buffer.pointer.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        try initializer(UnsafeMutableRawBufferPointer(start: buffer.pointer, count: byteCount))
        self = Tensor.constant(
            value: Value(buffer: buffer, layout: Layout(contiguous: shape), scalarType: type), op: op)
    }

    /// A tensor carrying the error when `shape` of `type` cannot exist or is not `byteCount` bytes.
    static func byteCountFailure(
        _ shape: [Int], _ type: ScalarType, byteCount: Int, op: String, at location: SourceLocation?
    ) -> Tensor? {
        if let failed = sizeFailure(shape, type, op: op, at: location) { return failed }
        let expected = shape.reduce(1, *) * type.byteCount
        guard expected != byteCount else { return nil }
        return Tensor(
            failed: TensorError(
                .shapeMismatch, op: op, operandShapes: [],
                message: "\(byteCount) bytes cannot fill shape \(describe(shape)) of \(type) (\(expected) bytes)",
                location: location))
    }
}

/// Memory a caller lent the engine, held as the `Data` that runs its deallocator.
private final class BorrowedBytes: @unchecked Sendable {
    // Never read: holding it keeps the memory alive, and releasing it runs the deallocator.
    private let data: Data

    init(_ data: Data) { self.data = data }
}
