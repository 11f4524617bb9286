import TensorEngine
/// Bad input of every kind, with the error it must give: shared by the Swift Testing suite's
/// error tests and the `tensorengine-check` runner.
package struct ErrorCheck: Sendable {
    package let name: String
    let kind: TensorError.Kind
    let op: String
    let build: @Sendable () -> Tensor
    /// Whether the error shows only when the graph runs (else it is known when recording).
    let atRunTime: Bool

    /// `nil` when the tensor carries (or materialization throws) the expected error, else why not.
    package func run() async -> String? {
        let tensor = build()
        let error: TensorError?
        if atRunTime {
            guard tensor.error == nil else { return "known too early: \(String(describing: tensor.error))" }
            do {
                try await Tensor.evaluate([tensor])
                error = nil
            } catch let thrown {
                error = thrown
            }
        } else {
            error = tensor.error
        }
        guard let error else { return "no error" }
        guard error.kind == kind, error.op == op else { return "got \(error.kind) from \(error.op): \(error)" }
        return nil
    }
}

package enum ErrorChecks {
    static let matrix = Tensor(shape: [3, 4], scalars: [Float](repeating: 1, count: 12))
    static let vector = Tensor(shape: [5], scalars: [Float](repeating: 1, count: 5))
    static let integers = Tensor(shape: [3, 4], scalars: [Int32](repeating: 1, count: 12))

    /// One check per error kind the front end and the executor raise.
    package static let all: [ErrorCheck] = [
        ErrorCheck(name: "broadcast mismatch", kind: .shapeMismatch, op: "add", build: { matrix + vector }, atRunTime: false),
        ErrorCheck(name: "matmul mismatch", kind: .shapeMismatch, op: "matmul", build: { matrix.matmul(matrix) }, atRunTime: false),
        ErrorCheck(name: "axis out of range", kind: .invalidAxis, op: "sum", build: { matrix.sum(alongAxes: 2) }, atRunTime: false),
        ErrorCheck(name: "repeated axis", kind: .invalidAxis, op: "mean", build: { matrix.mean(alongAxes: 1, -1) }, atRunTime: false),
        ErrorCheck(name: "reshape count", kind: .invalidReshape, op: "reshape", build: { matrix.reshaped(to: [5, 5]) }, atRunTime: false),
        ErrorCheck(name: "mixed scalar types", kind: .scalarTypeMismatch, op: "multiply", build: { matrix * integers }, atRunTime: false),
        ErrorCheck(name: "exp of integers", kind: .scalarTypeMismatch, op: "exp", build: { integers.exp() }, atRunTime: false),
        ErrorCheck(name: "subscript out of range", kind: .indexOutOfRange, op: "subscript", build: { matrix[3] }, atRunTime: false),
        ErrorCheck(name: "gather index out of range", kind: .indexOutOfRange, op: "gather",
                   build: { matrix.gathering(atIndices: Tensor([0, 7] as [Int32]), alongAxis: 0) }, atRunTime: true),
        ErrorCheck(name: "bad permutation", kind: .invalidArgument, op: "transpose", build: { matrix.transposed(permutation: 1, 1) }, atRunTime: false),
        ErrorCheck(name: "uneven split", kind: .invalidArgument, op: "split", build: { matrix.split(count: 3, alongAxis: 1)[0] }, atRunTime: false),
        ErrorCheck(name: "too large", kind: .tooLarge, op: "init(repeating:shape:)", build: { Tensor(zeros: [1 << 31, 1 << 31]) }, atRunTime: false),
        ErrorCheck(name: "first error propagates", kind: .invalidReshape, op: "reshape", build: { (matrix.reshaped(to: [7]) + 1).softmax() }, atRunTime: false),
    ]
}
