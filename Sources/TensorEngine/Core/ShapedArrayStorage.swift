/// The memory behind one or more ``ShapedArray`` values: scalars an array allocated itself, or a
/// tensor's result in the engine's host buffer, shared read-only.
///
/// Arrays hold it by reference and copy it before their first write unless they are its only
/// holder and it is their own (copy-on-write); a shared engine result is never written, so a
/// tensor's stored result stays what it was.
final class ShapedArrayStorage<Scalar: TensorScalar>: @unchecked Sendable {
    /// The first scalar.
    let base: UnsafeMutablePointer<Scalar>
    /// The number of scalars from ``base``.
    let count: Int
    /// The engine buffer the scalars lie in, kept alive here; `nil` when this storage allocated them.
    let engineBuffer: HostBuffer?

    /// Uninitialised room for `count` scalars, 64-byte aligned like the engine's buffers. A failed
    /// allocation traps, as an `Array`'s does.
    init(uninitializedCount count: Int) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: Swift.max(count, 1) * MemoryLayout<Scalar>.stride, alignment: 64)
        self.base = raw.bindMemory(to: Scalar.self, capacity: Swift.max(count, 1))
        self.count = count
        self.engineBuffer = nil
    }

    /// A copy of `scalars`.
    convenience init(copying scalars: UnsafeBufferPointer<Scalar>) {
        self.init(uninitializedCount: scalars.count)
        if let source = scalars.baseAddress { base.initialize(from: source, count: scalars.count) }
    }

    /// The scalars of an engine result, `count` of them from element `offset` of `buffer`, without
    /// a copy.
    init(sharing buffer: HostBuffer, offset: Int, count: Int) {
        self.base = buffer.elements(as: Scalar.self) + offset
        self.count = count
        self.engineBuffer = buffer
    }

    /// Whether arrays may write this storage in place (once they are its only holder).
    var isOwnMemory: Bool { engineBuffer == nil }

    deinit {
        guard engineBuffer == nil else { return }
        base.deinitialize(count: count)
        UnsafeMutableRawPointer(base).deallocate()
    }
}
