/// The structure of a planned model, like Core ML's `MLModelStructure`: a program of functions,
/// each a block of operations.
///
/// A model's plan (``ComputePlan/load(contentsOf:configuration:inputShapes:)``) lists the model's
/// own operations (an ONNX model's nodes) in its `main` function; a plan of tensors lists the
/// engine's operations.
public enum ModelStructure: Sendable, Hashable {
    /// A program: functions of operations.
    case program(Program)
    /// A structure the engine cannot describe.
    case unsupported

    /// A program of named functions.
    public struct Program: Sendable, Hashable {
        /// The functions by name; `main` is the one a prediction runs.
        public let functions: [String: Function]
    }

    /// One function: its inputs and its block.
    public struct Function: Sendable, Hashable {
        /// The function's inputs.
        public let inputs: [NamedValueType]
        /// The operations it runs.
        public let block: Block
    }

    /// A sequence of operations.
    public struct Block: Sendable, Hashable {
        /// The block's inputs (none for a function's main block: it reads the function's).
        public let inputs: [NamedValueType]
        /// The operations in execution order.
        public let operations: [Operation]
        /// The names of the values the block gives.
        public let outputNames: [String]
    }

    /// One operation of a program.
    public struct Operation: Sendable, Hashable, CustomStringConvertible {
        /// Its position in the plan's main block: what ``ComputePlan/deviceUsage(for:)`` and
        /// ``ComputePlan/estimatedCost(of:)`` look up.
        public let identifier: Int
        /// The operation's name in the model (may be empty: ONNX does not require names).
        public let name: String
        /// The operator (`Conv`, `MatMul`; `com.microsoft.FusedGelu` outside the default domain;
        /// the engine's op name for a plan of tensors).
        public let operatorName: String
        /// The arguments by parameter name (`input0`, `input1`, ... in the model's order).
        public let inputs: [String: Argument]
        /// The values it defines.
        public let outputs: [NamedValueType]
        /// Nested blocks (control flow); the engine's plans have none.
        public let blocks: [Block]

        /// `MatMul 'layer.0/MatMul'`.
        public var description: String { name.isEmpty ? operatorName : "\(operatorName) '\(name)'" }
    }

    /// What an operation's parameter is bound to.
    public struct Argument: Sendable, Hashable {
        /// The values bound, in order (one for an ordinary operand).
        public let bindings: [Binding]

        /// A binding of a parameter.
        public enum Binding: Sendable, Hashable {
            /// A named value: a model input, a weight, or another operation's output.
            case name(String)
        }
    }

    /// A named value and, when the plan knows it, its type.
    public struct NamedValueType: Sendable, Hashable, CustomStringConvertible {
        /// The value's name.
        public let name: String
        /// Its shape, when known.
        public let shape: [Int]?
        /// Its element type, when known.
        public let scalarType: ScalarType?

        /// `logits: float32 [1, 5, 50]`.
        public var description: String {
            guard let shape, let scalarType else { return name }
            return "\(name): \(scalarType) \(describe(shape))"
        }
    }
}

extension ComputePlan.DeviceUsage {
    /// The device of the preferred backend (Core ML's `preferredComputeDevice`).
    public var preferredComputeDevice: ComputeDevice { ComputeDevice(preferred) }
    /// The devices of the supported backends (Core ML's `supportedComputeDevices`).
    public var supportedComputeDevices: [ComputeDevice] { supported.map(ComputeDevice.init) }
}
