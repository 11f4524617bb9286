/// One optional value per backend kind, stored in place: the planner's per-backend tables, read
/// and written for every step of every plan, without the hashing and allocation of a
/// `Dictionary`.
struct PerBackend<Value> {
    private var naive: Value?
    private var openblas: Value?
    private var opencl: Value?

    init() {}

    subscript(kind: BackendKind) -> Value? {
        get {
            switch kind {
            case .naive: naive
            case .openblas: openblas
            case .opencl: opencl
            }
        }
        set {
            switch kind {
            case .naive: naive = newValue
            case .openblas: openblas = newValue
            case .opencl: opencl = newValue
            }
        }
    }
}
