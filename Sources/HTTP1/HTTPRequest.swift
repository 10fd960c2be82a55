/// A complete request: its head and its body after any chunked decoding.
public struct HTTPRequest: Sendable, Equatable {
    /// The request line and header fields.
    public var head: HTTPRequestHead
    /// The body bytes; empty when the request has none.
    public var body: [UInt8]

    /// Creates a request.
    public init(head: HTTPRequestHead, body: [UInt8] = []) {
        self.head = head
        self.body = body
    }
}
