// Shared by the crash writer (a child process) and the crash test that checks what it left behind.
import DataModel
import Store

/// The crash test's writes: what write `id` does and how to tell, from the tree, whether it is present.
public enum CrashWorkload {
    public static let idsPerRun = 1_000_000
    public static let counterCount = 3

    public static func key(_ text: String) -> Key {
        guard let key = try? Key(text) else { preconditionFailure("workload keys are valid") }
        return key
    }

    public static func path(_ keys: String...) -> Path {
        Path(keys: keys.map(key))
    }

    /// Write `id`: four kinds, by `id % 4`.
    public static func write(_ id: Int) -> StoreWrite {
        switch id % 4 {
        case 0:
            // A set of an object.
            let value = Node(children: [
                ChildEntry(key: key("id"), node: Node(.number(Double(id)))),
                ChildEntry(key: key("text"), node: Node(.string("value \(id)"))),
            ])
            return .set(path("s\(id % 17)", "w\(id)"), value)
        case 1:
            // A multi-path update at two top-level keys.
            return .update(.root, [
                UpdateEntry(path("a\(id % 5)", "u\(id)"), Node(.number(Double(id)))),
                UpdateEntry(path("b\(id % 7)", "u\(id)"), Node(.number(Double(id)))),
            ])
        case 2:
            // A server-value increment of a shared counter, atomically with a marker.
            return .update(.root, [
                UpdateEntry(.node(path("counters", "c\(id % counterCount)")),
                            WriteValue(node: Node(.number(0)), serverValues: [
                                ServerValuePlaceholder(path: .root, isPriority: false, value: .increment(1)),
                            ])),
                UpdateEntry(path("inc", "i\(id)"), Node(.bool(true))),
            ])
        default:
            // A compare-and-set that expects an empty location.
            return .set(.node(path("cas\(id % 3)", "k\(id)")), WriteValue(node: Node(.number(Double(id)))),
                        expectedHash: "")
        }
    }
}
