/// Where in the caller's source an operation was recorded.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file as the call gave it: every recorded operation takes its caller's `#fileID`, and
    /// a `String` made of it on each call was a tenth of recording an op; it is made when asked.
    private enum File: Sendable {
        case literal(StaticString)
        case text(String)
    }

    private let file: File
    /// The line of the call.
    public let line: Int

    /// The `#fileID` of the call (`Module/File.swift`).
    public var fileID: String {
        switch file {
        case .literal(let literal): "\(literal)"
        case .text(let text): text
        }
    }

    /// Creates a location from a `#fileID` and `#line`.
    public init(fileID: String, line: Int) {
        file = .text(fileID)
        self.line = line
    }

    init(_ fileID: StaticString, _ line: UInt) {
        file = .literal(fileID)
        self.line = Int(line)
    }

    /// `File.swift:42` (the file name without its module).
    public var description: String {
        let fileID = fileID
        let file = fileID.split(separator: "/").last.map(String.init) ?? fileID
        return "\(file):\(line)"
    }

    public static func == (left: SourceLocation, right: SourceLocation) -> Bool {
        left.line == right.line && left.fileID == right.fileID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fileID)
        hasher.combine(line)
    }
}

/// The error a tensor operation produces instead of crashing.
///
/// An invalid operation (a shape mismatch, an axis out of range, ...) does not trap: it yields a
/// ``Tensor`` that carries this error (see ``Tensor/error``). Later operations on that tensor carry
/// the same first error, and materializing it throws it. Errors that only show at run time (an
/// out-of-range gather index, a failed allocation, a backend failure) are thrown by materialization.
///
/// The description reads `add at Model.swift:42: shapes [3, 4] and [5] cannot be broadcast`.
public struct TensorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in categories a caller can switch over.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Operand shapes are incompatible (broadcasting, matmul, concatenation, ...).
        case shapeMismatch
        /// An axis is outside `-rank..<rank`, repeated, or otherwise invalid.
        case invalidAxis
        /// A reshape asks for a different number of elements.
        case invalidReshape
        /// An operand has a scalar type the op does not accept, or operands' types differ.
        case scalarTypeMismatch
        /// An index (subscript, gather, split) is outside its dimension.
        case indexOutOfRange
        /// An argument is invalid for another reason (negative count, bad permutation, ...).
        case invalidArgument
        /// The tensor is too large to represent or allocate.
        case tooLarge
        /// Memory could not be allocated at run time.
        case outOfMemory
        /// The plan's intermediates would exceed the configured memory limit; nothing was run.
        case memoryLimitExceeded
        /// No backend allowed by the compute policy can run the op.
        case unsupported
        /// A backend or device failed while running (device lost, kernel build failure, ...).
        case backendFailure
        /// A value passed to materialization does not match the tensor (e.g. asking an `Int32`
        /// tensor for `Float` scalars).
        case materialization
    }

    /// The category of the error.
    public let kind: Kind
    /// The name of the operation that failed (`add`, `matmul`, `reshape`, ...).
    public let op: String
    /// The shapes of the operation's operands, in order.
    public let operandShapes: [[Int]]
    /// A sentence describing the problem, naming the offending shapes or values.
    public let message: String
    /// The user's call site, when the API could capture it (operators cannot: see the README).
    public let location: SourceLocation?

    /// Creates an error.
    public init(
        _ kind: Kind, op: String, operandShapes: [[Int]] = [], message: String,
        location: SourceLocation? = nil
    ) {
        self.kind = kind
        self.op = op
        self.operandShapes = operandShapes
        self.message = message
        self.location = location
    }

    /// `op at File.swift:42: message`, or `op: message` without a location.
    public var description: String {
        if let location { return "\(op) at \(location): \(message)" }
        return "\(op): \(message)"
    }

    /// The same error with a location, if it had none.
    func locatedIfUnknown(_ fallback: SourceLocation?) -> TensorError {
        guard location == nil, let fallback else { return self }
        return TensorError(kind, op: op, operandShapes: operandShapes, message: message, location: fallback)
    }
}

/// Formats a shape as `[3, 4]`.
package func describe(_ shape: [Int]) -> String {
    "[" + shape.map(String.init).joined(separator: ", ") + "]"
}
