/// Local permessage-deflate policy: what to ask for in negotiation and how to run zlib.
///
/// The defaults favour memory per connection, because Canopy holds many mostly idle connections: both directions
/// without context takeover, so neither side keeps a zlib stream between messages (a deflate stream at window 15
/// and memory level 8 holds about 256 KiB, an inflate stream about 40 KiB) and a server can compress a broadcast
/// once for every receiver (``PerMessageDeflate/compressOnce(_:windowBits:configuration:)``).
public struct PerMessageDeflateConfiguration: Sendable, Hashable {
    /// Default for ``compressionThreshold``: messages under 64 bytes gain nothing from compression.
    public static let defaultCompressionThreshold = 64

    /// Server role: always send `server_no_context_takeover` (RFC 7692 §7.1.1.1 lets a server add it unasked);
    /// client role: ask for it. Default `true`.
    public var serverNoContextTakeover: Bool
    /// Server role: always send `client_no_context_takeover` (§7.1.1.2 lets a server add it unasked), so the inflater
    /// can be released between messages; client role: offer it. Default `true`.
    public var clientNoContextTakeover: Bool
    /// Largest window the server compresses with (8...15, default 15). Server role: announced when below 15; client
    /// role: requested with `server_max_window_bits` when below 15.
    public var serverMaxWindowBits: Int
    /// Largest window the client may compress with (9...15, default 15). Server role: requested when the client
    /// offered `client_max_window_bits`; client role: the cap on our own compressor.
    ///
    /// 8 is not accepted here because zlib's raw deflate refuses window bits 8, so a zlib-based peer told to use 8
    /// could not start its compressor.
    public var clientMaxWindowBits: Int
    /// zlib compression level, 0 (store) to 9 (smallest); default 6, zlib's default trade-off.
    public var compressionLevel: Int
    /// zlib memory level, 1 to 9 (default 8): the compressor's hash table and buffers take 2^(level+9) bytes each.
    public var memoryLevel: Int
    /// Outbound messages with fewer bytes than this are sent uncompressed (default 64).
    public var compressionThreshold: Int

    /// Creates a configuration; see each property for its default.
    public init(
        serverNoContextTakeover: Bool = true, clientNoContextTakeover: Bool = true, serverMaxWindowBits: Int = 15,
        clientMaxWindowBits: Int = 15, compressionLevel: Int = 6, memoryLevel: Int = 8,
        compressionThreshold: Int = defaultCompressionThreshold
    ) {
        precondition((8...15).contains(serverMaxWindowBits), "serverMaxWindowBits must be 8...15")
        precondition((9...15).contains(clientMaxWindowBits), "clientMaxWindowBits must be 9...15")
        precondition((0...9).contains(compressionLevel), "compressionLevel must be 0...9")
        precondition((1...9).contains(memoryLevel), "memoryLevel must be 1...9")
        precondition(compressionThreshold >= 0, "compressionThreshold must not be negative")
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
        self.compressionLevel = compressionLevel
        self.memoryLevel = memoryLevel
        self.compressionThreshold = compressionThreshold
    }
}
