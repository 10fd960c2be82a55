import HTTP1

extension HTTPResponse {
    /// The response encoded with `Connection: close`, for answers after which the server hangs up.
    func encodedClosingConnection() -> [UInt8] {
        var response = self
        response.headers.replaceOrAdd(name: "Connection", value: "close")
        return response.encoded()
    }
}
