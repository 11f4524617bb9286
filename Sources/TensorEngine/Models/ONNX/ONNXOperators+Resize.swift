import Foundation

/// ONNX's `Resize` (and the older `Upsample`): nearest, linear and cubic interpolation along any
/// axes, with every coordinate mode but `tf_crop_and_resize`. Interpolation is separable: each
/// resized axis takes, per output position, `n` neighbours of its source coordinate (1 for nearest,
/// 2 for linear, 4 for cubic; edge positions repeated) weighted by coefficients computed here, on
/// the host; the engine then gathers the neighbours and adds them up, on any backend.
extension ONNXOperators {
    static let resizing: [String: ONNXOperator] = [
        "Resize": ONNXOperator(since: 10, lower: resize),
        "Upsample": ONNXOperator(since: 7, lower: upsample),
    ]

    /// How a `Resize` maps output positions to source coordinates and weighs neighbours.
    struct ResizeRule {
        var mode = "nearest"
        var coordinates = "half_pixel"
        var nearest = "round_prefer_floor"
        var cubicA = -0.75
        var excludeOutside = false
    }

    static func resize(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        var rule = ResizeRule()
        rule.mode = try node.string("mode", default: "nearest")
        let scalesInput = node.opset >= 11 ? 2 : 1
        if node.opset >= 11 {
            rule.coordinates = try node.string("coordinate_transformation_mode", default: "half_pixel")
            rule.nearest = try node.string("nearest_mode", default: "round_prefer_floor")
            rule.cubicA = Double(try node.float("cubic_coeff_a", default: -0.75))
            rule.excludeOutside = try node.int("exclude_outside", default: 0) != 0
        } else {
            (rule.coordinates, rule.nearest) = ("asymmetric", "simple")
        }
        if try node.int("antialias", default: 0) != 0 {
            throw node.error("antialiased resizing is not supported", .unsupportedOperators)
        }
        if rule.coordinates == "tf_crop_and_resize" {
            throw node.error("the tf_crop_and_resize coordinate mode is not supported", .unsupportedOperators)
        }
        let axes = try (node.ints("axes") ?? Array(0..<x.rank)).map { axis throws(ModelError) in
            try Self.axis(node, axis, rank: x.rank)
        }
        var scales = [Double](repeating: 1, count: x.rank)
        var sizes = x.shape
        let given = node.hasInput(scalesInput) ? try node.constant(scalesInput).reals : []
        if !given.isEmpty {
            guard given.count == axes.count, given.allSatisfy({ $0 > 0 && $0.isFinite }) else {
                throw node.error("scales \(given) must be positive, one per axis")
            }
            for (axis, scale) in zip(axes, given) {
                scales[axis] = scale
                sizes[axis] = try scaledSize(node, Double(x.shape[axis]) * scale)
            }
        } else if node.opset >= 11, node.hasInput(3) {
            let requested = try node.ints(input: 3)
            guard requested.count == axes.count, requested.allSatisfy({ $0 >= 0 }) else {
                throw node.error("sizes \(requested) must be one per axis")
            }
            for (axis, size) in zip(axes, requested) {
                sizes[axis] = size
                scales[axis] = Double(size) / Double(Swift.max(x.shape[axis], 1))
            }
            let policy = try node.string("keep_aspect_ratio_policy", default: "stretch")
            if policy != "stretch" {
                let ratios = axes.map { scales[$0] }
                guard let scale = policy == "not_larger" ? ratios.min() : ratios.max(),
                    ["not_larger", "not_smaller"].contains(policy)
                else {
                    throw node.error("keep_aspect_ratio_policy '\(policy)' is unknown", .invalidModel)
                }
                for axis in axes {
                    scales[axis] = scale
                    sizes[axis] = try scaledSize(node, scale * Double(x.shape[axis]) + 0.5)
                }
            }
        } else {
            throw node.error("needs scales or sizes", .invalidModel)
        }
        return [try node.output(try resized(node, x, sizes: sizes, scales: scales, rule: rule), try node.type(0))]
    }

    /// `Upsample` (opsets 7 and 9): `Resize` with asymmetric coordinates and scales as an attribute
    /// (7) or an input (9).
    static func upsample(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        let scales = node.opset >= 9 ? try node.constant(1).reals : (try node.floats("scales") ?? []).map { Double($0) }
        guard scales.count == x.rank, scales.allSatisfy({ $0 >= 1 && $0.isFinite }) else {
            throw node.error("scales \(scales) must be one per axis, each at least 1")
        }
        var rule = ResizeRule()
        rule.mode = try node.string("mode", default: "nearest")
        (rule.coordinates, rule.nearest) = ("asymmetric", "floor")
        var sizes: [Int] = []
        for (size, scale) in zip(x.shape, scales) { sizes.append(try scaledSize(node, Double(size) * scale)) }
        return [try node.output(try resized(node, x, sizes: sizes, scales: scales, rule: rule), try node.type(0))]
    }

    /// A scaled size rounded down, or an error when it is not a size memory could hold.
    private static func scaledSize(_ node: ONNXNodeContext, _ value: Double) throws(ModelError) -> Int {
        guard value.isFinite, value >= 0, value <= Double(Tensor.maximumByteCount / 4) else {
            throw node.error("a resized size of \(value) elements is not possible")
        }
        return Int(value.rounded(.down))
    }

    private static func resized(
        _ node: ONNXNodeContext, _ x: Tensor, sizes: [Int], scales: [Double], rule: ResizeRule
    ) throws(ModelError) -> Tensor {
        guard ["nearest", "linear", "cubic"].contains(rule.mode) else {
            throw node.error("mode '\(rule.mode)' is unknown", .invalidModel)
        }
        guard
            ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"].contains(
                rule.coordinates)
        else {
            throw node.error("coordinate mode '\(rule.coordinates)' is unknown", .invalidModel)
        }
        guard let total = Shape.elementCount(sizes), total <= Tensor.maximumByteCount / 4 else {
            throw node.error("resizing to \(describe(sizes)) needs more memory than the machine has")
        }
        var result = x
        for axis in 0..<x.rank where sizes[axis] != x.shape[axis] || Swift.abs(scales[axis] - 1) > 1e-12 {
            guard x.shape[axis] > 0 else { throw node.error("cannot resize an empty axis") }
            let taps = try neighbours(node, input: x.shape[axis], output: sizes[axis], scale: scales[axis], rule: rule)
            var sum: Tensor?
            for (indices, weights) in taps {
                let picks = Tensor.constant(indices, shape: [indices.count], op: "Resize", at: nil)
                var part = result.gathering(atIndices: picks, alongAxis: axis)
                if let weights {
                    let shape = (0..<x.rank).map { $0 == axis ? weights.count : 1 }
                    let w = Tensor.constant(weights, shape: shape, op: "Resize", at: nil)
                    part = Tensor.binary(
                        .multiply, part, part.dtype == .float32 ? w : w.converted(to: part.dtype), at: nil)
                }
                sum = sum.map { Tensor.binary(.add, $0, part, at: nil) } ?? part
            }
            if let sum { result = sum }
        }
        return result
    }

    /// Per tap: the neighbour index for each output position, and its weight (`nil` for nearest,
    /// whose one tap has weight 1).
    private static func neighbours(
        _ node: ONNXNodeContext, input: Int, output: Int, scale: Double, rule: ResizeRule
    ) throws(ModelError) -> [([Int32], [Float]?)] {
        let count = rule.mode == "nearest" ? 2 : rule.mode == "linear" ? 2 : 4
        let outputWidth = scale * Double(input)
        var indices = [[Int32]](repeating: [], count: count)
        var weights = [[Float]](repeating: [], count: count)
        var nearest: [Int32] = []
        for position in 0..<output {
            let y = Double(position)
            let source: Double =
                switch rule.coordinates {
                case "align_corners": outputWidth == 1 ? 0 : y * Double(input - 1) / (outputWidth - 1)
                case "asymmetric": y / scale
                case "pytorch_half_pixel": outputWidth == 1 ? -0.5 : (y + 0.5) / scale - 0.5
                case "half_pixel_symmetric":
                    Double(input) / 2 * (1 - Double(output) / outputWidth) + (y + 0.5) / scale - 0.5
                default: (y + 0.5) / scale - 0.5
                }
            let isWhole = source == source.rounded(.down)
            let ratio = isWhole ? 1 : source - source.rounded(.down)
            // The neighbours: `count` positions ending one past the last one at or left of the source.
            let base = Int(source.rounded(.up)) - 1 - (count / 2 - 1)
            var coefficients: [Double]
            switch rule.mode {
            case "nearest":
                let right: Bool =
                    switch rule.nearest {
                    case _ where isWhole: true
                    case "round_prefer_ceil": ratio >= 0.5
                    case "floor": false
                    case "ceil": true
                    case "simple": scale < 1
                    default: ratio > 0.5
                    }
                nearest.append(Int32(Swift.min(Swift.max(base + (right ? 1 : 0), 0), input - 1)))
                continue
            case "linear": coefficients = [1 - ratio, ratio]
            default:
                let a = rule.cubicA
                let (r, s) = (ratio, 1 - ratio)
                coefficients = [
                    ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                    ((a + 2) * r - (a + 3)) * r * r + 1,
                    ((a + 2) * s - (a + 3)) * s * s + 1,
                    ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
                ]
            }
            if rule.excludeOutside {
                for tap in 0..<count where !(0..<input).contains(base + tap) { coefficients[tap] = 0 }
                let total = coefficients.reduce(0, +)
                if total != 0 { coefficients = coefficients.map { $0 / total } }
            }
            for tap in 0..<count {
                indices[tap].append(Int32(Swift.min(Swift.max(base + tap, 0), input - 1)))
                weights[tap].append(Float(coefficients[tap]))
            }
        }
        if rule.mode == "nearest" { return [(nearest, nil)] }
        return (0..<count).map { (indices[$0], weights[$0]) }
    }
}
