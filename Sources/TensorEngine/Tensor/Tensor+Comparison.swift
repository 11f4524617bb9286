extension Tensor {
    /// `true` where the operands are equal, with broadcasting.
    @_disfavoredOverload
    public static func .== (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.equal, lhs, rhs, at: nil) }
    /// `true` where the operands differ.
    @_disfavoredOverload
    public static func .!= (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.notEqual, lhs, rhs, at: nil) }
    /// `true` where `lhs < rhs`.
    @_disfavoredOverload
    public static func .< (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.less, lhs, rhs, at: nil) }
    /// `true` where `lhs <= rhs`.
    @_disfavoredOverload
    public static func .<= (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.lessEqual, lhs, rhs, at: nil) }
    /// `true` where `lhs > rhs`.
    @_disfavoredOverload
    public static func .> (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.greater, lhs, rhs, at: nil) }
    /// `true` where `lhs >= rhs`.
    @_disfavoredOverload
    public static func .>= (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.greaterEqual, lhs, rhs, at: nil) }

    /// `true` where the element equals the scalar.
    public static func .== (lhs: Tensor, rhs: Double) -> Tensor { binary(.equal, lhs, scalar: rhs, at: nil) }
    /// `true` where the element differs from the scalar.
    public static func .!= (lhs: Tensor, rhs: Double) -> Tensor { binary(.notEqual, lhs, scalar: rhs, at: nil) }
    /// `true` where the element is below the scalar.
    public static func .< (lhs: Tensor, rhs: Double) -> Tensor { binary(.less, lhs, scalar: rhs, at: nil) }
    /// `true` where the element is at most the scalar.
    public static func .<= (lhs: Tensor, rhs: Double) -> Tensor { binary(.lessEqual, lhs, scalar: rhs, at: nil) }
    /// `true` where the element is above the scalar.
    public static func .> (lhs: Tensor, rhs: Double) -> Tensor { binary(.greater, lhs, scalar: rhs, at: nil) }
    /// `true` where the element is at least the scalar.
    public static func .>= (lhs: Tensor, rhs: Double) -> Tensor {
        binary(.greaterEqual, lhs, scalar: rhs, at: nil)
    }

    /// Logical and of two `Bool` tensors, with broadcasting.
    public static func .& (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.logicalAnd, lhs, rhs, at: nil) }
    /// Logical or of two `Bool` tensors, with broadcasting.
    public static func .| (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.logicalOr, lhs, rhs, at: nil) }
    /// Elementwise exclusive or of `Bool` tensors, with broadcasting.
    public static func .^ (lhs: Tensor, rhs: Tensor) -> Tensor { binary(.logicalXor, lhs, rhs, at: nil) }
    /// Logical not of a `Bool` tensor.
    public static prefix func .! (x: Tensor) -> Tensor { record(Op(.logicalNot), [x], at: nil) }

    /// The elements of `other` where `mask` is `true`, and of `self` elsewhere; the three shapes
    /// broadcast together.
    ///
    /// `[1, 2, 3]` replacing with `[4, 5, 6]` where `[false, true, false]` gives `[1, 5, 3]`.
    @_disfavoredOverload
    public func replacing(with other: Tensor, where mask: Tensor, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        let location = SourceLocation(file, line)
        if let failed = [self, other, mask].first(where: { $0.error != nil }) { return failed }
        guard let shape = Op.broadcastShape(self.shape, other.shape).flatMap({ Op.broadcastShape($0, mask.shape) })
        else {
            return Tensor(
                failed: TensorError(
                    .shapeMismatch, op: "replacing", operandShapes: [shape, other.shape, mask.shape],
                    message:
                        "shapes \(describe(shape)), \(describe(other.shape)) and mask \(describe(mask.shape)) cannot be broadcast",
                    location: location))
        }
        let operands = [mask, other, self].map { $0.broadcastIfNeeded(to: shape, at: location) }
        return Tensor.record(.select, operands, at: location)
    }

    /// A scalar where `mask` is `true`, and the element of `self` elsewhere.
    public func replacing(with scalar: Float, where mask: Tensor, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        replacing(with: Tensor.scalar(Double(scalar), dtype), where: mask, file: file, line: line)
    }
}
