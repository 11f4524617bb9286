/// A hash map from node ids to values, for the graph walks that run on every evaluation.
///
/// Node ids are non-zero integers handed out in sequence, so a multiplicative (Fibonacci) hash
/// spreads them well over a power-of-two table, probed linearly. `Dictionary`'s hashing (SipHash
/// with a per-process seed, resilient to adversarial keys these are not) was the largest single
/// cost of planning a small graph from the cache.
struct NodeMap<Value> {
    /// 0 marks an empty slot (no node has id 0).
    private var keys: [UInt64]
    private var values: [Value?]
    private var shift: UInt64
    /// The number of ids held.
    private(set) var count = 0

    /// A map sized for about `capacity` ids without growing.
    init(capacity: Int = 0) {
        var slots = 8
        while slots < capacity * 2 { slots *= 2 }
        keys = Array(repeating: 0, count: slots)
        values = Array(repeating: nil, count: slots)
        shift = UInt64(64 - slots.trailingZeroBitCount)
    }

    private var mask: Int { keys.count - 1 }

    @inline(__always)
    private func home(_ id: UInt64) -> Int { Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    /// The slot holding `id`, or the empty slot where it would go.
    @inline(__always)
    private func slot(of id: UInt64) -> (index: Int, found: Bool) {
        var index = home(id)
        while true {
            let key = keys[index]
            if key == id { return (index, true) }
            if key == 0 { return (index, false) }
            index = (index + 1) & mask
        }
    }

    /// The value for `id`; assigning `nil` removes it.
    subscript(id: UInt64) -> Value? {
        get {
            let (index, found) = slot(of: id)
            return found ? values[index] : nil
        }
        set {
            if let newValue { insert(newValue, for: id) } else { _ = removeValue(for: id) }
        }
    }

    /// The value for `id`, or `defaultValue` (stored on first assignment).
    subscript(id: UInt64, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[id] ?? defaultValue() }
        set { insert(newValue, for: id) }
    }

    mutating func insert(_ value: Value, for id: UInt64) {
        var (index, found) = slot(of: id)
        if !found {
            if (count + 1) * 2 > keys.count {
                grow()
                index = slot(of: id).index
            }
            keys[index] = id
            count += 1
        }
        values[index] = value
    }

    /// Removes `id`, returning its value; later ids of its probe run move back into the gap, so
    /// lookups never need tombstones.
    @discardableResult
    mutating func removeValue(for id: UInt64) -> Value? {
        let (found, present) = slot(of: id)
        guard present else { return nil }
        let removed = values[found]
        var gap = found
        var index = (gap + 1) & mask
        while keys[index] != 0 {
            let wanted = home(keys[index])
            // Move the entry back unless its home lies cyclically in (gap, index].
            let stays = gap < index ? (gap < wanted && wanted <= index) : (gap < wanted || wanted <= index)
            if !stays {
                keys[gap] = keys[index]
                values[gap] = values[index]
                gap = index
            }
            index = (index + 1) & mask
        }
        keys[gap] = 0
        values[gap] = nil
        count -= 1
        return removed
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        keys = Array(repeating: 0, count: oldKeys.count * 2)
        values = Array(repeating: nil, count: oldKeys.count * 2)
        shift -= 1
        for (key, value) in zip(oldKeys, oldValues) where key != 0 {
            let index = slot(of: key).index
            keys[index] = key
            values[index] = value
        }
    }
}

/// A set of node ids (a ``NodeMap`` without values).
struct NodeSet {
    private var map: NodeMap<Void>

    init(capacity: Int = 0) { map = NodeMap(capacity: capacity) }

    var count: Int { map.count }

    func contains(_ id: UInt64) -> Bool { map[id] != nil }

    /// Adds `id`; `false` when it was already there.
    @discardableResult
    mutating func insert(_ id: UInt64) -> Bool {
        guard map[id] == nil else { return false }
        map.insert((), for: id)
        return true
    }
}
