import Foundation
import Logging
import Rules
import Store
import Synchronization

/// The security rules of every namespace: a namespace's own (a `<name>.rules.json` file in the rules directory,
/// or what an admin uploaded for it with `PUT /.settings/rules.json?ns=NAME`), or else the default rules (the
/// rules file).
///
/// Rules an admin uploads for a namespace stay until the file they replaced changes: the namespace's own file, or
/// for a namespace without one, the default file (it then follows the default rules again). Each namespace's log
/// takes a new version as an entry (``Gateway/rulesChanged(in:)``), so a change applies to every operation of that
/// namespace sequenced after it, in cluster mode on every node.
public final class RulesLibrary: Sendable {
    /// The rules of every namespace that has none of its own.
    public let defaults: RulesHolder
    /// Where `<name>.rules.json` files give namespaces their own rules (`nil`: nowhere).
    public let directory: String?

    private enum Choice {
        /// The namespace has its own rules; `followsDefaults` when they were uploaded over the default rules.
        case own(RulesHolder, followsDefaults: Bool)
        /// The namespace uses the default rules (no file of its own when it was first asked for).
        case defaults
    }

    private let choices = Mutex<[String: Choice]>([:])
    /// The logger and the callback of ``watch(every:logger:reloaded:)``, for the namespace files found later.
    private let watching = Mutex<(logger: Logger, reloaded: @Sendable ([String]?) -> Void)?>(nil)

    /// A library of `defaults` and the files in `directory`.
    public init(defaults: RulesHolder, directory: String? = nil) {
        self.defaults = defaults
        self.directory = directory
    }

    /// The holder whose rules judge `namespace`.
    public func holder(for namespace: String) -> RulesHolder {
        // Only a namespace's name can reach the directory (never a path), and only names can fill the table.
        guard DataDirectory.isValidNamespace(namespace) else { return defaults }
        if let choice = choices.withLock({ $0[namespace] }) { return holder(of: choice) }
        let choice: Choice
        if let file = file(of: namespace), FileManager.default.fileExists(atPath: file),
           let rules = try? RuleSet.load(contentsOf: file)
        {
            let holder = RulesHolder(rules, path: file)
            choice = .own(holder, followsDefaults: false)
            watchFile(of: holder, namespace: namespace)
        } else {
            choice = .defaults
        }
        return holder(of: choices.withLock { choices in
            if let existing = choices[namespace] { return existing }
            choices[namespace] = choice
            return choice
        })
    }

    private func holder(of choice: Choice) -> RulesHolder {
        switch choice {
        case .own(let holder, _): return holder
        case .defaults: return defaults
        }
    }

    /// Compiles `source` and makes it the configured rules of `namespace` (an admin upload; its log puts it in force).
    ///
    /// - Throws: ``RulesLoadError`` with every error; the rules in force stay.
    public func replace(_ namespace: String, with source: [UInt8], fileName: String) throws(RulesLoadError) -> RuleSet {
        let current = holder(for: namespace)
        if current !== defaults { return try current.replace(with: source, fileName: fileName) }
        let uploaded = RulesHolder(nil)
        let rules = try uploaded.replace(with: source, fileName: fileName)
        choices.withLock { $0[namespace] = .own(uploaded, followsDefaults: true) }
        return rules
    }

    /// Watches the default file and every namespace file: `reloaded` gets the namespaces whose rules changed
    /// (`nil`: every namespace that uses the default rules, and those whose uploads followed them).
    public func watch(every interval: Double, logger: Logger, reloaded: @escaping @Sendable ([String]?) -> Void) {
        watching.withLock { $0 = (logger, reloaded) }
        defaults.watch(every: interval, logger: logger) { [self] in
            // Uploads over the default rules give way to the file's new version.
            choices.withLock { choices in
                for (name, choice) in choices {
                    if case .own(_, followsDefaults: true) = choice { choices[name] = .defaults }
                }
            }
            reloaded(nil)
        }
        let own = choices.withLock { choices in
            choices.compactMap { name, choice -> (String, RulesHolder)? in
                if case .own(let holder, followsDefaults: false) = choice { return (name, holder) }
                return nil
            }
        }
        for (name, holder) in own { watchFile(of: holder, namespace: name) }
    }

    /// Stops watching every file.
    public func stop() {
        watching.withLock { $0 = nil }
        defaults.stop()
        let own = choices.withLock { choices in
            choices.values.compactMap { choice -> RulesHolder? in
                if case .own(let holder, _) = choice { return holder }
                return nil
            }
        }
        for holder in own { holder.stop() }
    }

    /// Whether `namespace` uses the default rules now.
    func usesDefaults(_ namespace: String) -> Bool {
        holder(for: namespace) === defaults
    }

    private func watchFile(of holder: RulesHolder, namespace: String) {
        guard let (logger, reloaded) = watching.withLock({ $0 }) else { return }
        holder.watch(every: 1, logger: logger) { reloaded([namespace]) }
    }

    /// The rules file of `namespace` in the directory.
    private func file(of namespace: String) -> String? {
        directory.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + namespace + ".rules.json" }
    }
}
