import Testing
@testable import TensorEngine

/// `NodeMap` against `Dictionary` under random inserts, updates (both subscripts and `update`), removals and lookups, with ids
/// both dense (as nodes get them) and spread out (so probe runs wrap around the table).
@Suite("NodeMap")
struct NodeMapTests {
    @Test(arguments: [1 as UInt64, 7, 1 << 40])
    func agreesWithDictionary(spacing: UInt64) {
        var generator = SplitMix(seed: spacing)
        var map = NodeMap<Int>()
        var reference: [UInt64: Int] = [:]
        for step in 0..<20_000 {
            let id = 1 + (generator.next() % 600) * spacing
            switch generator.next() % 5 {
            case 0, 1:
                map[id] = step
                reference[id] = step
            case 2:
                let removed = map.removeValue(for: id), expected = reference.removeValue(forKey: id)
                #expect(removed == expected)
            case 3:
                // update: one probe, the value before the change returned.
                let before = map.update(id, default: -1) { value -> Int in
                    defer { value = value * 3 + 1 }
                    return value
                }
                #expect(before == reference[id] ?? -1)
                reference[id] = (reference[id] ?? -1) * 3 + 1
            default:
                map[id, default: 0] += 1
                reference[id, default: 0] += 1
            }
            if step % 97 == 0 {
                #expect(map.count == reference.count)
                for probe in 0..<600 as Range<UInt64> {
                    let key = 1 + probe * spacing
                    #expect(map[key] == reference[key], "id \(key) after step \(step)")
                }
            }
        }
    }

    @Test func setInsertsOnce() {
        var set = NodeSet()
        let first = set.insert(5), second = set.insert(5)
        #expect(first && !second)
        #expect(set.contains(5) && !set.contains(6) && set.count == 1)
    }
}

/// A small deterministic generator (SplitMix64) for the random operations.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
