import DataModel

/// A namespace as it is at one place in its order, for the control plane to read (the rules simulator).
public struct NamespaceState: Sendable {
    /// The tree.
    public let root: Node
    /// The text of the rules revision in force (`nil`: none, every read and write is allowed).
    public let rulesSource: [UInt8]?
}
