import Primitives

/// The data directory holds one subdirectory per namespace; each namespace is its own tree (Firebase's `ns`).
public enum DataDirectory {
    /// The namespace used when none is named.
    public static let defaultNamespace = "default"
    /// Longest namespace name.
    public static let maxNamespaceLength = 63

    /// Whether `name` can be a namespace: 1–63 characters from `a-z A-Z 0-9 - _`, so it is always a safe,
    /// portable directory name (Firebase database names use lowercase letters, digits and hyphens).
    public static func isValidNamespace(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maxNamespaceLength else { return false }
        return bytes.allSatisfy(ASCIIBytes.isWordOrDash)
    }

    /// Whether `dataDirectory` holds a directory for `namespace` (it was created before).
    public static func holdsNamespace(_ dataDirectory: String, namespace: String) -> Bool {
        namespaceDirectory(dataDirectory, namespace: namespace).map(FileSystem.isDirectory) ?? false
    }

    /// The directory of `namespace` inside `dataDirectory`, or `nil` when the name is not valid.
    public static func namespaceDirectory(_ dataDirectory: String, namespace: String) -> String? {
        guard isValidNamespace(namespace) else { return nil }
        return (dataDirectory.hasSuffix("/") ? dataDirectory : dataDirectory + "/") + namespace
    }
}
