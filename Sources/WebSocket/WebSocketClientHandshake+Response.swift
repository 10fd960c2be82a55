extension WebSocketClientHandshake {
    /// The index just past the blank line that ends an HTTP response head in `bytes`, if it has arrived; the
    /// search starts at `start` (clamped to 0), so a caller appending reads need not rescan.
    public static func responseHeadEnd(in bytes: [UInt8], searchingFrom start: Int) -> Int? {
        var index = max(0, start)
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// Checks a complete response head (status line and header lines, as ``responseHeadEnd(in:searchingFrom:)``
    /// delimits it) like ``validateResponse(statusCode:headerValues:offeredSubprotocols:)``.
    public func validateResponseHead(_ head: ArraySlice<UInt8>, offeredSubprotocols: [String] = [])
        throws(WebSocketClientHandshakeError) -> (subprotocol: String?, extensions: [WebSocketExtensionOffer])
    {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)
        guard !lines.isEmpty else { throw .malformedResponse("empty response") }
        let statusLine = lines.removeFirst()
        let statusFields = statusLine.split(separator: " ", maxSplits: 2)
        guard statusFields.count >= 2, statusFields[0].hasPrefix("HTTP/1."), let status = Int(statusFields[1]) else {
            throw .malformedResponse("not an HTTP response: \(statusLine.prefix(80))")
        }
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformedResponse("malformed header line") }
            fields.append((line[..<colon].lowercased(), String(line[line.index(after: colon)...])))
        }
        return try validateResponse(
            statusCode: status,
            headerValues: { name in
                let wanted = name.lowercased()
                return fields.filter { $0.name == wanted }.map(\.value)
            },
            offeredSubprotocols: offeredSubprotocols)
    }
}
