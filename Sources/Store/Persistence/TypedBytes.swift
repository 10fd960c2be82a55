/// `withUnsafeBytes` for byte arrays that keeps the closure's typed error (the standard library's version only
/// rethrows, which turns a typed error into `any Error`).
func withBytes<Value, Failure: Error>(
    of bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
) throws(Failure) -> Value {
    try bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try body(raw) } }.get()
}

/// `withUnsafeBytes` for byte slices that keeps the closure's typed error.
func withBytes<Value, Failure: Error>(
    of bytes: ArraySlice<UInt8>, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
) throws(Failure) -> Value {
    try bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try body(raw) } }.get()
}
