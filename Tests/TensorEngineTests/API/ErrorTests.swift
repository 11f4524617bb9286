import Testing
@testable import TensorEngine
import TensorEngineChecks

/// Bad input gives a typed error naming the op, the shapes and the call site; never a crash.
@Suite("Errors instead of crashes")
struct ErrorTests {
    let a = Tensor(shape: [3, 4], scalars: [Float](repeating: 1, count: 12))
    let b = Tensor(shape: [5], scalars: [Float](repeating: 1, count: 5))

    /// Materializes and returns the thrown error.
    func thrown(_ t: Tensor, line: UInt = #line) async -> TensorError? {
        do {
            _ = try await t.shapedArray(of: Float.self, line: line)
            return nil
        } catch {
            return error
        }
    }

    @Test func shapeMismatchNamesOpAndShapes() async throws {
        let sum = a.pointwiseMax(b)
        let error = try #require(sum.error, "the error is known without materializing")
        #expect(error.kind == .shapeMismatch)
        #expect(error.op == "maximum")
        #expect(error.operandShapes == [[3, 4], [5]])
        #expect(error.description.hasPrefix("maximum at ErrorTests.swift:"))
        #expect(error.description.hasSuffix("shapes [3, 4] and [5] cannot be broadcast"))
        let thrown = try #require(await thrown(sum))
        #expect(thrown == error)
    }

    /// Operands of one shape take the recording's shortcut past broadcasting; their type rule is
    /// still checked, and its error names the op and both shapes as any other.
    @Test func sameShapeOperandsOfTwoTypesNameOpAndShapes() throws {
        let integers = Tensor(shape: [3, 4], scalars: [Int32](repeating: 1, count: 12))
        let error = try #require((a * integers).error)
        #expect(error.kind == .scalarTypeMismatch)
        #expect(error.op == "multiply")
        #expect(error.operandShapes == [[3, 4], [3, 4]])
        #expect(error.description.hasSuffix("scalar types float32 and int32 differ"))
        #expect((a * a).error == nil)
        #expect((a.pointwiseMax(a) - a).error == nil)
    }

    @Test func operatorErrorsTakeTheMaterializationSite() async throws {
        let line: UInt = #line + 1
        let sum = a + b
        #expect(sum.error?.location == nil, "operators cannot capture their call site")
        let error = try #require(await thrown(sum, line: line))
        #expect(error.description == "add at ErrorTests.swift:\(line): shapes [3, 4] and [5] cannot be broadcast")
    }

    @Test func laterOpsCarryTheFirstError() async throws {
        let broken = a.reshaped(to: [5, 5])
        let later = (broken.exp() * 2).sum(alongAxes: 0).softmax()
        #expect(later.error == broken.error)
        #expect(later.error?.kind == .invalidReshape)
        #expect(later.error?.message.contains("[3, 4]") == true)
        #expect(later.error?.message.contains("[5, 5]") == true)
        #expect(later.description.contains("reshape"))
    }

    @Test func invalidAxes() {
        #expect(a.sum(alongAxes: 2).error?.kind == .invalidAxis)
        #expect(a.sum(alongAxes: 0, -2).error?.kind == .invalidAxis, "a repeated axis")
        #expect(a.softmax(alongAxis: -3).error?.kind == .invalidAxis)
        #expect(a.argmax(alongAxis: 7).error?.op == "argmax")
        #expect(a.squeezingShape(at: 0).error?.kind == .invalidAxis, "axis 0 has size 3")
        #expect(a.expandingShape(at: 4).error?.kind == .invalidAxis)
        #expect(Tensor(concatenating: [a, a], alongAxis: 2).error?.kind == .invalidAxis)
    }

    @Test func scalarTypeMismatches() {
        let ints = Tensor(shape: [3, 4], scalars: [Int32](repeating: 1, count: 12))
        #expect((a + ints).error?.kind == .scalarTypeMismatch)
        #expect(ints.exp().error?.kind == .scalarTypeMismatch)
        #expect(ints.matmul(ints.transposed()).error?.kind == .scalarTypeMismatch)
        #expect(a.replacing(with: a, where: a).error?.kind == .scalarTypeMismatch, "the mask must be Bool")
        #expect(a.gathering(atIndices: a, alongAxis: 0).error?.kind == .scalarTypeMismatch)
        #expect(Tensor(randomNormal: [2], seed: 1, scalarType: Int32.self).error?.kind == .scalarTypeMismatch)
    }

    @Test func shapeMismatches() {
        #expect(a.matmul(a).error?.message == "shapes [3, 4] and [3, 4] cannot be multiplied")
        #expect(Tensor(concatenating: [a, b], alongAxis: 0).error?.kind == .shapeMismatch)
        #expect(Tensor(stacking: [a, b]).error?.kind == .shapeMismatch)
        #expect(Tensor(shape: [2, 2], scalars: [1, 2, 3] as [Float]).error?.kind == .shapeMismatch)
        #expect(a.broadcast(to: [4, 4]).error?.kind == .shapeMismatch)
        #expect(a.layerNorm(scale: b).error?.kind == .shapeMismatch)
    }

    @Test func indexesOutOfRange() async throws {
        #expect(a[3].error?.kind == .indexOutOfRange)
        #expect(a[0, 2..<9].error?.kind == .indexOutOfRange)
        #expect(a[0, 0, 0].error?.kind == .indexOutOfRange)
        let gathered = a.gathering(atIndices: Tensor([0, 3] as [Int32]), alongAxis: 0)
        #expect(gathered.error == nil, "index values are only known when the graph runs")
        for policy in [ComputePolicy.only(.naive), .all] {
            let error = try #require(await withComputePolicy(policy) { await thrown(a.gathering(atIndices: Tensor([0, 3] as [Int32]), alongAxis: 0)) })
            #expect(error.kind == .indexOutOfRange)
            #expect(error.message.contains("index 3 is out of range for axis 0 of size 3"))
        }
    }

    @Test func invalidArguments() {
        #expect(a.transposed(permutation: 0, 0).error?.kind == .invalidArgument)
        #expect(a.split(count: 3, alongAxis: 1)[0].error?.kind == .invalidArgument)
        #expect(a.split(sizes: [1, 1], alongAxis: 0)[0].error?.kind == .invalidArgument)
        #expect(a.topK(9).values.error?.kind == .invalidArgument)
        #expect(a.tiled(multiples: [2]).error?.kind == .invalidArgument)
        #expect(a.padded(forSizes: [(before: -1, after: 0), (before: 0, after: 0)]).error?.kind == .invalidArgument)
        #expect(Tensor(rangeFrom: 0, to: 1, by: 0).error?.kind == .invalidArgument)
        #expect(Tensor(linearSpaceFrom: 0, through: 1, count: -1).error?.kind == .invalidArgument)
        #expect(a.layerNorm(epsilon: -1).error?.kind == .invalidArgument)
        #expect(Tensor(zeros: [2, -1]).error?.kind == .invalidArgument)
    }

    @Test func tooLargeIsCaughtBeforeAllocating() {
        let huge = Tensor(zeros: [1 << 31, 1 << 31])
        #expect(huge.error?.kind == .tooLarge)
        let overflow = Tensor(zeros: [Int.max, 4])
        #expect(overflow.error?.kind == .tooLarge)
        let product = Tensor(zeros: [1 << 20, 1]).matmul(Tensor(zeros: [1, 1 << 20]))
        #expect(product.error?.kind == .tooLarge, "a 4 TiB result")
    }

    @Test func materializingAsTheWrongTypeThrows() async throws {
        do {
            _ = try await a.shapedArray(of: Int32.self)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .materialization)
            #expect(error.message == "the tensor holds float32, not int32")
        }
    }

    @Test func unsupportedUnderAPolicyIsAnError() async throws {
        let ints = Tensor([1, 2, 3] as [Int32]).cumulativeSum(alongAxis: 0)
        do {
            _ = try await withComputePolicy(.only(.openblas)) { try await ints.shapedArray(of: Int32.self) }
            Issue.record("expected an error")
        } catch let error as TensorError {
            #expect(error.kind == .unsupported)
            #expect(error.op == "cumulativeSum")
            #expect(error.message.contains("openblas"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(try await ints.shapedArray(of: Int32.self).scalars == [1, 3, 6], "under auto, naive takes it")
    }

    @Test func unknownPolicyNamesTheValidOnes() {
        #expect(throws: TensorError.self) { try ComputePolicy(name: "gpu") }
        do {
            _ = try ComputePolicy(name: "gpu")
        } catch {
            #expect(error.message.contains("auto, cpuOnly, cpuAndGPU, naive, openblas, opencl"))
        }
    }
}

/// The shared error checks (also run by `tensorengine-check` under ctest).
@Suite("Shared error checks")
struct SharedErrorCheckTests {
    @Test(arguments: ErrorChecks.all.map(\.name))
    func check(_ name: String) async throws {
        let check = try #require(ErrorChecks.all.first { $0.name == name })
        let problem = await check.run()
        #expect(problem == nil, "\(name): \(problem ?? "")")
    }
}
