/// The executor's bookkeeping for one run of a plan, by slot (``SlotLayout``): each value a step
/// produced (sources keep theirs on their nodes), how many reads of it are still to come, and the
/// buffers alive, counted by the slot whose step made each one (a source's buffer is not counted).
///
/// Buffers are tracked by slot, in one array: a prepared model runs hundreds of steps per call,
/// and hashing each one's buffer cost more than many of its kernels. A struct with mutating
/// methods, where nested functions capturing the run's variables had each access to them checked
/// for exclusivity at run time.
struct RunLedger {
    private struct Slot {
        var value: Value?
        var remaining: Int
        /// The slot whose step made the value's buffer, or -1 (a source's, or not counted).
        var maker = -1
        /// For a slot whose step made a buffer: its bytes and how many live values share it.
        var bufferBytes = 0
        var bufferReaders = 0
    }

    /// Where a step's result lives, for the count of live bytes.
    enum Origin {
        /// A buffer of its own.
        case fresh
        /// A part of the buffer of the concatenation at this slot (counted once, under it).
        case placed(concatenation: Int)
        /// The buffer of the operand at this slot (a view).
        case sharing(operand: Int)
        /// Not counted: a view of an operand moved between memory spaces for the step.
        case uncounted
    }

    private var slots: [Slot]
    private var liveBytes = 0
    private(set) var statistics = EvaluationStatistics(peakLiveBytes: 0, totalIntermediateBytes: 0, steps: 0, copies: 0)

    /// A ledger for a run whose slots have these reads each (``SlotLayout/reads``).
    init(reads: [Int]) {
        slots = reads.map { Slot(remaining: $0) }
    }

    /// The value held at a slot, if any.
    func value(at slot: Int) -> Value? { slots[slot].value }

    /// Sets a source's value for this run (a binding): not counted.
    mutating func bind(_ value: Value, at slot: Int) { slots[slot].value = value }

    /// Counts a copy between memory spaces.
    mutating func countCopy() { statistics.copies += 1 }

    /// Stores a step's result at its slot and counts its buffer by where it lives.
    mutating func store(_ result: Value, at slot: Int, origin: Origin) {
        statistics.steps += 1
        slots[slot].value = result
        switch origin {
        case .fresh:
            slots[slot].maker = slot
            slots[slot].bufferReaders = 1
            allocated(result.buffer.byteCount, at: slot)
        case .placed(let concatenation):
            if slots[concatenation].bufferReaders == 0 { allocated(result.buffer.byteCount, at: concatenation) }
            slots[slot].maker = concatenation
            slots[concatenation].bufferReaders += 1
        case .sharing(let operand):
            let maker = slots[operand].maker
            guard maker >= 0 else { return }
            slots[slot].maker = maker
            slots[maker].bufferReaders += 1
        case .uncounted:
            break
        }
    }

    private mutating func allocated(_ bytes: Int, at slot: Int) {
        slots[slot].bufferBytes = bytes
        liveBytes += bytes
        statistics.totalIntermediateBytes += bytes
        statistics.peakLiveBytes = max(statistics.peakLiveBytes, liveBytes)
    }

    /// One read of the value at a slot done: after its last, the value is dropped and its
    /// buffer's bytes stop counting once no live value shares it.
    mutating func release(_ slot: Int) {
        slots[slot].remaining -= 1
        guard slots[slot].remaining == 0, slots[slot].value != nil else { return }
        slots[slot].value = nil
        let maker = slots[slot].maker
        guard maker >= 0 else { return }
        slots[maker].bufferReaders -= 1
        if slots[maker].bufferReaders == 0 { liveBytes -= slots[maker].bufferBytes }
    }
}
