import Foundation
import Logging
import Rules
import Synchronization

/// The configured rules of a file or an admin upload, replaced atomically when the file changes or an admin
/// uploads new rules: what each namespace's log is told to put in force.
///
/// The rules in force are the log's: each namespace's log takes a new version as an entry
/// (``Gateway/rulesChanged()``) and judges every operation sequenced after it by the policy it compiled from that
/// entry's text (the one object compiled here when the text is the same, so coverage counts every decision). The file is
/// polled (modification time and size) rather than watched with inotify, so editors that save by renaming a new
/// file over the old one are seen too. A file that no longer loads is reported and the old rules stay.
public final class RulesHolder: Sendable {
    private let current: Mutex<InForce>
    private let path: String?
    private let stamp = Mutex<FileStamp?>(nil)
    /// Set by ``watch(every:logger:reloaded:)`` and cleared by ``stop()``, both called from the start-up thread.
    nonisolated(unsafe) private var timer: (any DispatchSourceTimer)?

    /// The rules and the text they were compiled from.
    private struct InForce: Sendable {
        var rules: RuleSet?
        var source: [UInt8]?
    }

    /// Rules loaded from `path` (`nil` for fixed rules or none); the file's text is kept for `/.settings/rules.json`.
    public init(_ rules: RuleSet?, path: String? = nil) {
        let source = path.flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) }
        current = Mutex(InForce(rules: rules, source: source))
        self.path = path
        if let path { stamp.withLock { $0 = FileStamp(path: path) } }
    }

    /// The configured rules, compiled.
    public var rules: RuleSet? {
        current.withLock { $0.rules }
    }

    /// The text of the configured rules, `nil` when there are none or they were not loaded from text.
    public var source: [UInt8]? {
        current.withLock { $0.source }
    }

    /// The configured rules when `source` is their text, `nil` otherwise (namespaces compile the revisions of their
    /// logs through this, so the configured rules and those in force are one object whose coverage counts every
    /// decision).
    func rules(compiledFrom source: [UInt8]) -> RuleSet? {
        current.withLock { $0.source == source ? $0.rules : nil }
    }

    /// Compiles `source` and makes it the configured rules (the admin's `PUT /.settings/rules.json`; the logs
    /// put it in force through ``Gateway/rulesChanged(in:)``); the file, if any, stays as it is and takes over
    /// again when it changes.
    ///
    /// - Throws: ``RulesLoadError`` with every error; the rules in force stay.
    public func replace(with source: [UInt8], fileName: String) throws(RulesLoadError) -> RuleSet {
        let rules = try RuleSet(source: source, fileName: fileName)
        current.withLock { $0 = InForce(rules: rules, source: source) }
        return rules
    }

    /// Checks the file every `interval` seconds and calls `reloaded` after a valid new version took effect.
    public func watch(every interval: Double, logger: Logger, reloaded: @escaping @Sendable () -> Void) {
        guard let path else { return }
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "canopy.rules.watch"))
        source.schedule(deadline: .now() + interval, repeating: interval)
        source.setEventHandler { [self] in
            let now = FileStamp(path: path)
            let changed = stamp.withLock { previous in
                defer { previous = now }
                return previous != now
            }
            guard changed, now != nil else { return }
            do {
                let rules = try RuleSet.load(contentsOf: path)
                let source = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
                current.withLock { $0 = InForce(rules: rules, source: source) }
                logger.notice("reloaded security rules from \(path) (\(rules.coverage.count) rule expressions)")
                reloaded()
            } catch {
                logger.error("kept the previous rules: \(path) does not load:\n\(error)")
            }
        }
        timer = source
        source.resume()
    }

    /// Stops watching.
    public func stop() {
        timer?.cancel()
        timer = nil
    }
}

/// A file's modification time and size, to notice a new version.
private struct FileStamp: Equatable, Sendable {
    let modified: Double
    let size: UInt64

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        size = UInt64(info.st_size)
    }
}
