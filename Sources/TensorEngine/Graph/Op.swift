/// One axis of a strided slice: `count` elements starting at `start`, `step` apart (negative steps
/// walk backwards, as `reversed(alongAxes:)` does).
package struct SliceDimension: Sendable, Hashable {
    package var start: Int
    package var count: Int
    package var step: Int

    package init(start: Int, count: Int, step: Int) {
        self.start = start
        self.count = count
        self.step = step
    }
}

/// Padding added before and after one axis.
package struct Padding: Sendable, Hashable {
    var before: Int
    var after: Int
}

/// An activation a `linear` op applies to its results as it finishes each piece of them, after
/// the bias: the epilogue of a projection followed by its layer's nonlinearity.
package enum LinearActivation: Sendable, Hashable {
    /// `max(y, 0)`.
    case relu
    /// GELU, exact or by its tanh approximation (as the `gelu` op computes it).
    case gelu(GELUApproximation)
}

/// Which of the two results of a top-k selection a node holds.
package enum TopKOutput: String, Sendable, Hashable, CaseIterable {
    case values, indices
}

/// The attributes of an op: what, beside its operands, says what it computes. One case per shape
/// of attributes; the op table says which shape each kind takes (the front end builds ops through
/// the factories of ``Op``, so a kind always comes with its own shape).
package enum OpAttributes: Sendable, Hashable {
    case none
    /// The scalar type of a cast's result.
    case scalarType(ScalarType)
    /// Reduced axes (sorted, non-negative) and whether they stay as size-1 axes.
    case axes([Int], keepRank: Bool)
    /// The one axis of a line-wise op, a concatenation or a gather.
    case axis(Int)
    case normalization(axis: Int, epsilon: Float)
    case topK(k: Int, output: TopKOutput)
    /// The result's shape (reshape, broadcast).
    case shape([Int])
    /// Output axis `i` is input axis `permutation[i]`.
    case permutation([Int])
    case slice([SliceDimension])
    case padding([Padding], value: Double)
    case gelu(GELUApproximation)
    /// A convolution's (or transposed convolution's) strides, dilations, padding and groups.
    case convolution(ConvolutionGeometry)
    /// A pooling window's size, strides, dilations and padding.
    case pooling(PoolingGeometry)
    /// Scaled dot-product attention's factor on the scores, and whether each query sees only the
    /// keys up to its own position (aligned at the end: query i of Lq sees keys j ≤ i + Lk - Lq).
    case attention(scale: Float, causal: Bool)
    /// The activation a `linear` op applies after its bias.
    case linearActivation(LinearActivation)
}

/// What a graph node computes: an op kind (a row of the op table) and its attributes.
///
/// Every user-facing ``Tensor`` operation records one of these. Attributes are normalised by the
/// front end (axes non-negative and sorted, shapes validated), so backends trust them.
package struct Op: Sendable, Hashable {
    package let kind: OpKind
    package let attributes: OpAttributes

    package init(_ kind: OpKind, _ attributes: OpAttributes = .none) {
        self.kind = kind
        self.attributes = attributes
    }

    /// The op's row of the table.
    package var descriptor: OpDescriptor { kind.descriptor }

    /// The op's name in errors, plans and dumps (`add`, `sum`, `matmul`, ...).
    package var name: String { kind.name }

    /// The expression of an elementwise op (`.operand(0)` for other ops, which have none).
    package var elementwiseExpression: ScalarExpression {
        guard case .elementwise(let definition) = descriptor.semantics else { return .operand(0) }
        return definition.expression(self)
    }
}

// The factories the front end records ops with, one per attribute shape.
extension Op {
    static let constant = Op(.constant)
    static let select = Op(.select)
    package static let matmul = Op(.matmul)
    /// `x · weight + bias`, the bias added to every row of the product.
    package static let linear = Op(.linear)
    /// `activation(x · weight + bias)`: a `linear` op with its activation as its epilogue.
    package static func linear(activation: LinearActivation) -> Op { Op(.linear, .linearActivation(activation)) }
    static let contiguous = Op(.contiguous)

    static func cast(_ type: ScalarType) -> Op { Op(.cast, .scalarType(type)) }
    static func reduction(_ kind: OpKind, axes: [Int], keepRank: Bool) -> Op {
        Op(kind, .axes(axes, keepRank: keepRank))
    }
    static func alongAxis(_ kind: OpKind, _ axis: Int) -> Op { Op(kind, .axis(axis)) }
    static func layerNorm(axis: Int, epsilon: Float) -> Op {
        Op(.layerNorm, .normalization(axis: axis, epsilon: epsilon))
    }
    static func attention(scale: Float, causal: Bool) -> Op { Op(.attention, .attention(scale: scale, causal: causal)) }
    static func topK(k: Int, output: TopKOutput) -> Op { Op(.topK, .topK(k: k, output: output)) }
    static func reshape(_ shape: [Int]) -> Op { Op(.reshape, .shape(shape)) }
    static func broadcast(_ shape: [Int]) -> Op { Op(.broadcast, .shape(shape)) }
    static func permute(_ permutation: [Int]) -> Op { Op(.permute, .permutation(permutation)) }
    package static func slice(_ dimensions: [SliceDimension]) -> Op { Op(.slice, .slice(dimensions)) }
    static func pad(_ padding: [Padding], value: Double) -> Op { Op(.pad, .padding(padding, value: value)) }
    static func gelu(_ approximation: GELUApproximation) -> Op { Op(.gelu, .gelu(approximation)) }
    package static func convolution(_ geometry: ConvolutionGeometry, transposed: Bool = false) -> Op {
        Op(transposed ? .convolutionTranspose : .convolution, .convolution(geometry))
    }
    package static func pooling(_ kind: OpKind, _ geometry: PoolingGeometry) -> Op { Op(kind, .pooling(geometry)) }
}

// Typed reads of the attributes; each gives a neutral value for an op of another shape, which
// the front end never builds.
extension Op {
    /// The reduced axes, or the one axis of a line-wise op, concatenation or gather.
    var axes: [Int] {
        switch attributes {
        case .axes(let axes, _): axes
        case .axis(let axis), .normalization(let axis, _): [axis]
        case .none, .scalarType, .topK, .shape, .permutation, .slice, .padding, .gelu, .convolution, .pooling,
            .attention, .linearActivation:
            []
        }
    }

    /// The first of ``axes`` (0 when there is none).
    var axis: Int { axes.first ?? 0 }

    var keepRank: Bool {
        if case .axes(_, let keepRank) = attributes { return keepRank }
        return false
    }

    var epsilon: Float {
        if case .normalization(_, let epsilon) = attributes { return epsilon }
        return 0
    }

    /// Attention's factor on the scores (1 for an op of another shape).
    var attentionScale: Float {
        if case .attention(let scale, _) = attributes { return scale }
        return 1
    }

    /// Whether an attention is causal.
    var isCausal: Bool {
        if case .attention(_, let causal) = attributes { return causal }
        return false
    }

    /// A cast's result type.
    var castType: ScalarType {
        if case .scalarType(let type) = attributes { return type }
        return .float32
    }

    var k: Int {
        if case .topK(let k, _) = attributes { return k }
        return 0
    }

    var topKOutput: TopKOutput {
        if case .topK(_, let output) = attributes { return output }
        return .values
    }

    /// A reshape's or broadcast's result shape.
    var targetShape: [Int] {
        if case .shape(let shape) = attributes { return shape }
        return []
    }

    var permutation: [Int] {
        if case .permutation(let permutation) = attributes { return permutation }
        return []
    }

    var sliceDimensions: [SliceDimension] {
        if case .slice(let dimensions) = attributes { return dimensions }
        return []
    }

    var padding: [Padding] {
        if case .padding(let padding, _) = attributes { return padding }
        return []
    }

    /// The value a pad writes.
    var fill: Double {
        if case .padding(_, let value) = attributes { return value }
        return 0
    }

    var geluApproximation: GELUApproximation {
        if case .gelu(let approximation) = attributes { return approximation }
        return .none
    }

    /// The activation a `linear` op applies after its bias (`nil`: none, or an op of another shape).
    var linearActivation: LinearActivation? {
        if case .linearActivation(let activation) = attributes { return activation }
        return nil
    }

    /// A convolution's geometry (no strides, so no spatial axes, for an op of another shape).
    var convolutionGeometry: ConvolutionGeometry {
        if case .convolution(let geometry) = attributes { return geometry }
        return ConvolutionGeometry(strides: [], dilations: [], padding: [], groups: 1, outputPadding: [])
    }

    /// A pooling's geometry (no window, so no spatial axes, for an op of another shape).
    var poolingGeometry: PoolingGeometry {
        if case .pooling(let geometry) = attributes { return geometry }
        return PoolingGeometry(kernel: [], strides: [], dilations: [], padding: [], ceilMode: false, countsPadding: false)
    }
}
