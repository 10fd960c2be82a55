import DataModel
import Store

/// The security-rules questions of one caller (a wire session, a REST request, an event stream): reads and
/// onDisconnect registrations, asked of the policy in force in a state of the namespace's store taken at the
/// operation's place in the order (docs/protocol/security-rules.md). Writes are judged inside the store by the
/// same policy; the gate names the caller to it. The admin credential bypasses rules; without rules everything is
/// allowed.
struct RulesGate: Sendable {
    /// The rules' `auth`, or `nil` for the admin.
    let auth: JSONValue??
    /// Names the caller in live reports (`session …`, `REST 127.0.0.1:…`).
    let caller: String

    init(identity: ConnectionIdentity, caller: String) {
        auth = identity.rulesAuth
        self.caller = caller
    }

    /// What the pre-check of an onDisconnect operation answers.
    enum Registration: Equatable {
        /// The write may be registered.
        case allowed
        /// The rules deny it.
        case denied
        /// It could never be applied (a priority that is not a number, a string or nothing; a server value that
        /// does not resolve).
        case invalid(StoreError)
    }

    /// Who the store should say made the caller's writes.
    var writeCaller: WriteCaller {
        guard case .some(let auth) = auth else { return .privileged }
        return .user(auth: auth)
    }

    /// Whether the caller may read `path` with `query` (`nil`: the whole location) in `snapshot`.
    func mayRead(_ path: Path, query: QueryParams?, in snapshot: StoreSnapshot) -> Bool {
        guard case .some(let auth) = auth, let policy = snapshot.policy else { return true }
        return policy.mayRead(ReadQuestion(path: path, query: query, auth: auth, root: snapshot.root,
                                           now: snapshot.now, caller: caller))
    }

    /// Whether an onDisconnect operation may be registered: previewed on the tree of `snapshot` with its server
    /// values resolved at the snapshot's time, exactly as the log would apply it, and judged by the same policy.
    func registration(of write: StoreWrite, in snapshot: StoreSnapshot) -> Registration {
        let preview: WritePreview
        do throws(StoreError) {
            preview = try WritePreview(write, on: snapshot.root, at: snapshot.now, pushKey: WritePreview.noPushKey)
        } catch {
            return .invalid(error)
        }
        guard case .some(let auth) = auth, let policy = snapshot.policy else { return .allowed }
        let question = preview.question(auth: auth, timestamp: snapshot.now, operation: "onDisconnect", caller: caller)
        return policy.mayWrite(question) ? .allowed : .denied
    }
}
