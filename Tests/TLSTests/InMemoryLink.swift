import TestSupport
import TLS
import Testing

/// How ciphertext is cut before it is handed to the receiving session.
enum Delivery: Sendable, CustomTestStringConvertible {
    /// Everything a session produced, in one call.
    case whole
    /// One byte per call.
    case oneByte
    /// Pieces of random length between 1 and 64 bytes, from a fixed seed so failures reproduce.
    case randomSplits(seed: UInt64)

    var testDescription: String {
        switch self {
        case .whole: "whole"
        case .oneByte: "one byte at a time"
        case .randomSplits(let seed): "random splits (seed \(seed))"
        }
    }
}

/// A client session and a server session wired back to back in memory, the way NIO's `interactInMemory` does.
struct InMemoryLink {
    let client: TLSSession
    let server: TLSSession
    /// How bytes are cut on the way.
    var delivery: Delivery
    /// Application data the client has decrypted so far.
    var receivedByClient: [UInt8] = []
    /// Application data the server has decrypted so far.
    var receivedByServer: [UInt8] = []
    private var random: SplitMix64

    init(client: TLSSession, server: TLSSession, delivery: Delivery = .whole) {
        self.client = client
        self.server = server
        self.delivery = delivery
        if case .randomSplits(let seed) = delivery {
            random = SplitMix64(seed: seed)
        } else {
            random = SplitMix64(seed: 0)
        }
    }

    /// Starts the client's handshake and moves bytes until both sides are quiet.
    mutating func handshake() throws {
        try client.startHandshake()
        try pump()
    }

    /// Moves ciphertext both ways until neither session has anything left to send.
    mutating func pump() throws {
        while true {
            var moved = false
            if let bytes = client.takeCiphertext() {
                moved = true
                receivedByServer += try deliver(bytes, to: server)
            }
            if let bytes = server.takeCiphertext() {
                moved = true
                receivedByClient += try deliver(bytes, to: client)
            }
            if !moved { return }
        }
    }

    /// Hands `bytes` to `session` cut as ``delivery`` says and returns the plaintext it produced.
    mutating func deliver(_ bytes: [UInt8], to session: TLSSession) throws -> [UInt8] {
        var plaintext: [UInt8] = []
        var start = 0
        while start < bytes.count {
            let length: Int
            switch delivery {
            case .whole: length = bytes.count
            case .oneByte: length = 1
            case .randomSplits: length = Int(random.next() % 64) + 1
            }
            let end = min(bytes.count, start + length)
            plaintext += try bytes[start..<end].withUnsafeBytes { try session.receivedCiphertext($0) }
            start = end
        }
        return plaintext
    }
}


extension TLSSession {
    /// Writes an array's bytes.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try writePlaintext($0) }
    }

    /// Feeds an array of ciphertext.
    func receive(_ bytes: [UInt8]) throws -> [UInt8] {
        try bytes.withUnsafeBytes { try receivedCiphertext($0) }
    }
}
