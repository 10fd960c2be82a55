/// The web console's files, built into the binary from `Console/` by the EmbedConsole plugin, so the server serves
/// its console from wherever it is started (`console.directory` still serves a folder instead, for development).
public enum EmbeddedConsole {
    /// Every file: its path relative to `Console/` (`index.html`, `js/main.js`) and its bytes. Decoded on each call:
    /// read it once, at start.
    public static var files: [(path: String, bytes: [UInt8])] {
        encodedFiles.map { file in
            let bytes = file.base64.withUTF8Buffer { Base64.decode($0) }
            guard let bytes else { preconditionFailure("the generated console file \(file.path) is not base64") }
            return (file.path, bytes)
        }
    }
}

/// The standard base64 alphabet with padding, decoded (what the generator's `base64EncodedString` writes).
enum Base64 {
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()

    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            let padding = index + 4 == text.count ? (text[index + 3] == UInt8(ascii: "=") ? 1 : 0)
                + (text[index + 2] == UInt8(ascii: "=") ? 1 : 0) : 0
            var group: UInt32 = 0
            for offset in 0..<4 {
                let character = text[index + offset]
                let value = offset >= 4 - padding ? 0 : values[Int(character)]
                guard value != 0xFF else { return nil }
                group = group << 6 | UInt32(value)
            }
            bytes.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { bytes.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { bytes.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        return bytes
    }
}
