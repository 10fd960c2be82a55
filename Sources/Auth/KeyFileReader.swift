import DataModel
import JWTKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads ``AuthConfiguration/publicKeysPath`` once, at start: a JWKS or Google's certificate map when the first
/// non-blank byte is `{`, PEM otherwise.
enum KeyFileReader {
    /// Largest key file read: 1 MiB. Google's certificate map is about 3 KiB; a JWKS of a few dozen keys fits easily.
    static let maxKeyFileBytes = 1024 * 1024

    /// Deepest JSON nesting accepted in a key file (a JWKS nests three levels).
    static let maxKeyFileNesting = 8

    /// What the file held: the usable keys and a note for each key that was skipped (unsupported type or use).
    struct Contents {
        /// Keys to verify with.
        var keys: [ParsedKey] = []
        /// One line per skipped JWKS entry, for the start-up log.
        var ignored: [String] = []
    }

    /// Reads and parses the key file at `path`.
    static func read(path: String) throws(AuthConfigurationError) -> Contents {
        try parse(try load(path: path), path: path)
    }

    /// Parses a key document's bytes (from a file, or fetched from a URL); `path` names it in errors.
    static func parse(_ bytes: [UInt8], path: String) throws(AuthConfigurationError) -> Contents {
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let bytes = bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(byteOrderMark.count)) : bytes
        guard let first = bytes.first(where: { !isBlank($0) }) else {
            throw .unrecognizedKeyFile(path: path, reason: "the file is empty")
        }
        let contents =
            first == UInt8(ascii: "{")
            ? try readJSON(bytes, path: path)
            : Contents(keys: try PEMKeys.parse(bytes, keyID: nil, path: path, sourcePrefix: ""))
        guard !contents.keys.isEmpty else { throw .noUsableKeys(path: path) }
        return contents
    }

    /// The file's bytes, refusing unreadable and oversized files.
    private static func load(path: String) throws(AuthConfigurationError) -> [UInt8] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableKeyFile(path: path, reason: String(describing: error))
        }
        guard data.count <= maxKeyFileBytes else { throw .keyFileTooLarge(path: path, limit: maxKeyFileBytes) }
        return [UInt8](data)
    }

    /// Parses a JSON key file: `{"keys":[…]}` is a JWKS, any other object must map key ids to PEM certificates.
    private static func readJSON(_ bytes: [UInt8], path: String) throws(AuthConfigurationError) -> Contents {
        let document: JSONValue
        do {
            document = try JSONReader.readValue(bytes, maxNesting: maxKeyFileNesting)
        } catch {
            throw .unrecognizedKeyFile(path: path, reason: "invalid JSON: \(error)")
        }
        guard case .object(let members) = document else {
            throw .unrecognizedKeyFile(path: path, reason: "the JSON is not an object")
        }
        if let keys = document["keys"] {
            guard case .array(let entries) = keys else {
                throw .unrecognizedKeyFile(path: path, reason: "\"keys\" is not an array (RFC 7517 §5.1)")
            }
            return try JWKSKeys.parse(entries, path: path)
        }
        var contents = Contents()
        for member in members {
            guard case .string(let pem) = member.value else {
                throw .unrecognizedKeyFile(
                    path: path,
                    reason: "a JSON key file must be a JWKS ({\"keys\":[…]}) or map key ids to PEM certificates")
            }
            let prefix = "certificate map entry \"\(member.key)\", "
            contents.keys += try PEMKeys.parse(Array(pem.utf8), keyID: member.key, path: path, sourcePrefix: prefix)
        }
        return contents
    }

    /// JSON and PEM whitespace.
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\t")
    }
}
