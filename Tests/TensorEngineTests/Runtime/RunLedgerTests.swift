import Testing
@testable import TensorEngine

/// The executor's bookkeeping: the slots a plan's template gives its positions, the live and
/// total bytes a run counts, and source locations kept as the caller's literal until read.
@Suite("Run ledger")
struct RunLedgerTests {
    /// `c = a·b`, `d = c·a`, `e = c·d` on the naive backend (products are never fused), asked
    /// for `e` and `c`: slots numbered targets first, then each step's operands and output; the
    /// reads of each value counted by hand.
    @Test func slotsAndReadsByHand() async throws {
        let a = Tensor(shape: [2, 2], scalars: [1, 2, 3, 4] as [Float])
        let b = Tensor(shape: [2, 2], scalars: [5, 6, 7, 8] as [Float])
        _ = try await Tensor.evaluate([a, b])
        let c = a.matmul(b), d = c.matmul(a), e = c.matmul(d)
        let targets = try [e, c].map { try #require($0.node) }
        let (plan, _) = try Engine.shared.plan(targets, policy: .only(.naive), reusingOtherSizes: false)
        #expect(plan.steps.map(\.output) == [2, 3, 4], "positions: a 0, b 1, c 2, d 3, e 4")
        let layout = plan.template.slots
        #expect(layout.count == 5)
        #expect((0..<5).map { layout.slot(of: $0) } == [2, 3, 1, 4, 0])
        // e: a target; c: a target, read by d and e; a: read by c and d; b: by c; d: by e.
        #expect(layout.reads == [1, 3, 2, 1, 1])
        #expect(layout.slot(of: 5) == nil && layout.slot(of: -1) == nil)
        #expect(!plan.template.concatenates)
    }

    /// Three products of 16 bytes each: all three counted once; at most all three alive (c is a
    /// target, kept to the end; d lives until e is made).
    @Test func liveAndTotalBytesOfARun() async throws {
        let a = Tensor(shape: [2, 2], scalars: [1, 2, 3, 4] as [Float])
        let b = Tensor(shape: [2, 2], scalars: [5, 6, 7, 8] as [Float])
        _ = try await Tensor.evaluate([a, b])
        let c = a.matmul(b), d = c.matmul(a), e = c.matmul(d)
        let statistics = try await withComputePolicy(.only(.naive)) { try await Tensor.evaluate([e, c]) }
        #expect(statistics.steps == 3 && statistics.copies == 0)
        #expect(statistics.totalIntermediateBytes == 48)
        #expect(statistics.peakLiveBytes == 48)
        // By hand: c = [[19, 22], [43, 50]], d = [[85, 126], [193, 286]].
        #expect(try await e.shapedArray(of: Float.self).scalars == [5861, 8686, 13305, 19718])
    }

    /// The ledger alone: a fresh buffer and a view of it, a concatenation's buffer and a part
    /// placed in it; each buffer counted once, and a value dropped after its last read.
    @Test func ledgerCountsBuffersBySlot() throws {
        // Slots: 0 a fresh value (read twice), 1 a view of it (read once), 2 a concatenation
        // (read once), 3 a part placed in it (read once, by the concatenation).
        var ledger = RunLedger(reads: [2, 1, 1, 1])
        let fresh = try HostBuffer(byteCount: 64), concatenation = try HostBuffer(byteCount: 256)
        func value(_ buffer: HostBuffer) -> Value {
            Value(buffer: buffer, layout: Layout(contiguous: [buffer.byteCount / 4]), scalarType: .float32)
        }
        ledger.store(value(fresh), at: 0, origin: .fresh)
        ledger.store(value(fresh), at: 1, origin: .sharing(operand: 0))
        ledger.store(value(concatenation), at: 3, origin: .placed(concatenation: 2))
        // The concatenation's step: its result is the buffer itself; then its operand's read done.
        ledger.store(value(concatenation), at: 2, origin: .placed(concatenation: 2))
        ledger.release(3)
        #expect(ledger.statistics.totalIntermediateBytes == 64 + 256)
        #expect(ledger.statistics.peakLiveBytes == 64 + 256)
        #expect(ledger.value(at: 3) == nil && ledger.value(at: 2) != nil)
        ledger.release(0)
        #expect(ledger.value(at: 0) != nil, "one read of two done")
        ledger.release(0)
        #expect(ledger.value(at: 0) == nil && ledger.value(at: 1) != nil, "the view keeps its own value")
        ledger.release(1)
        ledger.release(2)
        #expect(ledger.value(at: 1) == nil && ledger.value(at: 2) == nil)
        #expect(ledger.statistics.steps == 4)
    }

    /// A location from the caller's `#fileID` literal equals and hashes as one made from the
    /// same text.
    @Test func sourceLocationsFromLiteralsAndText() {
        let literal = SourceLocation("Module/File.swift" as StaticString, 42)
        let text = SourceLocation(fileID: "Module/File.swift", line: 42)
        #expect(literal == text && literal.hashValue == text.hashValue)
        #expect(literal.fileID == "Module/File.swift" && literal.description == "File.swift:42")
        #expect(literal != SourceLocation(fileID: "Module/File.swift", line: 43))
        #expect(literal != SourceLocation(fileID: "Module/Other.swift", line: 42))
    }
}
