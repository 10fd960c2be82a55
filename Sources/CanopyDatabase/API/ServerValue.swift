import Foundation

/// Values the server fills in when it applies a write (the SDK's `ServerValue`).
public enum ServerValue {
    /// The server's time of the write, in milliseconds since the Unix epoch.
    public static func timestamp() -> [AnyHashable: Any] {
        [".sv": "timestamp"]
    }

    /// The current number plus `delta` (or `delta` when there is no number), computed by the server.
    public static func increment(_ delta: NSNumber) -> [AnyHashable: Any] {
        [".sv": ["increment": delta]]
    }
}
