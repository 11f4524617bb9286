/// The element types a ``Tensor`` can hold.
///
/// `ScalarType` is the engine's internal, exhaustive description of an element type. The public API
/// speaks in Swift types (`Float.self`, `Int32.self`, ...) through ``TensorScalar``, as Core ML's
/// `MLTensor` does; every Swift type maps to exactly one case here.
public enum ScalarType: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// 32-bit IEEE 754 floating point (`Float`).
    case float32
    /// 16-bit IEEE 754 floating point (`Float16`). Stored as 16 bits; CPU arithmetic goes through `Float`.
    case float16
    /// 32-bit signed integer (`Int32`). Arithmetic wraps on overflow, as NumPy's does.
    case int32
    /// Boolean, stored as one byte (0 or 1).
    case bool
    /// 64-bit signed integer (`Int64`): ONNX's and PyTorch's index type. Arithmetic wraps on
    /// overflow, as NumPy's does.
    case int64
    /// 64-bit IEEE 754 floating point (`Double`).
    case float64

    /// Hashes the case, not its name (a `String` raw value would otherwise be hashed each time a
    /// signature goes into a plan key or a set).
    public func hash(into hasher: inout Hasher) { hasher.combine(caseNumber) }

    /// The case's position, 0 to 5: what hashing and ``ScalarTypeSet`` use in place of the name.
    var caseNumber: UInt8 {
        switch self {
        case .float32: 0
        case .float16: 1
        case .int32: 2
        case .bool: 3
        case .int64: 4
        case .float64: 5
        }
    }

    /// The number of bytes one element occupies in memory.
    public var byteCount: Int {
        switch self {
        case .int64, .float64: 8
        case .float32, .int32: 4
        case .float16: 2
        case .bool: 1
        }
    }

    /// Whether the type is a floating-point type.
    public var isFloatingPoint: Bool {
        switch self {
        case .float32, .float16, .float64: true
        case .int32, .int64, .bool: false
        }
    }

    /// Whether arithmetic (`+`, `*`, sums, ...) is defined for the type.
    public var isNumeric: Bool {
        switch self {
        case .float32, .float16, .float64, .int32, .int64: true
        case .bool: false
        }
    }

    /// The Swift type that represents this scalar type.
    public var swiftType: any TensorScalar.Type {
        switch self {
        case .float32: Float.self
        case .float16: Float16.self
        case .int32: Int32.self
        case .bool: Bool.self
        case .int64: Int64.self
        case .float64: Double.self
        }
    }

    /// The name NumPy uses for the type (`float32`, `float16`, `int32`, `bool`, `int64`, `float64`).
    public var description: String { rawValue }
}

/// A Swift type that can be the element type of a ``Tensor`` or ``ShapedArray``.
///
/// `Float`, `Float16`, `Int32`, `Bool`, `Int64` and `Double` conform. Plain literals make `Float`
/// tensors, as in MLTensor: the initializers that take `Float` are preferred to the generic ones. The protocol is not meant for conformance outside
/// the engine: each conforming type must correspond to one ``ScalarType`` case.
public protocol TensorScalar: Sendable, Equatable {
    /// The engine's scalar type for this Swift type.
    static var scalarType: ScalarType { get }
    /// The zero of the type (`false` for `Bool`).
    static var zero: Self { get }
    /// Converts a `Double` to this type, rounding to nearest for floating point, truncating toward zero
    /// (and saturating at the type's bounds) for integers, and testing `!= 0` for `Bool`.
    init(converting value: Double)
    /// The value as a `Double` (`Bool` gives 0 or 1).
    var doubleValue: Double { get }
}

extension Float: TensorScalar {
    /// ``ScalarType/float32``.
    public static var scalarType: ScalarType { .float32 }
    /// Converts with rounding to nearest.
    public init(converting value: Double) { self = Float(value) }
    /// The value widened to `Double`.
    public var doubleValue: Double { Double(self) }
}

extension Float16: TensorScalar {
    /// ``ScalarType/float16``.
    public static var scalarType: ScalarType { .float16 }
    /// Converts with rounding to nearest.
    public init(converting value: Double) { self = Float16(Float(value)) }
    /// The value widened to `Double`.
    public var doubleValue: Double { Double(Float(self)) }
}

extension Int32: TensorScalar {
    /// ``ScalarType/int32``.
    public static var scalarType: ScalarType { .int32 }
    /// Converts by truncating toward zero, saturating at the type's bounds; NaN gives 0.
    public init(converting value: Double) { self = Int32.saturating(value) }
    /// The value as a `Double` (exact).
    public var doubleValue: Double { Double(self) }
}

extension Int64: TensorScalar {
    /// ``ScalarType/int64``.
    public static var scalarType: ScalarType { .int64 }
    /// Converts by truncating toward zero, saturating at the type's bounds; NaN gives 0.
    public init(converting value: Double) { self = Int64.saturating(value) }
    /// The value as a `Double` (exact up to 2^53 in magnitude, rounded to nearest beyond).
    public var doubleValue: Double { Double(self) }
}

extension FixedWidthInteger where Self: SignedInteger {
    /// `value` truncated toward zero and saturated at the type's bounds; NaN gives 0.
    ///
    /// `Double(max)` is exact for `Int32` and rounds up to 2^63 for `Int64`, the first `Double`
    /// past it; below those bounds every `Double` truncates to a value of the type.
    static func saturating(_ value: Double) -> Self {
        if value.isNaN { return 0 }
        if value >= Double(Self.max) { return .max }
        if value <= Double(Self.min) { return .min }
        return Self(value.rounded(.towardZero))
    }
}

extension Double: TensorScalar {
    /// ``ScalarType/float64``.
    public static var scalarType: ScalarType { .float64 }
    /// The value itself.
    public init(converting value: Double) { self = value }
    /// The value itself.
    public var doubleValue: Double { self }
}

extension Bool: TensorScalar {
    /// ``ScalarType/bool``.
    public static var scalarType: ScalarType { .bool }
    /// `false`.
    public static var zero: Bool { false }
    /// `true` for any non-zero value (NaN included).
    public init(converting value: Double) { self = value != 0 }
    /// 1 for `true`, 0 for `false`.
    public var doubleValue: Double { self ? 1 : 0 }
}

/// A set of scalar types as bits: what an op accepts, checked on every op a graph records, so it
/// is built and tested without hashing or allocation.
package struct ScalarTypeSet: Sendable, Equatable, ExpressibleByArrayLiteral {
    private var bits: UInt8 = 0

    package init(arrayLiteral types: ScalarType...) {
        for type in types { bits |= 1 << type.caseNumber }
    }

    func contains(_ type: ScalarType) -> Bool { bits & (1 << type.caseNumber) != 0 }
}
