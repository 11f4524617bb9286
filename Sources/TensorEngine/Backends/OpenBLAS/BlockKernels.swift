/// Vector loops over blocks of `Float`: one function per instruction kind of a fused region.
enum BlockKernels {
    @inline(__always)
    static func load(_ p: UnsafePointer<Float>) -> FloatVector { UnsafeRawPointer(p).loadUnaligned(as: FloatVector.self) }

    @inline(__always)
    static func store(_ v: FloatVector, _ p: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: FloatVector.self) }

    /// The first `count` (< 8) elements at `x`, the other lanes set to `padding`: a row's tail goes
    /// through the same vector formula as the rest.
    @inline(__always)
    static func loadTail(_ x: UnsafePointer<Float>, _ count: Int, padding: Float = 0) -> FloatVector {
        var v = FloatVector(repeating: padding)
        for lane in 0..<count { v[lane] = x[lane] }
        return v
    }

    /// Stores the first `count` (< 8) lanes of `v` at `out`.
    @inline(__always)
    static func storeTail(_ v: FloatVector, _ out: UnsafeMutablePointer<Float>, _ count: Int) {
        for lane in 0..<count { out[lane] = v[lane] }
    }

    /// Applies `f` to eight lanes at a time; the tail goes through a zero-padded vector so every
    /// element sees the same formula.
    @inline(__always)
    static func map(_ n: Int, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ f: (FloatVector) -> FloatVector) {
        let vectorEnd = n & ~7
        var i = 0
        while i < vectorEnd {
            store(f(load(x + i)), out + i)
            i &+= 8
        }
        guard i < n else { return }
        storeTail(f(loadTail(x + i, n - i)), out + i, n - i)
    }

    @inline(__always)
    static func map(_ n: Int, _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ f: (FloatVector, FloatVector) -> FloatVector) {
        let vectorEnd = n & ~7
        var i = 0
        while i < vectorEnd {
            store(f(load(x + i), load(y + i)), out + i)
            i &+= 8
        }
        guard i < n else { return }
        storeTail(f(loadTail(x + i, n - i), loadTail(y + i, n - i)), out + i, n - i)
    }

    /// Applies `F` to eight lanes at a time, like the closure form of `map`, but with the function
    /// as a type: the loop is specialised for it and the function inlined. The large
    /// functions (`exp`, `tanh`, `erf`) go this way, because a closure that large stays a call per
    /// vector, with its constants reloaded on every call.
    @inline(__always)
    static func map<F: VectorFunction>(_ function: F.Type, _ n: Int, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>) {
        let vectorEnd = n & ~7
        var i = 0
        while i < vectorEnd & ~15 {
            let (r0, r1) = (F.apply(load(x + i)), F.apply(load(x + (i &+ 8))))
            store(r0, out + i); store(r1, out + (i &+ 8))
            i &+= 16
        }
        while i < vectorEnd {
            store(F.apply(load(x + i)), out + i)
            i &+= 8
        }
        guard i < n else { return }
        storeTail(F.apply(loadTail(x + i, n - i)), out + i, n - i)
    }

    /// Runs one step of a host program over `n` elements of its registers into `out`.
    static func run(_ step: VectorStep, _ registers: UnsafeMutableBufferPointer<UnsafePointer<Float>>,
                    _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        switch step {
        case .negate(let a): map(n, registers[a], out) { -$0 }
        case .absolute(let a): map(n, registers[a], out) { VectorMath.abs($0) }
        case .arithmetic(let op, let a, let b): arithmetic(op, registers[a], registers[b], out, n)
        case .compare(let comparison, let a, let b): compare(comparison, registers[a], registers[b], out, n)
        case .select(let m, let a, let b): select(registers[m], registers[a], registers[b], out, n)
        case .math(let function, let a, let b): math(function, registers[a], registers[b], out, n)
        case .fast(let path, let a):
            switch path {
            case .relu: map(VectorFunctions.Relu.self, n, registers[a], out)
            case .sigmoid: map(VectorFunctions.Sigmoid.self, n, registers[a], out)
            case .sign: map(VectorFunctions.Sign.self, n, registers[a], out)
            }
        case .multiplyAdd(let a, let b, let c): multiplyAdd(registers[a], registers[b], registers[c], out, n)
        case .indicator(let a): map(n, registers[a], out) { VectorMath.indicator($0 .!= 0) }
        case .copy(let a): out.update(from: registers[a], count: n)
        }
    }

    static func arithmetic(_ op: ArithmeticOperator, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                           _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        switch op {
        case .add: map(n, a, b, out) { $0 + $1 }
        case .subtract: map(n, a, b, out) { $0 - $1 }
        case .multiply: map(n, a, b, out) { $0 * $1 }
        case .divide: map(n, a, b, out) { $0 / $1 }
        case .remainder: math(.fmod, a, b, out, n)
        case .minimum: map(n, a, b, out) { VectorMath.propagatingNaN(VectorMath.lesser($0, $1), $0, $1) }
        case .maximum: map(n, a, b, out) { VectorMath.propagatingNaN(VectorMath.greater($0, $1), $0, $1) }
        }
    }

    static func compare(_ comparison: Comparison, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                        _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        switch comparison {
        case .equal: map(n, a, b, out) { VectorMath.indicator($0 .== $1) }
        case .notEqual: map(n, a, b, out) { VectorMath.indicator($0 .!= $1) }
        case .less: map(n, a, b, out) { VectorMath.indicator($0 .< $1) }
        case .lessEqual: map(n, a, b, out) { VectorMath.indicator($0 .<= $1) }
        case .greater: map(n, a, b, out) { VectorMath.indicator($0 .> $1) }
        case .greaterEqual: map(n, a, b, out) { VectorMath.indicator($0 .>= $1) }
        }
    }

    /// A math function: vectorised where `VectorMath` has it, else the C library's per element.
    static func math(_ function: MathFunction, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                     _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        switch function {
        case .exp: map(VectorFunctions.Exp.self, n, a, out)
        case .tanh: map(VectorFunctions.Tanh.self, n, a, out)
        case .erf: map(VectorFunctions.Erf.self, n, a, out)
        case .sqrt: map(n, a, out) { $0.squareRoot() }
        case .floor: map(n, a, out) { $0.rounded(.down) }
        case .ceil: map(n, a, out) { $0.rounded(.up) }
        case .rint: map(n, a, out) { $0.rounded(.toNearestOrEven) }
        case .trunc: map(n, a, out) { $0.rounded(.towardZero) }
        case .exp2, .expm1, .log, .log2, .log10, .log1p, .cbrt, .sin, .cos, .tan, .asin, .acos, .atan, .sinh, .cosh,
            .asinh, .acosh, .atanh, .erfc, .pow, .atan2, .fmod, .hypot, .copysign:
            for i in 0..<n { out[i] = function.evaluate(a[i], b[i]) }
        }
    }

    /// `a·b + c`, the product and the sum each rounded (see `VectorStep.multiplyAdd`).
    static func multiplyAdd(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ c: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        let vectorEnd = n & ~7
        var i = 0
        while i < vectorEnd {
            store(load(a + i) * load(b + i) + load(c + i), out + i)
            i &+= 8
        }
        while i < n {
            out[i] = a[i] * b[i] + c[i]
            i += 1
        }
    }

    static func select(_ mask: UnsafePointer<Float>, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                       _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        let vectorEnd = n & ~7
        var i = 0
        while i < vectorEnd {
            store(load(b + i).replacing(with: load(a + i), where: load(mask + i) .!= 0), out + i)
            i &+= 8
        }
        while i < n {
            out[i] = mask[i] != 0 ? a[i] : b[i]
            i += 1
        }
    }
}

/// A function of eight lanes, for the type form of `BlockKernels.map`.
protocol VectorFunction {
    static func apply(_ x: FloatVector) -> FloatVector
}

/// The vector functions too large to pass as closures.
enum VectorFunctions {
    enum Exp: VectorFunction {
        @inline(__always) static func apply(_ x: FloatVector) -> FloatVector { VectorMath.exp(x) }
    }

    enum Tanh: VectorFunction {
        @inline(__always) static func apply(_ x: FloatVector) -> FloatVector { VectorMath.tanh(x) }
    }

    enum Sigmoid: VectorFunction {
        @inline(__always) static func apply(_ x: FloatVector) -> FloatVector { VectorMath.sigmoid(x) }
    }

    /// `max(x, 0)` with NaN kept and -0 made +0, as the scalar semantics say.
    enum Relu: VectorFunction {
        @inline(__always) static func apply(_ x: FloatVector) -> FloatVector {
            let zero = FloatVector(repeating: 0)
            return x.replacing(with: zero, where: x .<= zero)
        }
    }

    /// 1, -1 or x (±0 and NaN kept).
    enum Sign: VectorFunction {
        @inline(__always) static func apply(_ x: FloatVector) -> FloatVector {
            let zero = FloatVector(repeating: 0)
            return x.replacing(with: FloatVector(repeating: 1), where: x .> zero).replacing(with: FloatVector(repeating: -1), where: x .< zero)
        }
    }

    enum Erf: VectorFunction {
        @inline(__always) static func apply(_ x: FloatVector) -> FloatVector { VectorMath.erf(x) }
    }
}
