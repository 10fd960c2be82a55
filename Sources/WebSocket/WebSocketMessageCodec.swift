/// A negotiated per-message extension that transforms whole message payloads, such as permessage-deflate
/// (RFC 7692); the connection state machine calls it for messages whose first frame has RSV1 set.
///
/// `WebSocket` defines the protocol so that it need not know zlib; `WebSocketDeflate` implements it. An instance
/// belongs to one connection and is confined to that connection's queue, like the state machine that holds it.
public protocol WebSocketMessageCodec: AnyObject {
    /// Decodes the next piece of a received message, appending plain bytes to `output`.
    ///
    /// Called with each piece of payload as it arrives (so a text message can be validated and a size limit enforced
    /// before the whole message is in), then once with `isFinal == true` (and possibly empty input) at the end of the
    /// message.
    /// - Parameters:
    ///   - input: Unmasked extension data, in order.
    ///   - isFinal: Whether this is the end of the message (RFC 7692 §7.2.2: the decoder appends `00 00 ff ff`).
    ///   - output: The message buffer to append to.
    ///   - maxOutputCount: `output.count` must never exceed this; the decoder stops as soon as it would.
    /// - Throws: ``WebSocketProtocolError/messageTooLarge(limit:)`` when the output would exceed `maxOutputCount`,
    ///   ``WebSocketProtocolError/invalidCompressedData`` for undecodable input, and
    ///   ``WebSocketProtocolError/extensionFailure(_:)`` for local failures such as running out of memory.
    func decode(
        _ input: UnsafeRawBufferPointer, isFinal: Bool, into output: inout [UInt8], maxOutputCount: Int
    ) throws(WebSocketProtocolError)

    /// Encodes a whole outbound message, or returns `nil` to send it unencoded (RSV1 clear), for example when it is
    /// below the compression threshold or compression would not make it smaller.
    func encode(_ payload: UnsafeRawBufferPointer) -> [UInt8]?
}
