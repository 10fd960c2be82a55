#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test, removed with `remove()`.
public struct TemporaryDirectory: Sendable {
    /// Absolute path of the directory.
    public let path: String

    /// Creates a new empty directory.
    public init(prefix: String = "canopy-test") {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes the directory and everything in it.
    public func remove() {
        _ = system("rm -rf '\(path)'")
    }
}
