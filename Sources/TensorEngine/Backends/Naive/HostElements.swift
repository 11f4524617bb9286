/// Scalar-at-a-time access to host values, converting between storage types and the four
/// computation domains (`Float`, `Double`, `Int32`, `Int64`). Clear rather than fast: the naive
/// backend's tool.
///
/// Stores convert as a cast does: floats to integers truncate toward zero and saturate (NaN gives
/// 0), integers to narrower integers wrap (keeping the low bits, so wrapped arithmetic done in
/// `Int64` stores as wrapped `Int32` arithmetic), anything to `Bool` tests `!= 0`.
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

    private func load<T>(_ offset: Int, as _: T.Type) -> T { base.assumingMemoryBound(to: T.self)[offset] }
    private func store<T>(_ value: T, _ offset: Int) { base.assumingMemoryBound(to: T.self)[offset] = value }

    package func float(_ offset: Int) -> Float {
        switch type {
        case .float32: load(offset, as: Float.self)
        case .float16: Float(load(offset, as: Float16.self))
        case .float64: Float(load(offset, as: Double.self))
        case .int32: Float(load(offset, as: Int32.self))
        case .int64: Float(load(offset, as: Int64.self))
        case .bool: load(offset, as: Bool.self) ? 1 : 0
        }
    }

    /// The value as a `Double` (exact for every type but `Int64` beyond 2^53).
    package func double(_ offset: Int) -> Double {
        switch type {
        case .float64: load(offset, as: Double.self)
        case .int64: Double(load(offset, as: Int64.self))
        case .float32, .float16, .int32, .bool: Double(float(offset))
        }
    }

    package func int(_ offset: Int) -> Int32 {
        switch type {
        case .float32, .float16, .float64: Int32(converting: double(offset))
        case .int32: load(offset, as: Int32.self)
        case .int64: Int32(truncatingIfNeeded: load(offset, as: Int64.self))
        case .bool: load(offset, as: Bool.self) ? 1 : 0
        }
    }

    /// The value as an `Int64` (floats truncated toward zero and saturated).
    package func long(_ offset: Int) -> Int64 {
        switch type {
        case .int64: load(offset, as: Int64.self)
        case .float32, .float16, .float64: Int64(converting: double(offset))
        case .int32, .bool: Int64(int(offset))
        }
    }

    /// The value as ordered for extremes and sorting: exact for every type.
    func ordered(_ offset: Int) -> OrderedScalar {
        type.isFloatingPoint ? .float(double(offset)) : .integer(long(offset))
    }

    func setFloat(_ value: Float, _ offset: Int) {
        switch type {
        case .float32: store(value, offset)
        case .float16: store(Float16(value), offset)
        case .float64: store(Double(value), offset)
        case .int32: store(Int32(converting: Double(value)), offset)
        case .int64: store(Int64(converting: Double(value)), offset)
        case .bool: store(value != 0, offset)
        }
    }

    func setDouble(_ value: Double, _ offset: Int) {
        switch type {
        case .float64: store(value, offset)
        case .float32: store(Float(value), offset)
        // Through `Float` would round twice; `Float16(Double)` rounds once.
        case .float16: store(Float16(value), offset)
        case .int32: store(Int32(converting: value), offset)
        case .int64: store(Int64(converting: value), offset)
        case .bool: store(value != 0, offset)
        }
    }

    func setInt(_ value: Int32, _ offset: Int) { setLong(Int64(value), offset) }

    func setLong(_ value: Int64, _ offset: Int) {
        switch type {
        case .float32: store(Float(value), offset)
        case .float16: store(Float16(Float(value)), offset)
        case .float64: store(Double(value), offset)
        case .int32: store(Int32(truncatingIfNeeded: value), offset)
        case .int64: store(value, offset)
        case .bool: store(value != 0, offset)
        }
    }

    /// Copies one element's bytes (same storage type on both sides).
    func copy(from source: HostElements, _ sourceOffset: Int, to offset: Int) {
        let size = type.byteCount
        (base + offset * size).copyMemory(from: source.base + sourceOffset * size, byteCount: size)
    }
}

/// A host value as extremes and sorts compare it: floats as `Double`, integers as `Int64`, so
/// that no type loses digits. Values of one tensor are all of one case.
enum OrderedScalar: Comparable {
    case float(Double)
    case integer(Int64)

    var isNaN: Bool {
        if case .float(let value) = self { return value.isNaN }
        return false
    }

    static func < (a: OrderedScalar, b: OrderedScalar) -> Bool {
        switch (a, b) {
        case (.float(let x), .float(let y)): x < y
        case (.integer(let x), .integer(let y)): x < y
        case (.float(let x), .integer(let y)): x < Double(y)
        case (.integer(let x), .float(let y)): Double(x) < y
        }
    }
}
