/// Scalar-at-a-time access to host values, converting between storage types and the three
/// computation domains (`Float`, `Int32`, `Bool`). Clear rather than fast: the naive backend's tool.
package struct HostElements {
    let base: UnsafeMutableRawPointer
    let type: ScalarType

    package init(_ value: Value) throws(TensorError) {
        guard let buffer = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: "host access", message: "a \(value.memorySpace) buffer reached a host backend")
        }
        self.base = buffer.pointer
        self.type = value.scalarType
    }

    package init(_ buffer: HostBuffer, _ type: ScalarType) {
        self.base = buffer.pointer
        self.type = type
    }

    package func float(_ offset: Int) -> Float {
        switch type {
        case .float32: base.assumingMemoryBound(to: Float.self)[offset]
        case .float16: Float(base.assumingMemoryBound(to: Float16.self)[offset])
        case .int32: Float(base.assumingMemoryBound(to: Int32.self)[offset])
        case .bool: base.assumingMemoryBound(to: Bool.self)[offset] ? 1 : 0
        }
    }

    package func int(_ offset: Int) -> Int32 {
        switch type {
        case .float32, .float16: Int32(converting: Double(float(offset)))
        case .int32: base.assumingMemoryBound(to: Int32.self)[offset]
        case .bool: base.assumingMemoryBound(to: Bool.self)[offset] ? 1 : 0
        }
    }

    func setFloat(_ value: Float, _ offset: Int) {
        switch type {
        case .float32: base.assumingMemoryBound(to: Float.self)[offset] = value
        case .float16: base.assumingMemoryBound(to: Float16.self)[offset] = Float16(value)
        case .int32: base.assumingMemoryBound(to: Int32.self)[offset] = Int32(converting: Double(value))
        case .bool: base.assumingMemoryBound(to: Bool.self)[offset] = value != 0
        }
    }

    func setInt(_ value: Int32, _ offset: Int) {
        switch type {
        case .float32, .float16: setFloat(Float(value), offset)
        case .int32: base.assumingMemoryBound(to: Int32.self)[offset] = value
        case .bool: base.assumingMemoryBound(to: Bool.self)[offset] = value != 0
        }
    }

    /// Copies one element's bytes (same storage type on both sides).
    func copy(from source: HostElements, _ sourceOffset: Int, to offset: Int) {
        let size = type.byteCount
        (base + offset * size).copyMemory(from: source.base + sourceOffset * size, byteCount: size)
    }
}
