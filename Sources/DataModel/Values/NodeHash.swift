/// The SDK's node hash ("simple hash", version 1), used for compare-and-set puts and listen `h` values
/// (wire-protocol.md §8.2).
///
/// `hash(node) = base64(SHA-1(UTF-8(S)))` where `S` is built recursively:
/// - empty node: the hash is `""` (no SHA-1);
/// - leaf: `["priority:" + priorityText + ":"] + type + ":" + valueText`, type `boolean`/`number`/`string`,
///   numbers as the 16 lowercase hex digits of their IEEE-754 bits, strings raw;
/// - object: `["priority:" + priorityText + ":"]` followed by `":" + key + ":" + hash(child)` for every child in
///   priority-index order (no priority, numbers, strings; ties in key order).
///
/// The digest functions are parameters (``Node/hash`` passes `Primitives.SHA1` and `Primitives.Base64`), so the
/// representation can be tested on its own.
public enum NodeHash {
    /// The hash of `node`: `""` for the empty node, else 28 base64 characters.
    ///
    /// - Parameters:
    ///   - sha1: SHA-1 of a byte string (20 bytes out).
    ///   - base64: standard base64 with `=` padding.
    public static func hash(
        _ node: Node, sha1: ([UInt8]) -> [UInt8], base64: ([UInt8]) -> String
    ) -> String {
        let text = representation(of: node) { child in hash(child, sha1: sha1, base64: base64) }
        return text.isEmpty ? "" : base64(sha1(Array(text.utf8)))
    }

    /// The string `S` hashed for `node`, with `childHash` computing the hash of each child.
    public static func representation(of node: Node, childHash: (Node) -> String) -> String {
        var text = ""
        if let priority = node.priority {
            text += "priority:" + priorityText(priority) + ":"
        }
        switch node.withoutPriority.storage {
        case .empty, .prioritized:
            return ""
        case .bool(let flag):
            text += "boolean:" + (flag ? "true" : "false")
        case .number(let number):
            text += "number:" + hexBits(number)
        case .string(let string):
            text += "string:" + string
        case .children, .record:
            for entry in priorityOrder(node.withoutPriority) {
                let hash = childHash(entry.node)
                guard !hash.isEmpty else { continue }
                text += ":" + entry.key.string + ":" + hash
            }
        }
        return text
    }

    /// The children in priority-index order (§7.4); plain key order when no child has a priority.
    static func priorityOrder(_ node: Node) -> [ChildEntry] {
        let entries = Array(node.children)
        guard entries.contains(where: { $0.node.priority != nil }) else { return entries }
        return entries.sorted { left, right in
            switch (left.node.priority, right.node.priority) {
            case (nil, nil): return left.key < right.key
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): return x == y ? left.key < right.key : x < y
            }
        }
    }

    private static func priorityText(_ priority: Priority) -> String {
        switch priority {
        case .number(let number): return "number:" + hexBits(number)
        case .string(let string): return "string:" + string
        }
    }

    /// 16 lowercase hex digits of the IEEE-754 binary64 bit pattern, big-endian.
    static func hexBits(_ value: Double) -> String {
        let hex = String(value.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - hex.utf8.count) + hex
    }
}
