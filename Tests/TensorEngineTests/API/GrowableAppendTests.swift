import Testing

@testable import TensorEngine

/// Appends into growable storage (``OpKind/append``): the values are a concatenation's, the result
/// is a prefix of a buffer with room after it, and appending to such a result again writes only
/// the new part in the same buffer, on every backend, without ever changing what an earlier view
/// sees.
@Suite("Growable appends") struct GrowableAppendTests {
    static var policies: [ComputePolicy] {
        var policies: [ComputePolicy] = [.only(.naive), .only(.openblas)]
        if BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) { policies.append(.only(.opencl)) }
        return policies
    }

    /// Runs `tensor` and returns its value where the plan left it (its own buffer and layout).
    static func runInPlace(_ tensor: Tensor, _ policy: ComputePolicy) throws -> Tensor {
        let node = try #require(tensor.node)
        let value = try Tensor.runKeepingPlan([node], policy: policy, inPlace: [true]).results[0]
        return Tensor.constant(value: value, op: "held")
    }

    static func scalars(_ tensor: Tensor) async throws -> [Float] {
        try await tensor.contiguousCopy().shapedArray(of: Float.self).scalars
    }

    @Test func geometryDoublesAndKeepsRoom() throws {
        let empty = Layout(contiguous: [1, 4, 0, 8])
        let first = try #require(AppendGeometry(axis: 2, first: empty, appended: 5))
        #expect(first.capacityShape == [1, 4, 16, 8])
        #expect(first.result.shape == [1, 4, 5, 8])
        #expect(first.result.strides == [512, 128, 8, 1])
        #expect(!first.extendsFirst)
        // A prefix with room: the same buffer, one longer.
        let next = try #require(AppendGeometry(axis: 2, first: first.result, appended: 1))
        #expect(next.capacityShape == [1, 4, 16, 8] && next.extendsFirst)
        #expect(next.result.shape == [1, 4, 6, 8] && next.result.strides == first.result.strides)
        // A full prefix doubles.
        let full = try #require(AppendGeometry(axis: 2, first: Layout(contiguous: [1, 4, 16, 8]), appended: 1))
        #expect(full.capacityShape == [1, 4, 32, 8] && !full.extendsFirst)
        // A strided operand is no prefix: a new buffer, at least what is needed.
        let strided = Layout(shape: [3, 2], strides: [1, 3], offset: 0)
        let fresh = try #require(AppendGeometry(axis: 1, first: strided, appended: 40))
        #expect(fresh.capacityShape == [3, 84])
        // Sizes whose buffer would not count in an Int have no geometry (a typed error at run time).
        #expect(AppendGeometry(axis: 0, first: Layout(contiguous: [Int.max / 4, 2]), appended: 1) == nil)
    }

    @Test func valuesAreAConcatenationsOnEveryBackend() async throws {
        let past = random([1, 4, 3, 8], seed: 1)
        let new = random([1, 8, 4, 1], seed: 2).transposed(permutation: 0, 2, 3, 1)  // [1, 4, 1, 8], strided
        let expected = try await Self.scalars(Tensor(concatenating: [past, new], alongAxis: 2))
        for policy in Self.policies {
            let appended = past.appending([new], alongAxis: 2)
            #expect(appended.shape == [1, 4, 4, 8])
            try await Tensor.evaluate([appended], policy: policy)
            #expect(try await Self.scalars(appended) == expected, "\(policy)")
        }
    }

    /// A decoder's loop: each step appends to the last step's result, in its buffer, until the
    /// capacity runs out and doubles; a second branch from an old prefix copies and leaves the
    /// first branch's values as they were.
    @Test func appendsInPlaceUntilTheCapacityDoubles() async throws {
        for policy in Self.policies {
            let prompt = random([2, 3, 0, 4], seed: 3).appending([random([2, 3, 5, 4], seed: 4)], alongAxis: 2)
            var cache = try Self.runInPlace(prompt, policy)
            let firstBuffer = try #require(cache.node?.storedResult?.buffer)
            #expect(firstBuffer.growth?.capacityShape == [2, 3, 16, 4], "\(policy)")
            #expect(firstBuffer.growth?.filled == 5)
            var buffers: [ObjectIdentifier] = [ObjectIdentifier(firstBuffer)]
            var branchPoint: Tensor?
            for step in 0..<14 {
                let token = random([2, 3, 1, 4], seed: 10 + step)
                if step == 3 { branchPoint = cache }
                let expected = try await Self.scalars(Tensor(concatenating: [cache, token], alongAxis: 2))
                cache = try Self.runInPlace(cache.appending([token], alongAxis: 2), policy)
                #expect(try await Self.scalars(cache) == expected, "\(policy) step \(step)")
                let buffer = try #require(cache.node?.storedResult?.buffer)
                if buffers.last != ObjectIdentifier(buffer) { buffers.append(ObjectIdentifier(buffer)) }
            }
            // Lengths 6...19: one buffer up to 16, a second (capacity 32) from 17 on.
            #expect(buffers.count == 2, "\(policy): \(buffers.count) buffers")
            #expect(cache.node?.storedResult?.buffer.growth?.capacityShape == [2, 3, 32, 4])
            if policy == .only(.opencl) {
                #expect(cache.node?.storedResult?.memorySpace != .host, "the cache stays on the device")
            }
            // Branching from length 8 (the buffer is filled to 16): a copy, and the main line's
            // values are untouched.
            let branch = try #require(branchPoint)
            let before = try await Self.scalars(cache)
            let other = try Self.runInPlace(branch.appending([random([2, 3, 1, 4], seed: 99)], alongAxis: 2), policy)
            #expect(other.node?.storedResult?.buffer !== branch.node?.storedResult?.buffer)
            #expect(try await Self.scalars(cache) == before)
            let expected = try await Self.scalars(Tensor(concatenating: [branch, random([2, 3, 1, 4], seed: 99)], alongAxis: 2))
            #expect(try await Self.scalars(other) == expected)
        }
    }

    /// Two appends in one graph: the second writes into the first's new buffer.
    @Test func chainedAppendsInOneGraph() async throws {
        let parts = (0..<3).map { random([3, 2, 5], seed: 40 + $0) }
        let expected = try await Self.scalars(Tensor(concatenating: parts, alongAxis: 1))
        for policy in Self.policies {
            let chained = parts[0].appending([parts[1]], alongAxis: 1).appending([parts[2]], alongAxis: 1)
            let held = try Self.runInPlace(chained, policy)
            #expect(held.node?.storedResult?.buffer.growth?.filled == 6, "\(policy)")
            #expect(try await Self.scalars(held) == expected, "\(policy)")
        }
    }
}

extension Tensor {
    /// A row-major copy (the held values above are prefixes of larger buffers, or on a device).
    func contiguousCopy() -> Tensor { Tensor.record(.contiguous, [self], at: nil) }
}
