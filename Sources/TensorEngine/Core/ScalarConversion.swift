/// A scalar on its way from one storage type to another: floats carried as `Double` and integers
/// as `Int64`, which hold every value of the narrower types exactly.
enum WideScalar {
    case float(Double)
    case integer(Int64)
}

/// A storage type as casts convert it: NumPy's `astype` rules, which every backend follows.
///
/// Floats to integers truncate toward zero and saturate at the type's bounds (NaN gives 0);
/// integers to narrower integers keep the low bits; anything to `Bool` tests `!= 0` (NaN is
/// `true`); floats and integers to floats round to nearest once.
protocol CastScalar {
    /// The value, widened without loss.
    var wide: WideScalar { get }
    /// The value converted from a widened one.
    init(wide: WideScalar)
}

extension Float: CastScalar {
    var wide: WideScalar { .float(Double(self)) }
    init(wide: WideScalar) {
        switch wide {
        case .float(let value): self = Float(value)
        case .integer(let value): self = Float(value)
        }
    }
}

extension Float16: CastScalar {
    var wide: WideScalar { .float(Double(Float(self))) }
    init(wide: WideScalar) {
        switch wide {
        case .float(let value): self = Float16(value)
        case .integer(let value): self = Float16(Float(value))
        }
    }
}

extension Double: CastScalar {
    var wide: WideScalar { .float(self) }
    init(wide: WideScalar) {
        switch wide {
        case .float(let value): self = value
        case .integer(let value): self = Double(value)
        }
    }
}

extension Int32: CastScalar {
    var wide: WideScalar { .integer(Int64(self)) }
    init(wide: WideScalar) {
        switch wide {
        case .float(let value): self = Int32(converting: value)
        case .integer(let value): self = Int32(truncatingIfNeeded: value)
        }
    }
}

extension Int64: CastScalar {
    var wide: WideScalar { .integer(self) }
    init(wide: WideScalar) {
        switch wide {
        case .float(let value): self = Int64(converting: value)
        case .integer(let value): self = value
        }
    }
}

extension Bool: CastScalar {
    var wide: WideScalar { .integer(self ? 1 : 0) }
    init(wide: WideScalar) {
        switch wide {
        case .float(let value): self = value != 0
        case .integer(let value): self = value != 0
        }
    }
}
