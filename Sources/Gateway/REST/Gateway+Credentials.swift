import Auth
import CoreMetrics
import HTTP1
import HTTPServer
import Logging
import Transport
import Synchronization

/// REST's side of fetched signing keys and App Check: waiting for a key refresh without blocking the loop, and
/// checking the `X-Firebase-AppCheck` header (or `ac` parameter).
extension Gateway {
    /// The App Check token of a REST request: the `X-Firebase-AppCheck` header (Android, iOS, Node), else the `ac`
    /// parameter (the JS SDK's REST calls); empty counts as none.
    static func appCheckToken(_ head: HTTPRequestHead, parameters: QueryString) -> String? {
        let token = head.headers["X-Firebase-AppCheck"] ?? parameters["ac"]
        return token?.isEmpty == false ? token : nil
    }

    /// When the request's credential or App Check token names a key a refresh of the fetched keys may bring, a
    /// deferred route that routes the request again once the refresh ended; otherwise `nil`.
    func awaitingSigningKeys(_ request: HTTPRequest, parameters: QueryString, context: RequestContext) -> Route? {
        let now = configuration.clock() / 1000
        let wait = KeyWait()
        if let credential = RESTRequest.credential(request.head, parameters: parameters),
           tokenVerifier.verifyOrAwaitKeys(credential, now: now, then: wait.arrival()) == nil
        {
            wait.expect()
        }
        if let verifier = configuration.appCheck.activeVerifier,
           let token = Self.appCheckToken(request.head, parameters: parameters),
           verifier.verifyOrAwaitKeys(token, now: now, then: wait.arrival()) == nil
        {
            wait.expect()
        }
        guard wait.isAwaiting else { return nil }
        // The server starts this route once every earlier request is answered: then none is ahead.
        var reroutedContext = context
        reroutedContext.unansweredAhead = nil
        let alone = reroutedContext
        return .deferred { [self] pending in
            wait.whenDone {
                pending.loop.execute { [self] in
                    Self.deliver(restRoute(request, context: alone, keysAwaited: true), to: pending)
                }
            }
        }
    }

    /// In monitor and enforce mode, checks and counts the request's App Check token; in enforce mode a request
    /// without a valid one is refused (401 `Permission denied`, as Firebase answers), unless it holds the admin
    /// credential.
    func checkAppCheck(_ head: HTTPRequestHead, parameters: QueryString, identity: ConnectionIdentity)
        throws(RESTError)
    {
        let policy = configuration.appCheck
        guard let verifier = policy.activeVerifier else { return }
        var valid = false
        if let token = Self.appCheckToken(head, parameters: parameters) {
            switch verifier.verify(token, now: configuration.clock() / 1000) {
            case .valid:
                metrics.appCheckValid.increment()
                valid = true
            case .expired:
                metrics.appCheckExpired.increment()
                logger.info("appcheck.rejected", metadata: [
                    "reason": "the token expired (exp)", "caller": "REST", "mode": "\(policy.mode.rawValue)",
                ])
            case .invalid(let reason):
                metrics.appCheckInvalid.increment()
                logger.info("appcheck.rejected", metadata: [
                    "reason": "\(reason)", "caller": "REST", "mode": "\(policy.mode.rawValue)",
                ])
            }
        }
        guard !valid, !identity.holdsAdminCredential else { return }
        metrics.appCheckMissing.increment()
        guard policy.mode == .enforce else { return }
        metrics.appCheckRefused.increment()
        throw .permissionDenied
    }

    /// Completes `pending` with what `route` says, as the server would have for the route itself.
    static func deliver(_ route: Route, to pending: PendingResponse) {
        switch route {
        case .respond(let response): pending.respond(response)
        case .deferred(let answer), .ordered(_, let answer): answer(pending)
        case .stream(let head, let start): pending.startStream(head: head, start: start)
        case .webSocket, .routeWhenAnswered:
            pending.respond(.error(.internalServerError, message: "unexpected route for a REST request"))
        }
    }

    /// The signing keys, fetched and cached, in the Prometheus text format: per kind of token (`id`, `appcheck`),
    /// the keys in use, the fetches that succeeded and failed, and the age of the keys in use.
    var keyExposition: [UInt8] {
        var sets: [(String, RemoteKeyStatus)] = []
        if let status = tokenVerifier.remoteKeyStatus { sets.append(("id", status)) }
        if let status = configuration.appCheck.verifier?.keyStatus { sets.append(("appcheck", status)) }
        guard !sets.isEmpty else { return [] }
        var text = ""
        func family(_ name: String, _ type: String, _ value: (RemoteKeyStatus) -> Double?) {
            text += "# TYPE \(name) \(type)\n"
            for (tokens, status) in sets {
                guard let value = value(status) else { continue }
                text += "\(name){tokens=\"\(tokens)\"} \(value)\n"
            }
        }
        family("canopy_auth_keys", "gauge") { Double($0.keyCount) }
        family("canopy_auth_key_fetches_total", "counter") { Double($0.fetches) }
        family("canopy_auth_key_fetch_failures_total", "counter") { Double($0.failures) }
        family("canopy_auth_key_age_seconds", "gauge") { $0.ageSeconds }
        return Array(text.utf8)
    }
}

/// Waits for up to two key refreshes (the credential's and the App Check token's) before one action runs.
final class KeyWait: Sendable {
    private struct State {
        var expected = 0
        var arrived = 0
        var action: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// Whether a refresh was expected.
    var isAwaiting: Bool {
        state.withLock { $0.expected > 0 }
    }

    /// One more refresh to wait for (its arrival callback was registered).
    func expect() {
        state.withLock { $0.expected += 1 }
    }

    /// The callback a refresh calls when it ended.
    func arrival() -> @Sendable () -> Void {
        { [self] in
            let action = state.withLock { state -> (@Sendable () -> Void)? in
                state.arrived += 1
                guard state.arrived >= state.expected, let action = state.action else { return nil }
                state.action = nil
                return action
            }
            action?()
        }
    }

    /// Runs `action` once every expected refresh ended (at once if they already did).
    func whenDone(_ action: @escaping @Sendable () -> Void) {
        let ready = state.withLock { state -> Bool in
            guard state.arrived < state.expected else { return true }
            state.action = action
            return false
        }
        if ready { action() }
    }
}
