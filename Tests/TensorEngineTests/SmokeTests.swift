import Testing
@testable import TensorEngine

@Test func addsTwoTensors() async throws {
    let a = Tensor(shape: [2, 2], scalars: [1, 2, 3, 4] as [Float])
    let b = Tensor(shape: [2], scalars: [10, 20] as [Float])
    let c = try await (a + b).shapedArray(of: Float.self)
    #expect(c.scalars == [11, 22, 13, 24])
}
