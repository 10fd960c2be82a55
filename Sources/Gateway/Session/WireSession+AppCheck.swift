import Auth
import CoreMetrics
import Logging
import Transport
import Wire

/// What a connection's App Check token is worth.
enum AppCheckStanding: Sendable {
    /// No token presented (or it was dropped with `unappcheck`).
    case none
    /// A valid token of app `appID`, accepted until `acceptedUntil` (seconds since the epoch).
    case valid(appID: String, acceptedUntil: Double)
    /// The token presented was refused, or the valid one expired.
    case refused
}

extension WireSession {
    /// `appcheck` (wire-protocol.md §6.3), or the token of the `ac` URL parameter or the `X-Firebase-AppCheck` header
    /// when the session opens (`request` `nil`: nothing to answer).
    ///
    /// A valid token admits the connection's data requests (in enforce mode) until it expires; then `apc` tells the
    /// client, which fetches a fresh token and sends it with `appcheck`. A refused one is answered `invalid_token`
    /// (`expired_token`) in enforce mode, which makes the SDKs drop it and fetch another, and `ok` in monitor mode,
    /// where nothing changes for the client. Either way it is counted and logged. Like `auth`, a token naming a key
    /// the server has not fetched yet holds the requests behind it until the keys were fetched again.
    func presentAppCheck(_ token: String, request: Int?) {
        guard let verifier = services.appCheck.activeVerifier else {
            if let request { send(.ok(request)) }
            return
        }
        let clock = services.clock
        let immediate = verifier.verifyOrAwaitKeys(token, now: clock() / 1000) { [weak self] in
            guard let self else { return }
            self.loop.execute {
                guard !self.channel.isClosed else { return }
                self.applyAppCheck(verifier.verify(token, now: clock() / 1000), request: request)
                self.releaseHeldRequests()
            }
        }
        if let immediate {
            applyAppCheck(immediate, request: request)
        } else {
            holdRequests()
        }
    }

    /// `unappcheck` / `unappeck`: the client dropped its token.
    func dropAppCheck(request: Int) {
        appCheck = .none
        credentials.appCheckGeneration += 1
        send(.ok(request))
    }

    /// Whether `action` may run as far as App Check is concerned; in enforce mode a data request without a valid
    /// token is answered `permission_denied` here.
    func appCheckAdmits(_ action: ClientAction, request: Int) -> Bool {
        let policy = services.appCheck
        guard policy.activeVerifier != nil else { return true }
        switch action {
        case .listen, .get, .put, .merge, .onDisconnectPut, .onDisconnectMerge, .onDisconnectCancel: break
        default: return true
        }
        if identity.holdsAdminCredential { return true }
        if case .valid(_, let until) = appCheck, until > services.clock() / 1000 { return true }
        metrics.appCheckMissing.increment()
        if !credentials.appCheckMissingLogged {
            credentials.appCheckMissingLogged = true
            services.logger.info("appcheck.missing: a data request without a valid App Check token", metadata: [
                "session": "\(sessionID)", "mode": "\(policy.mode.rawValue)", "namespace": "\(namespace.name)",
            ])
        }
        guard policy.mode == .enforce else { return true }
        metrics.appCheckRefused.increment()
        send(.failure(request, status: .permissionDenied, message: ResponseStatus.permissionDeniedMessage))
        return false
    }

    /// Records what the verifier said about the connection's token and answers the `appcheck` request, if any.
    private func applyAppCheck(_ outcome: AppCheckOutcome, request: Int?) {
        let mode = services.appCheck.mode
        credentials.appCheckGeneration += 1
        switch outcome {
        case .valid(let appID, let acceptedUntil):
            appCheck = .valid(appID: appID, acceptedUntil: acceptedUntil)
            credentials.appCheckMissingLogged = false
            metrics.appCheckValid.increment()
            scheduleAppCheckExpiry(at: acceptedUntil)
            if let request { send(.ok(request)) }
        case .expired:
            metrics.appCheckExpired.increment()
            refuseAppCheck(request, reason: "the token expired (exp)", mode: mode,
                           status: .expiredToken, message: AppCheckPolicy.expiredTokenMessage)
        case .invalid(let reason):
            metrics.appCheckInvalid.increment()
            refuseAppCheck(request, reason: "\(reason)", mode: mode,
                           status: .invalidToken, message: AppCheckPolicy.invalidTokenMessage)
        }
    }

    /// A token that does not pass: logged with `reason`; its request, if any, is refused in enforce mode (with the
    /// status that makes the SDKs fetch another) and acknowledged in monitor mode.
    private func refuseAppCheck(_ request: Int?, reason: String, mode: AppCheckPolicy.Mode, status: ResponseStatus,
                                message: String)
    {
        appCheck = .refused
        services.logger.info("appcheck.rejected", metadata: [
            "reason": "\(reason)", "session": "\(sessionID)", "mode": "\(mode.rawValue)",
        ])
        guard let request else { return }
        if mode == .enforce {
            send(.failure(request, status: status, message: message))
        } else {
            send(.ok(request))
        }
    }

    /// Sends `apc` when the token expires, unless another token (or none) replaced it first. Listens already
    /// admitted stay: the SDKs do not reconnect after `apc`, they send a fresh token, so revoking them would cancel
    /// the app's listeners for good. New data requests wait for that token (enforce mode).
    private func scheduleAppCheckExpiry(at acceptedUntil: Double) {
        let generation = credentials.appCheckGeneration
        let delay = max(0, acceptedUntil - services.clock() / 1000)
        loop.execute(after: min(delay, 86_400 * 365)) { [weak self] in
            guard let self, self.credentials.appCheckGeneration == generation, !self.channel.isClosed else { return }
            self.appCheck = .refused
            self.credentials.appCheckGeneration += 1
            self.metrics.appCheckRevoked.increment()
            self.send(.appCheckRevoked(status: .expiredToken, reason: AppCheckPolicy.expiredTokenMessage))
            self.loop.flushPending()
        }
    }
}
