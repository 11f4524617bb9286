import Foundation
import TensorEngine

extension RandomGraph {
    /// The operations a program step may apply: every public `Tensor` operation, some in more
    /// than one form. A step's first byte picks one (modulo the count), so the order is part of
    /// the input language: reordering cases changes what saved inputs decode to.
    enum Step: CaseIterable {
        case add, sub, mul, div, max, min, pow
        case addScalar, subScalar, scalarSub, mulScalar, divScalar, scalarDiv, powScalar, scalarPow
        case maxScalar, minScalar, clamp
        case exp, log, tanh, sigmoid, relu, gelu, geluTanh, silu, erf, asinh, sin, cos
        case sqrt, rsqrt, reciprocal, squared, abs, neg
        case floor, ceil, round, sign, castInt, castHalf, castBool
        case compare, logical, replacing, replacingScalar
        case sum, sumAll, mean, meanAll, maxReduce, maxAll, minReduce, minAll, product, productAll
        case argmax, argmaxAll, argmin, argminAll, variance, cumsum, topKValues, topKIndices
        case softmax, logSoftmax, layerNorm, matmul
        case reshape, flatten, transpose, reverseAxes, concat, stack, split, slice, subscriptAxes
        case expand, squeeze, squeezeAxis, broadcast, gather, reverse, tile, pad
        case leaf, repeating, range, intRange, linearSpace
        // Appended (the order is the input language; RandomGraph.reencoded rewrites saved inputs).
        case tan, asin, acos, atan, sinh, cosh, acosh, atanh, exp2
        case remainder, remainderScalar, xor, all, any, cumprod, argsort
        case scatter, gatherVectors, padMirrored, resizeNearest, resizeBilinear, bandPart, newAxis
    }

    /// Decodes and pushes one step.
    mutating func step() {
        stepCodePositions.append(reader.position)
        let code = reader.next()
        let step = Step.allCases[Int(code) % stepCount]
        let a = operand(), b = operand()
        switch step {
        case .add, .sub, .mul, .div, .max, .min, .pow: binary(step, a, b)
        case .addScalar, .subScalar, .scalarSub, .mulScalar, .divScalar, .scalarDiv, .powScalar, .scalarPow,
             .maxScalar, .minScalar, .clamp:
            scalar(step, a)
        case .exp, .log, .tanh, .sigmoid, .relu, .gelu, .geluTanh, .silu, .erf, .asinh, .sin, .cos,
             .sqrt, .rsqrt, .reciprocal, .squared, .abs, .neg:
            unary(step, a)
        case .floor, .ceil, .round, .sign, .castInt, .castHalf, .castBool, .compare, .logical,
             .replacing, .replacingScalar:
            discontinuous(step, a, b)
        case .sum, .sumAll, .mean, .meanAll, .maxReduce, .maxAll, .minReduce, .minAll, .product, .productAll,
             .argmax, .argmaxAll, .argmin, .argminAll, .variance, .cumsum, .topKValues, .topKIndices:
            reduction(step, a)
        case .softmax, .logSoftmax, .layerNorm, .matmul: network(step, a, b)
        case .reshape, .flatten, .transpose, .reverseAxes, .concat, .stack, .split, .slice, .subscriptAxes,
             .expand, .squeeze, .squeezeAxis, .broadcast, .gather, .reverse, .tile, .pad:
            movement(step, a, b)
        case .leaf, .repeating, .range, .intRange, .linearSpace: creation(step)
        case .tan, .asin, .acos, .atan, .sinh, .cosh, .acosh, .atanh, .exp2: mathematical(step, a)
        case .remainder, .remainderScalar, .xor, .all, .any, .cumprod, .argsort: selections(step, a, b)
        case .scatter, .gatherVectors, .padMirrored, .resizeNearest, .resizeBilinear, .bandPart, .newAxis:
            resampling(step, a)
        }
    }

    // MARK: - Elementwise

    private mutating func binary(_ step: Step, _ a: Entry, _ b: Entry) {
        let x = a.tensor, y = b.tensor, name = "\(step)"
        let keptBoth = Swift.max(a.precision, b.precision)
        switch step {
        case .add: push(x + y, keptBoth, step: name) { Self.total(a.bound, b.bound) }
        case .sub: push(x - y, keptBoth, step: name) { Self.total(a.bound, b.bound) }
        case .mul:
            push(x * y, Swift.max(keptBoth, .approximate), step: name) { Self.product(a, b, length: 1, *) }
        case .div:
            // Exact values may still differ in the sign of a zero (max(-0, +0) may be either),
            // which division turns into infinities of opposite signs: only a leaf divisor,
            // whose zeros are all +0, gives a comparable quotient.
            let quotient = x / y
            let precision: Precision = a.precision == .exact && b.step == "leaf" ? .approximate : .unstable
            push(quotient, precision, step: name) { Self.plain(quotient) }
        case .pow:
            let power = TensorEngine.pow(x, y)
            let precision: Precision = keptBoth == .exact && a.step == "leaf" ? .approximate : .unstable
            push(power, precision, step: name) { Self.plain(power) }
        case .max:
            push(x.pointwiseMax(y), keptBoth, step: name) { Self.maximum(a.bound, b.bound) }
        default:
            push(x.pointwiseMin(y), keptBoth, step: name) { Self.maximum(a.bound, b.bound) }
        }
    }

    /// The elementwise maximum of two bounds (the bound of a maximum or minimum of two operands).
    private static func maximum(_ first: Tensor?, _ second: Tensor?) -> Tensor? {
        guard let first, let second else { return first ?? second }
        return first.pointwiseMax(second)
    }

    private mutating func scalar(_ step: Step, _ a: Entry) {
        let x = a.tensor, s = quarter(), name = "\(step)"
        let rounded = Swift.max(a.precision, .approximate)
        switch step {
        case .addScalar: push(x + s, a.precision, step: name) { a.bound }
        case .subScalar: push(x - s, a.precision, step: name) { a.bound }
        case .scalarSub: push(s - x, a.precision, step: name) { a.bound }
        case .mulScalar:
            let product = x * s
            push(product, rounded, step: name) {
                Self.total(Self.scaled(a.bound, Swift.abs(s)), Self.rounding(product, Self.arithmeticError))
            }
        case .divScalar:
            let quotient = x / s
            // By zero: infinities whose signs follow the operand's (NaN for a zero), unstable
            // unless the operand is exact.
            let byZero: Precision = a.precision == .exact ? .exact : .unstable
            push(quotient, s == 0 ? byZero : rounded, step: name) {
                Self.total(Self.scaled(a.bound, 1 / Swift.abs(s)), Self.rounding(quotient, Self.arithmeticError))
            }
        case .scalarDiv:
            let quotient = s / x
            push(quotient, a.step == "leaf" ? .approximate : .unstable, step: name) { Self.plain(quotient) }
        case .powScalar:
            let exponent = [2, 3, 0.5, -1, 0, 1.5][Int(reader.next() % 6)] as Float
            let power = TensorEngine.pow(x, exponent)
            let comparable = a.precision == .exact && (exponent >= 0 || a.step == "leaf")
            let precision: Precision = comparable ? .approximate : .unstable
            push(power, precision, step: name) { Self.plain(power) }
        case .scalarPow:
            let base = [2, 0.5, 3, 1][Int(reader.next() % 4)] as Float
            let power = TensorEngine.pow(base, x)
            push(power, rounded, step: name) { Self.exponential(a, power, rate: Float(Foundation.log(Double(base)))) }
        case .maxScalar: push(x.pointwiseMax(s), a.precision, step: name) { a.bound }
        case .minScalar: push(x.pointwiseMin(s), a.precision, step: name) { a.bound }
        default:
            let other = quarter()
            push(x.clamped(to: Swift.min(s, other)...Swift.max(s, other)), a.precision, step: name) { a.bound }
        }
    }

    private mutating func unary(_ step: Step, _ a: Entry) {
        let x = a.tensor, name = "\(step)"
        let rounded = Swift.max(a.precision, .approximate)
        /// Functions that can magnify an operand's last-bit difference without bound.
        let magnifying: Precision = a.precision == .exact ? .approximate : .unstable
        /// The same for functions of a pole at zero, whose sign an exact non-leaf may not keep.
        let pole: Precision = a.step == "leaf" ? .approximate : .unstable
        let (result, precision, slope): (Tensor, Precision, Float?) = switch step {
        case .exp: (x.exp(), rounded, nil)
        case .log: (x.log(), magnifying, nil)
        case .tanh: (x.tanh(), rounded, 1)
        case .sigmoid: (x.sigmoid(), rounded, 0.25)
        case .relu: (x.relu(), a.precision, 1)
        case .gelu: (x.gelu(), rounded, 1.13)
        case .geluTanh: (x.gelu(approximation: .tanh), rounded, 1.13)
        case .silu: (x.silu(), rounded, 1.1)
        case .erf: (x.erf(), rounded, 1.13)
        case .asinh: (x.asinh(), rounded, 1)
        case .sin: (x.sin(), rounded, 1)
        case .cos: (x.cos(), rounded, 1)
        case .sqrt: (x.squareRoot(), magnifying, nil)
        case .rsqrt: (x.rsqrt(), pole, nil)
        case .reciprocal: (x.reciprocal(), pole, nil)
        case .squared: (x.squared(), rounded, nil)
        case .abs: (x.abs(), a.precision, 1)
        default: (-x, a.precision, 1)
        }
        push(result, precision, step: name) {
            switch step {
            case .exp: Self.exponential(a, result)
            case .relu, .abs, .neg: a.bound
            case .squared:
                Self.total(
                    a.bound.map { $0 * (Self.finiteMagnitude(x) * 2 + $0) }, Self.rounding(result, Self.arithmeticError))
            case .gelu, .geluTanh:
                // 0.5·x·(1 + erf(x/√2)): erf's error is relative to 1, not to 1 + erf (which
                // cancels for negative x), so it is an error relative to |x|.
                Self.total(Self.scaled(a.bound, 1.13), Self.rounding(result, Self.functionError),
                           Self.rounding(x, Self.functionError))
            default: slope.map { Self.lipschitz(a, result, slope: $0) } ?? Self.plain(result)
            }
        }
    }

    /// Operations whose result a rounding difference could flip: they take exact operands only
    /// (another operand makes the step a new leaf instead).
    private mutating func discontinuous(_ step: Step, _ a: Entry, _ b: Entry) {
        let x = a.tensor, y = b.tensor, name = "\(step)"
        let bothExact = Swift.max(a.precision, b.precision) == .exact
        switch step {
        case .floor where a.precision == .exact: push(x.floor(), .exact, step: name)
        case .ceil where a.precision == .exact: push(x.ceil(), .exact, step: name)
        case .round where a.precision == .exact: push(x.round(), .exact, step: name)
        case .sign where a.precision == .exact: push(x.sign(), .exact, step: name)
        case .castInt where a.precision == .exact: push(x.cast(to: Int32.self), .exact, step: name)
        case .castHalf where a.precision == .exact:
            push(x.cast(to: Float16.self).cast(to: Float.self), .exact, step: name)
        case .castBool where a.precision == .exact: push(x.cast(to: Bool.self), .exact, step: name)
        case .compare where bothExact: push(comparison(x, y), .exact, step: name)
        case .logical where bothExact: push(reader.next() % 2 == 0 ? x .& y : x .| y, .exact, step: name)
        case .replacing where bothExact: push(x.replacing(with: y, where: comparison(x, y)), .exact, step: name)
        case .replacingScalar where bothExact:
            push(x.replacing(with: quarter(), where: comparison(x, y)), .exact, step: name)
        default: push(leaf(), .exact)
        }
    }

    /// One of the six comparisons of `x` and `y`.
    private mutating func comparison(_ x: Tensor, _ y: Tensor) -> Tensor {
        switch reader.next() % 6 {
        case 0: x .< y
        case 1: x .<= y
        case 2: x .> y
        case 3: x .>= y
        case 4: x .== y
        default: x .!= y
        }
    }
}
