import TensorEngine

/// The error bounds of approximate entries (``RandomGraph/Entry/bound``).
///
/// Backends may differ in the last bits of every rounded operation (summation order and
/// precision, fused multiply-adds, their own `exp`), so an approximate entry is compared within a
/// bound, not exactly. A bound relative to the result alone ignores cancellation: a product of
/// `[33, 33]` matrices whose terms reach 3e7 and add up to 925 differs by 2.1 between the naive
/// backend's `Double` accumulator and `sgemm`'s `Float` one (0.2% of the result, but 2.4e-8 of
/// the sum of the terms' magnitudes, inside `Float`'s bound `k·u·Σ|aᵢbᵢ|`). So each approximate
/// entry carries the largest difference that rounding, in this operation and upstream, can
/// explain, propagated element by element with the rules of forward error analysis: a sum adds
/// its operands' bounds, a product `|x|·By + Bx·|y| + Bx·By`, a function `f` with `|f'| ≤ L`
/// multiplies its operand's bound by `L`, `exp` by `e^x·(e^Bx - 1)`, data movement moves the
/// bound with the values; and each rounded operation adds its own rounding: `k` ulps of the sum
/// of the magnitudes for a reduction of length `k`, two for an arithmetic operation (one for a
/// fused and one for an unfused form), ``functionError`` for an elementary function.
///
/// The bounds are lazy tensors over the reference (naive) values, evaluated only when an
/// element differs by more than the plain relative tolerance.
extension RandomGraph {
    /// The spacing of `Float`s at 1, relative to a value an upper bound of one rounding's error.
    static let ulp: Float = 0x1p-23
    /// How far an elementary function may differ between backends, relative: the vector forms
    /// are documented within 2 ulp (`exp`) to 4e-7 (`tanh`, `erf`) of the C library (`VectorMath`);
    /// 16 ulp leaves room for both sides' rounding.
    static let functionError: Float = 16 * ulp
    /// Two roundings of an arithmetic result (fused or not, by a reciprocal or not).
    static let arithmeticError: Float = 2 * ulp

    /// `|t|` as `Float` (an integer or Boolean entry is converted first).
    static func magnitude(_ t: Tensor) -> Tensor { (t.dtype == .float32 ? t : t.cast(to: Float.self)).abs() }

    /// `|t|` where it is finite, else zero: the magnitudes rounding errors are relative to and
    /// operands' bounds are scaled by. An infinity or NaN in a value is no rounding error: the
    /// backends must agree on it exactly, unless an operand's own bound is infinite. So the only
    /// NaN a bound can hold is an infinite bound times zero, which is unbounded too.
    static func finiteMagnitude(_ t: Tensor) -> Tensor {
        let m = magnitude(t)
        return Tensor(zeros: m.shape).replacing(with: m, where: m .< Float.infinity)
    }

    /// The bound of rounding `t` by `relative`: `relative·|t|` (zero where `t` is not finite).
    static func rounding(_ t: Tensor, _ relative: Float) -> Tensor { finiteMagnitude(t) * relative }

    /// The bound of an operation that may magnify a last-bit difference without limit, applied to
    /// exact operands: the plain tolerance (``tolerance`` relative, absolute below magnitude 1).
    static func plain(_ t: Tensor) -> Tensor { (magnitude(t) + 1) * Float(tolerance) }

    /// The sum of the terms present (`nil` ones are zero; `nil` if all are).
    static func total(_ terms: Tensor?...) -> Tensor? {
        terms.compactMap { $0 }.reduce(nil) { partial, term in partial.map { $0 + term } ?? term }
    }

    /// `bound·factor`, or `nil` for a zero bound.
    static func scaled(_ bound: Tensor?, _ factor: Float) -> Tensor? { bound.map { $0 * factor } }

    /// The bound of a product `x·y` (elementwise with `length` 1, or a matrix product via
    /// `multiply` over `length` terms): `Bx·|y| + |x|·By + Bx·By`, plus the rounding of a sum of
    /// `length` products: `length + 1` ulps of `Σ|x||y|`.
    static func product(_ a: Entry, _ b: Entry, length: Int, _ multiply: (Tensor, Tensor) -> Tensor) -> Tensor? {
        let x = finiteMagnitude(a.tensor), y = finiteMagnitude(b.tensor)
        let propagated = total(
            a.bound.map { multiply($0, b.bound.map { y + $0 } ?? y) },
            b.bound.map { multiply(x, $0) })
        return total(propagated, multiply(x, y) * (Float(Swift.max(length, 1) + 1) * ulp))
    }

    /// The bound of `f(x)` for a function whose slope is at most `slope`: `slope·Bx` plus the
    /// function's own error.
    static func lipschitz(_ a: Entry, _ result: Tensor, slope: Float) -> Tensor? {
        total(scaled(a.bound, slope), rounding(result, functionError))
    }

    /// The bound of `exp(c·x)` (result `e`): `e·(exp(|c|·Bx) - 1)`, since
    /// `exp(c(x + d)) = exp(cx)·exp(cd)`, plus the function's error. `exp(b) - 1` is taken no
    /// smaller than `b`, its exact value being larger (the subtraction cancels for tiny `b`).
    static func exponential(_ a: Entry, _ result: Tensor, rate: Float = 1) -> Tensor? {
        let growth = a.bound.map { bound in
            let scaled = bound * Swift.abs(rate)
            // Zero where the operand's bound is (an infinite result times no growth).
            return ((scaled.exp() - 1).pointwiseMax(scaled) * result).replacing(with: 0, where: bound .== 0)
        }
        return total(growth, rounding(result, functionError))
    }

    /// The bound of a sum-like reduction `reduce` of `a` over `length` terms (sum, mean,
    /// cumulative sum): the reduced bounds, and for approximate terms `length + 1` ulps of the
    /// reduced magnitudes (the order and precision of summation differ between backends; exact
    /// terms sum exactly in any order). `nil` for exact terms.
    static func summation(_ a: Entry, length: Int, _ reduce: (Tensor) -> Tensor) -> Tensor? {
        guard let bound = a.bound else { return nil }
        return reduce(bound) + reduce(finiteMagnitude(a.tensor)) * (Float(Swift.max(length, 1) + 1) * ulp)
    }

    /// The bound of `softmax(x)` along an axis (result `s`): with every operand within `D` of the
    /// reference (`D` the largest bound along the axis), each quotient moves by a factor within
    /// `exp(±2D)`, so `s·(exp(2D) - 1)`; plus the rounding of `x - max` (an ulp of its magnitude,
    /// which `exp` turns into a relative error), of `exp`, and of a sum of `length` terms.
    static func softmax(_ a: Entry, _ result: Tensor, axis: Int, length: Int) -> Tensor? {
        let growth = a.bound.map { bound in
            let spread = bound.max(alongAxes: axis, keepRank: true) * 2
            return ((spread.exp() - 1).pointwiseMax(spread) * result).replacing(with: 0, where: spread .== 0)
        }
        let shifted = finiteMagnitude(a.tensor - a.tensor.max(alongAxes: axis, keepRank: true))
        let relative = shifted * ulp + (functionError + Float(length + 1) * ulp)
        return total(growth, relative * result)
    }

    /// The bound of `logSoftmax(x)` along an axis (result `l`): `x - log Σ exp(x)` moves by at
    /// most the operand's own bound plus the largest along the axis; plus the rounding of
    /// `x - max` and of `log` (both within `|l| + |x - max|`), and of a sum of `length` terms.
    static func logSoftmax(_ a: Entry, _ result: Tensor, axis: Int, length: Int) -> Tensor? {
        let shift = a.bound.map { $0 + $0.max(alongAxes: axis, keepRank: true) }
        let shifted = finiteMagnitude(a.tensor - a.tensor.max(alongAxes: axis, keepRank: true))
        let rounded = (finiteMagnitude(result) + shifted) * functionError + Float(length + 1) * ulp
        return total(shift, rounded)
    }

    /// The bound of a product reduction of `length` factors: `Π(|x| + Bx) - Π|x|`, plus
    /// `length + 1` ulps of `Π|x|`. Unbounded (infinite) where a partial product may leave
    /// `Float`'s range, whatever the result: where the factors above 1 multiply to an overflow or
    /// those below 1 (zeros aside) to less than the least normal number, a `Float` accumulator gives infinity,
    /// NaN (infinity times zero) or zero depending on its order, the naive backend's `Double`
    /// accumulator the rounded true product.
    static func productReduction(_ a: Entry, length: Int, _ reduce: (Tensor) -> Tensor) -> Tensor? {
        let finite = finiteMagnitude(a.tensor)
        let rounded = reduce(finite) * (Float(Swift.max(length, 1) + 1) * ulp)
        let propagated = a.bound.map { reduce(finite + $0) - reduce(finite) + rounded } ?? rounded
        // A non-finite factor makes the product infinite or NaN in any order: not a range problem.
        let nonZero = finite.replacing(with: 1, where: finite .== 0)
        let leavesRange = (reduce(finite.pointwiseMax(1)) .== Float.infinity)
            .| (reduce(nonZero.pointwiseMin(1)) .< Float.leastNormalMagnitude)
        return propagated.replacing(with: Float.infinity, where: leavesRange)
    }
}
