/// A hash map from node ids to values, for the graph walks that run on every evaluation.
///
/// Node ids are non-zero integers handed out in sequence, so a multiplicative (Fibonacci) hash
/// spreads them well over a power-of-two table, probed linearly. `Dictionary`'s hashing (SipHash
/// with a per-process seed, resilient to adversarial keys these are not) was the largest single
/// cost of planning a small graph from the cache.
struct NodeMap<Value> {
    /// An id and its value; id 0 marks an empty slot (no node has id 0). Keys and values share
    /// one array: one allocation per map, and an array of this struct rather than of `UInt64`,
    /// whose prespecialised metadata the runtime looks up in a shared table on every allocation.
    private struct Slot {
        var id: UInt64
        var value: Value?
    }

    private var slots: [Slot]
    private var shift: UInt64
    /// The number of ids held.
    private(set) var count = 0

    /// A map sized for about `capacity` ids without growing.
    init(capacity: Int = 0) {
        var size = 8
        while size < capacity * 2 { size *= 2 }
        slots = Array(repeating: Slot(id: 0, value: nil), count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    private var mask: Int { slots.count - 1 }

    @inline(__always)
    private func home(_ id: UInt64) -> Int { Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    /// The slot holding `id`, or the empty slot where it would go.
    @inline(__always)
    private func slot(of id: UInt64) -> (index: Int, found: Bool) {
        var index = home(id)
        while true {
            let key = slots[index].id
            if key == id { return (index, true) }
            if key == 0 { return (index, false) }
            index = (index + 1) & mask
        }
    }

    /// The value for `id`; assigning `nil` removes it.
    subscript(id: UInt64) -> Value? {
        get {
            let (index, found) = slot(of: id)
            return found ? slots[index].value : nil
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

    /// Runs `body` on the value for `id` (inserted as `defaultValue` first when absent) and
    /// stores the result back: one probe where a read and an assignment take two.
    @inline(__always)
    mutating func update<Result>(_ id: UInt64, default defaultValue: @autoclosure () -> Value, _ body: (inout Value) -> Result) -> Result {
        var (index, found) = slot(of: id)
        if !found, (count + 1) * 2 > slots.count {
            grow()
            index = slot(of: id).index
        }
        var value = found ? slots[index].value ?? defaultValue() : defaultValue()
        let result = body(&value)
        if !found { count += 1 }
        slots[index] = Slot(id: id, value: value)
        return result
    }

    mutating func insert(_ value: Value, for id: UInt64) {
        var (index, found) = slot(of: id)
        if !found {
            if (count + 1) * 2 > slots.count {
                grow()
                index = slot(of: id).index
            }
            slots[index].id = id
            count += 1
        }
        slots[index].value = value
    }

    /// Removes `id`, returning its value; later ids of its probe run move back into the gap, so
    /// lookups never need tombstones.
    @discardableResult
    mutating func removeValue(for id: UInt64) -> Value? {
        let (found, present) = slot(of: id)
        guard present else { return nil }
        let removed = slots[found].value
        var gap = found
        var index = (gap + 1) & mask
        while slots[index].id != 0 {
            let wanted = home(slots[index].id)
            // Move the entry back unless its home lies cyclically in (gap, index].
            let stays = gap < index ? (gap < wanted && wanted <= index) : (gap < wanted || wanted <= index)
            if !stays {
                slots[gap] = slots[index]
                gap = index
            }
            index = (index + 1) & mask
        }
        slots[gap] = Slot(id: 0, value: nil)
        count -= 1
        return removed
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(id: 0, value: nil), count: old.count * 2)
        shift -= 1
        for entry in old where entry.id != 0 {
            slots[slot(of: entry.id).index] = entry
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
