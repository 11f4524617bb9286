import CIntrinsics
import Foundation

/// Operands of products packed once for the engine's AVX-512 kernel and kept while their buffer
/// lives: a model's weights, which every prediction multiplies by. A matmul's weight is its
/// right-hand operand (B); a convolution's filters are the left-hand one (A).
///
/// onnxruntime packs a `MatMul`'s constant weight when the session is made; the engine's graph is
/// rebuilt on every call and does not say which operand is a weight. What it does say: a host
/// buffer is written once and then only read (``HostBuffer``), so the same buffer at the same
/// offset and layout holds the same matrix for as long as it lives. An operand seen a second time
/// is packed and kept; later products read the packed panels in order instead of packing B again
/// (large products) or reading it in place 32 columns at a time, one row every `ldb` floats (few
/// rows of A: a transformer at batch 1). An entry dies with its buffer (a weak reference), and
/// the least recently used go first beyond ``budget`` (`TENSORENGINE_PACKED_WEIGHTS_BYTES`,
/// default 256 MiB; 0 turns the cache off).
final class PackedWeights: Sendable {
    static let shared = PackedWeights()

    /// Bytes of packed operands kept at most.
    let budget: Int
    private let state = Guarded(State())

    /// Which operand of a product a matrix is, each packed its own way.
    enum Side: Hashable {
        /// A, packed whole by `te_pack_a_whole` (row-major).
        case left
        /// B, packed by `te_pack_b_panels` (row-major or stored transposed).
        case right
    }

    /// One operand: the buffer's identity and the matrix's place, side and layout in it (`k` steps
    /// of the product, `other` rows of A or columns of B, `leading` floats between its rows).
    struct Key: Hashable {
        let buffer: ObjectIdentifier
        let byteOffset: Int
        let side: Side
        let k: Int
        let other: Int
        let leading: Int
        let transposed: Bool
    }

    /// What is known of an operand: its buffer (weakly: the entry dies with it) and, from its
    /// second product on, its packed form.
    private final class Entry: @unchecked Sendable {
        weak var source: HostBuffer?
        var packed: HostBuffer?
        var lastUse: UInt64

        init(source: HostBuffer, lastUse: UInt64) {
            self.source = source
            self.lastUse = lastUse
        }
    }

    private struct State: Sendable {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    init() {
        let configured = ProcessInfo.processInfo.environment["TENSORENGINE_PACKED_WEIGHTS_BYTES"].flatMap(MemoryLimit.parse)
        budget = configured ?? 256 << 20
    }

    /// The packed form of B (`k × n`, rows `ldb` apart or stored transposed, at `b` inside
    /// `source`) when it has been seen before, packing it now on its second sighting; `nil` on its
    /// first, when it does not fit the budget, or when memory runs out.
    func packed(_ b: UnsafePointer<Float>, in source: HostBuffer, transposed: Bool, k: Int, n: Int, ldb: Int,
                workers: Int) -> HostBuffer? {
        let key = Key(
            buffer: ObjectIdentifier(source), byteOffset: UnsafeRawPointer(b) - UnsafeRawPointer(source.pointer),
            side: .right, k: k, other: n, leading: ldb, transposed: transposed)
        return kept(key, source: source, floats: te_packed_b_floats(k, n)) { destination in
            let panels = (n + TE_NR - 1) / TE_NR
            Parallel.forEachRange(panels, parts: Swift.min(workers, panels)) { range in
                te_pack_b_panels(transposed ? 1 : 0, k, n, b, ldb, destination, range.lowerBound, range.upperBound)
            }
        }
    }

    /// The packed form of row-major A (`m × k`, rows `lda` apart, at `a` inside `source`) for
    /// `te_sgemm_packed_ab`, as ``packed(_:in:transposed:k:n:ldb:workers:)`` keeps B: `nil` on its
    /// first sighting, packed on its second. Packing takes one thread (the callers' workers are
    /// busy with their own pieces).
    func packedLeft(_ a: UnsafePointer<Float>, in source: HostBuffer, m: Int, k: Int, lda: Int) -> HostBuffer? {
        let key = Key(
            buffer: ObjectIdentifier(source), byteOffset: UnsafeRawPointer(a) - UnsafeRawPointer(source.pointer),
            side: .left, k: k, other: m, leading: lda, transposed: false)
        return kept(key, source: source, floats: te_packed_a_floats(m, k)) { destination in
            te_pack_a_whole(a, lda, m, k, destination)
        }
    }

    /// The kept packed form for `key`, packing it with `pack` on its second sighting.
    private func kept(
        _ key: Key, source: HostBuffer, floats: Int, pack: (UnsafeMutablePointer<Float>) -> Void
    ) -> HostBuffer? {
        let bytes = floats * MemoryLayout<Float>.stride
        guard budget > 0, bytes <= budget / 4 else { return nil }
        let known: HostBuffer?? = state.withLock { state in
            state.clock += 1
            if let entry = state.entries[key], entry.source === source {
                entry.lastUse = state.clock
                return .some(entry.packed)
            }
            // First sighting (or a new buffer where a freed one was): remember it. Most operands
            // are seen once, in buffers soon freed: their entries go every 256 sightings.
            if let stale = state.entries[key] { state.bytes -= stale.packed?.byteCount ?? 0 }
            state.entries[key] = Entry(source: source, lastUse: state.clock)
            if state.clock % 256 == 0 { evict(&state) }
            return .none
        }
        guard case .some(let existing) = known else { return nil }
        if let existing { return existing }
        // Second sighting: pack, outside the lock (a product racing this one packs its own).
        guard let packed = try? HostBuffer(byteCount: bytes, op: "pack weights") else { return nil }
        pack(packed.elements(as: Float.self))
        state.withLock { state in
            guard let entry = state.entries[key], entry.source === source, entry.packed == nil else { return }
            entry.packed = packed
            state.bytes += bytes
            evict(&state)
        }
        return packed
    }

    /// Drops entries whose buffer is gone, then the least recently used packed ones beyond the budget.
    private func evict(_ state: inout State) {
        for (key, entry) in state.entries where entry.source == nil {
            state.bytes -= entry.packed?.byteCount ?? 0
            state.entries[key] = nil
        }
        while state.bytes > budget,
            let oldest = state.entries.filter({ $0.value.packed != nil }).min(by: { $0.value.lastUse < $1.value.lastUse })
        {
            state.bytes -= oldest.value.packed?.byteCount ?? 0
            state.entries[oldest.key] = nil
        }
    }

    /// Bytes of packed operands held.
    var packedBytes: Int { state.withLock { $0.bytes } }
}
