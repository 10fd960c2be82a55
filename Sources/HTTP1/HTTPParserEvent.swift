/// What ``HTTPRequestParser/next()`` found in the bytes fed so far.
public enum HTTPParserEvent: Sendable, Equatable {
    /// The head asked for `Expect: 100-continue` and a body is pending: send `100 Continue` (or a final
    /// error response) now; the parser goes on to read the body and later returns ``request(_:)``
    /// (RFC 9110 §10.1.1).
    case expectContinue(HTTPRequestHead)
    /// A complete request. Bytes after it stay buffered for the next call or ``HTTPRequestParser/takeUnparsedBytes()``.
    case request(HTTPRequest)
    /// The request is malformed or over a limit; answer with the error's status and close the connection.
    case failure(HTTPParseError)
}
