/// One optional value per backend the planner may use, by the backend's position in its list:
/// the planner's per-backend tables, read and written for every step of every plan. The first
/// four are stored in place, without the hashing of a `Dictionary` or the allocation of an array;
/// a fifth and later backend spill into an array.
struct PerBackend<Value> {
    private var first: (Value?, Value?, Value?, Value?) = (nil, nil, nil, nil)
    private var rest: [Value?] = []

    init() {}

    subscript(index: Int) -> Value? {
        get {
            switch index {
            case 0: first.0
            case 1: first.1
            case 2: first.2
            case 3: first.3
            default: index - 4 < rest.count ? rest[index - 4] : nil
            }
        }
        set {
            switch index {
            case 0: first.0 = newValue
            case 1: first.1 = newValue
            case 2: first.2 = newValue
            case 3: first.3 = newValue
            default:
                while rest.count <= index - 4 { rest.append(nil) }
                rest[index - 4] = newValue
            }
        }
    }
}
