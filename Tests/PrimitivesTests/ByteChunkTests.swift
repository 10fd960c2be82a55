import Primitives
import Testing

@Suite struct ByteChunkTests {
    @Test func copyingKeepsTheBytes() {
        let chunk = ByteChunk(copying: [1, 2, 3] as [UInt8])
        #expect(chunk.array == [1, 2, 3])
        #expect(chunk.count == 3)
    }

    @Test func fillMayWriteFewerBytesThanItsCapacity() {
        let chunk = ByteChunk(capacity: 8) { buffer in
            buffer[0] = 9
            return 1
        }
        #expect(chunk.array == [9])
    }
}

@Suite struct ByteBufferTests {
    @Test func consumesFromTheFrontAndCompacts() {
        var buffer = ByteBuffer()
        buffer.append(contentsOf: [1, 2, 3, 4])
        #expect(buffer.read(3) == [1, 2, 3])
        buffer.append(contentsOf: [5])
        #expect(buffer.readableCount == 2)
        #expect(buffer[0] == 4)
        #expect(buffer.readAll() == [4, 5])
        #expect(buffer.isEmpty)
    }
}
