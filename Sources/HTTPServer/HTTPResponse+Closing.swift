import HTTP1

extension HTTPResponse {
    /// The response encoded with `Connection: close`, for answers after which the server hangs up.
    func encodedClosingConnection(includingBody: Bool = true) -> [UInt8] {
        var response = self
        response.headers.replaceOrAdd(name: "Connection", value: "close")
        return response.encoded(includingBody: includingBody)
    }
}
