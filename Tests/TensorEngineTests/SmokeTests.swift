import Testing
@testable import TensorEngine

@Test func addsTwoTensors() async throws {
    let a = Tensor(shape: [2, 2], scalars: [1, 2, 3, 4] as [Float])
    let b = Tensor(shape: [2], scalars: [10, 20] as [Float])
    let c = try await (a + b).shapedArray(of: Float.self)
    #expect(c.scalars == [11, 22, 13, 24])
    let d = a + 2
    let e = 2 * a - 1.5
    let f = a.sum()
    let g = a.sum(alongAxes: 1)
    let h: Tensor = [1, 2, 3]
    let i = a[0]
    let j = a[..., 1]
    let k = a[0, 1...]
    let m = (a .> 2) .& (a .< 4)
    _ = (d, e, f, g, h, i, j, k, m)
    #expect(try await f.shapedArray(of: Float.self).scalars == [10])
    #expect(try await j.shapedArray(of: Float.self).scalars == [2, 4])
}
