// Tensor–scalar operators for scalars of any numeric tensor type: an `Int32` tensor takes
// `Int32` scalars (`indices + Int32(1)`, `counts .> Int32(0)`), as MLTensor's operators do. The
// scalar is converted to the tensor's scalar type. Plain literals choose the `Double` forms (these
// are disfavoured), so a literal reaches a `Double` tensor with all its digits and `x * 2` means
// what it always did.

extension Tensor {
    /// Adds a scalar to every element.
    @_disfavoredOverload
    public static func + <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.add, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// Subtracts a scalar from every element.
    @_disfavoredOverload
    public static func - <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.subtract, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// Multiplies every element by a scalar.
    @_disfavoredOverload
    public static func * <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.multiply, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// Divides every element by a scalar.
    @_disfavoredOverload
    public static func / <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.divide, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// The remainder of dividing every element by a scalar.
    @_disfavoredOverload
    public static func % <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.remainder, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// Adds every element to a scalar.
    @_disfavoredOverload
    public static func + <S: TensorScalar & Numeric>(lhs: S, rhs: Tensor) -> Tensor {
        binary(.add, rhs, scalar: lhs.doubleValue, scalarOnLeft: true, at: nil)
    }
    /// Subtracts every element from a scalar.
    @_disfavoredOverload
    public static func - <S: TensorScalar & Numeric>(lhs: S, rhs: Tensor) -> Tensor {
        binary(.subtract, rhs, scalar: lhs.doubleValue, scalarOnLeft: true, at: nil)
    }
    /// Multiplies a scalar by every element.
    @_disfavoredOverload
    public static func * <S: TensorScalar & Numeric>(lhs: S, rhs: Tensor) -> Tensor {
        binary(.multiply, rhs, scalar: lhs.doubleValue, scalarOnLeft: true, at: nil)
    }
    /// Divides a scalar by every element.
    @_disfavoredOverload
    public static func / <S: TensorScalar & Numeric>(lhs: S, rhs: Tensor) -> Tensor {
        binary(.divide, rhs, scalar: lhs.doubleValue, scalarOnLeft: true, at: nil)
    }
    /// The remainder of dividing a scalar by every element.
    @_disfavoredOverload
    public static func % <S: TensorScalar & Numeric>(lhs: S, rhs: Tensor) -> Tensor {
        binary(.remainder, rhs, scalar: lhs.doubleValue, scalarOnLeft: true, at: nil)
    }

    /// `true` where the element equals the scalar.
    @_disfavoredOverload
    public static func .== <S: TensorScalar>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.equal, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// `true` where the element differs from the scalar.
    @_disfavoredOverload
    public static func .!= <S: TensorScalar>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.notEqual, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// `true` where the element is below the scalar.
    @_disfavoredOverload
    public static func .< <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.less, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// `true` where the element is at most the scalar.
    @_disfavoredOverload
    public static func .<= <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.lessEqual, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// `true` where the element is above the scalar.
    @_disfavoredOverload
    public static func .> <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.greater, lhs, scalar: rhs.doubleValue, at: nil)
    }
    /// `true` where the element is at least the scalar.
    @_disfavoredOverload
    public static func .>= <S: TensorScalar & Numeric>(lhs: Tensor, rhs: S) -> Tensor {
        binary(.greaterEqual, lhs, scalar: rhs.doubleValue, at: nil)
    }
}
