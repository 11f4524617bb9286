extension Tensor {
    /// Records a binary elementwise op after broadcasting the operands to a common shape.
    static func binary(_ kind: OpKind, _ a: Tensor, _ b: Tensor, at location: SourceLocation?) -> Tensor {
        if let first = a.node, let second = b.node {
            if kind == .multiply, let gelu = recognizedGELU(first, second, at: location) { return gelu }
            // Operands of one shape, the common case: nothing to broadcast.
            if first.signature.shape == second.signature.shape { return record(Op(kind), first, second, at: location) }
        }
        if a.error != nil { return a }
        if b.error != nil { return b }
        guard let shape = Op.broadcastShape(a.shape, b.shape) else {
            return Tensor(
                failed: TensorError(
                    .shapeMismatch, op: kind.name, operandShapes: [a.shape, b.shape],
                    message: "shapes \(describe(a.shape)) and \(describe(b.shape)) cannot be broadcast",
                    location: location))
        }
        return record(
            Op(kind), [a.broadcastIfNeeded(to: shape, at: location), b.broadcastIfNeeded(to: shape, at: location)],
            at: location)
    }

    /// Records a binary op with a scalar operand converted to the tensor's scalar type.
    static func binary(
        _ kind: OpKind, _ a: Tensor, scalar: Double, scalarOnLeft: Bool = false, at location: SourceLocation?
    ) -> Tensor {
        guard let node = a.node else { return a }
        let signature = node.signature
        // Shaped like a one-element tensor already (`[1]`, `[1, 1]`): no broadcast node then,
        // which would double the ops a chain of tiny steps records.
        let ones = signature.shape.allSatisfy { $0 == 1 } ? signature.shape : []
        let s = Tensor.scalar(scalar, signature.scalarType, shape: ones)
        return scalarOnLeft ? binary(kind, s, a, at: location) : binary(kind, a, s, at: location)
    }

    func broadcastIfNeeded(to shape: [Int], at location: SourceLocation?) -> Tensor {
        self.shape == shape ? self : Tensor.record(.broadcast(shape), [self], at: location)
    }

    /// Adds two tensors elementwise, broadcasting their shapes as NumPy does.
    @_disfavoredOverload
    public static func + (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.add, lhs, rhs, at: nil) }
    /// Subtracts elementwise, with broadcasting.
    @_disfavoredOverload
    public static func - (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.subtract, lhs, rhs, at: nil) }
    /// Multiplies elementwise, with broadcasting.
    @_disfavoredOverload
    public static func * (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.multiply, lhs, rhs, at: nil) }
    /// Divides elementwise, with broadcasting. Integer division truncates toward zero; `x / 0` is 0.
    @_disfavoredOverload
    public static func / (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.divide, lhs, rhs, at: nil) }

    /// The remainder of elementwise division, with broadcasting: truncated, with the dividend's
    /// sign, as Swift's `%` and `truncatingRemainder(dividingBy:)` (an integer `x % 0` is 0, a
    /// float one NaN).
    @_disfavoredOverload
    public static func % (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.remainder, lhs, rhs, at: nil) }
    /// The remainder of dividing every element by a scalar.
    public static func % (lhs: Tensor, rhs: Double) -> Tensor { binary(.remainder, lhs, scalar: rhs, at: nil) }
    /// The remainder of dividing a scalar by every element.
    public static func % (lhs: Double, rhs: Tensor) -> Tensor {
        binary(.remainder, rhs, scalar: lhs, scalarOnLeft: true, at: nil)
    }

    /// Adds a scalar (converted to the tensor's scalar type) to every element.
    public static func + (lhs: Tensor, rhs: Double) -> Tensor { binary(.add, lhs, scalar: rhs, at: nil) }
    /// Subtracts a scalar from every element.
    public static func - (lhs: Tensor, rhs: Double) -> Tensor { binary(.subtract, lhs, scalar: rhs, at: nil) }
    /// Multiplies every element by a scalar.
    public static func * (lhs: Tensor, rhs: Double) -> Tensor { binary(.multiply, lhs, scalar: rhs, at: nil) }
    /// Divides every element by a scalar.
    public static func / (lhs: Tensor, rhs: Double) -> Tensor { binary(.divide, lhs, scalar: rhs, at: nil) }
    /// Adds every element to a scalar.
    public static func + (lhs: Double, rhs: Tensor) -> Tensor {
        binary(.add, rhs, scalar: lhs, scalarOnLeft: true, at: nil)
    }
    /// Subtracts every element from a scalar.
    public static func - (lhs: Double, rhs: Tensor) -> Tensor {
        binary(.subtract, rhs, scalar: lhs, scalarOnLeft: true, at: nil)
    }
    /// Multiplies a scalar by every element.
    public static func * (lhs: Double, rhs: Tensor) -> Tensor {
        binary(.multiply, rhs, scalar: lhs, scalarOnLeft: true, at: nil)
    }
    /// Divides a scalar by every element.
    public static func / (lhs: Double, rhs: Tensor) -> Tensor {
        binary(.divide, rhs, scalar: lhs, scalarOnLeft: true, at: nil)
    }

    /// Negates every element.
    public static prefix func - (x: Tensor) -> Tensor { record(Op(.negate), [x], at: nil) }

    /// Adds in place.
    public static func += (lhs: inout Tensor, rhs: Tensor) { lhs = lhs + rhs }
    /// Subtracts in place.
    public static func -= (lhs: inout Tensor, rhs: Tensor) { lhs = lhs - rhs }
    /// Multiplies in place.
    public static func *= (lhs: inout Tensor, rhs: Tensor) { lhs = lhs * rhs }
    /// Divides in place.
    public static func /= (lhs: inout Tensor, rhs: Tensor) { lhs = lhs / rhs }
    /// Takes the remainder in place.
    public static func %= (lhs: inout Tensor, rhs: Tensor) { lhs = lhs % rhs }
    /// Adds a scalar in place.
    public static func += (lhs: inout Tensor, rhs: Double) { lhs = lhs + rhs }
    /// Subtracts a scalar in place.
    public static func -= (lhs: inout Tensor, rhs: Double) { lhs = lhs - rhs }
    /// Multiplies by a scalar in place.
    public static func *= (lhs: inout Tensor, rhs: Double) { lhs = lhs * rhs }
    /// Divides by a scalar in place.
    public static func /= (lhs: inout Tensor, rhs: Double) { lhs = lhs / rhs }
    /// Takes the remainder by a scalar in place.
    public static func %= (lhs: inout Tensor, rhs: Double) { lhs = lhs % rhs }

    /// The smaller of the two operands at each position (NaN if either is NaN), with broadcasting.
    @_disfavoredOverload
    public func pointwiseMin(_ other: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.binary(.minimum, self, other, at: SourceLocation(file, line))
    }

    /// The smaller of each element and a scalar.
    public func pointwiseMin(_ other: Float, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.binary(.minimum, self, scalar: Double(other), at: SourceLocation(file, line))
    }

    /// The larger of the two operands at each position (NaN if either is NaN), with broadcasting.
    @_disfavoredOverload
    public func pointwiseMax(_ other: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.binary(.maximum, self, other, at: SourceLocation(file, line))
    }

    /// The larger of each element and a scalar.
    public func pointwiseMax(_ other: Float, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.binary(.maximum, self, scalar: Double(other), at: SourceLocation(file, line))
    }

    /// Each element limited to a closed range.
    public func clamped(to range: ClosedRange<Float>, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        pointwiseMax(range.lowerBound, file: file, line: line).pointwiseMin(range.upperBound, file: file, line: line)
    }

    /// Each element at least the range's lower bound: `x.clamped(to: 0...)`.
    public func clamped(to range: PartialRangeFrom<Float>, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        pointwiseMax(range.lowerBound, file: file, line: line)
    }

    /// Each element at most the range's upper bound: `x.clamped(to: ...1)`.
    public func clamped(
        to range: PartialRangeThrough<Float>, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        pointwiseMin(range.upperBound, file: file, line: line)
    }

    /// Each element raised to the power in `exponent`, with broadcasting (as ``pow(_:_:file:line:)``).
    @_disfavoredOverload
    public func pow(_ exponent: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.binary(.pow, self, exponent, at: SourceLocation(file, line))
    }

    /// Each element raised to a scalar power: `x.pow(2)`.
    public func pow(_ exponent: Float, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.binary(.pow, self, scalar: Double(exponent), at: SourceLocation(file, line))
    }
}

/// The smaller of the two operands at each position (NaN if either is NaN), with broadcasting.
public func pointwiseMin(_ a: Tensor, _ b: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
    Tensor.binary(.minimum, a, b, at: SourceLocation(file, line))
}

/// The larger of the two operands at each position (NaN if either is NaN), with broadcasting.
public func pointwiseMax(_ a: Tensor, _ b: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
    Tensor.binary(.maximum, a, b, at: SourceLocation(file, line))
}

/// Raises each element of `base` to the power in `exponent`, with broadcasting.
@_disfavoredOverload
public func pow(_ base: Tensor, _ exponent: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
    Tensor.binary(.pow, base, exponent, at: SourceLocation(file, line))
}

/// Raises each element of `base` to a scalar power.
public func pow(_ base: Tensor, _ exponent: Float, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
    Tensor.binary(.pow, base, scalar: Double(exponent), at: SourceLocation(file, line))
}

/// Raises a scalar to the power of each element.
public func pow(_ base: Float, _ exponent: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
    Tensor.binary(.pow, exponent, scalar: Double(base), scalarOnLeft: true, at: SourceLocation(file, line))
}
