import Auth
import DataModel
import Dispatch
import HTTPServer
import Logging
import Transport
import Wire

extension WireSession {
    /// `auth` / `gauth` (wire-protocol.md §6.2): verify the credential and replace the connection's identity.
    ///
    /// A token naming a signing key the server has not fetched (one Google just rotated in) waits for the keys to be
    /// fetched again, without blocking the loop: the requests that follow it on this connection are held meanwhile
    /// and run in order after its answer, so they see the identity it gives, as they would have without the wait.
    func authenticate(_ request: AuthRequest, request number: Int) {
        let verifier = services.tokenVerifier
        let clock = services.clock
        let credential = request.credential
        let immediate = verifier.verifyOrAwaitKeys(credential, now: clock() / 1000) { [weak self] in
            guard let self else { return }
            self.loop.execute {
                guard !self.channel.isClosed else { return }
                self.applyAuthentication(verifier.verify(credential, now: clock() / 1000), request: request,
                                         number: number)
                self.releaseHeldRequests()
            }
        }
        if let immediate {
            applyAuthentication(immediate, request: request, number: number)
        } else {
            holdRequests()
        }
    }

    /// Holds the requests that arrive from now on, until ``releaseHeldRequests()``.
    func holdRequests() {
        if credentials.heldRequests == nil { credentials.heldRequests = [] }
    }

    /// Runs the held requests in order; stops holding again if one of them has to wait for keys in turn.
    func releaseHeldRequests() {
        guard var held = credentials.heldRequests?[...] else { return }
        credentials.heldRequests = nil
        while let next = held.popFirst() {
            perform(next.action, request: next.number)
            if credentials.heldRequests != nil {
                credentials.heldRequests = Array(held)
                break
            }
        }
        loop.flushPending()
    }

    /// Answers an `auth` with what the verifier said and replaces the identity.
    private func applyAuthentication(_ outcome: AuthOutcome, request: AuthRequest, number: Int) {
        let now = services.clock() / 1000
        switch outcome {
        case .admin where openedByCrossSitePage:
            changeIdentity(to: .unauthenticated)
            send(.failure(number, status: .permissionDenied,
                          message: "The admin credential is not accepted from another site's web page."))
        case .admin:
            if request.noAuth {
                changeIdentity(to: .override(nil))
            } else if let variable = request.authVariable {
                changeIdentity(to: .override(variable))
            } else {
                changeIdentity(to: .admin)
            }
            send(.response(requestNumber: number, status: .ok, payload: .json(.object([("auth", .null)]))))
        case .user(let user):
            changeIdentity(to: .user(user))
            var info: [(key: String, value: JSONValue)] = [("auth", user.ruleVariable)]
            if let expiresAt = user.expiresAt { info.append(("expires", .number(expiresAt))) }
            if let acceptedUntil = user.acceptedUntil { scheduleExpiry(at: acceptedUntil, now: now) }
            send(.response(requestNumber: number, status: .ok, payload: .json(.object(info))))
        case .expired:
            changeIdentity(to: .unauthenticated)
            services.logger.info("auth.rejected", metadata: ["reason": "the token expired (exp)", "session": "\(sessionID)"])
            send(.failure(number, status: .expiredToken, message: Self.expiredMessage))
        case .invalid(let reason):
            changeIdentity(to: .unauthenticated)
            services.logger.info("auth.rejected", metadata: ["reason": "\(reason)", "session": "\(sessionID)"])
            send(.failure(number, status: .invalidToken, message: "Could not parse auth token."))
        }
        // Listens the new identity may not read are revoked (wire-protocol.md §6.2).
        recheckListens()
    }

    /// Replaces the identity; a pending expiry of the previous credential no longer applies.
    func changeIdentity(to identity: ConnectionIdentity) {
        self.identity = identity
        credentials.identityGeneration += 1
    }

    /// Revokes the credential with `ac` when it expires; the SDKs then reconnect with a fresh token.
    private func scheduleExpiry(at expiresAt: Double, now: Double) {
        let generation = credentials.identityGeneration
        let delay = max(0, expiresAt - now)
        loop.queue.asyncAfter(deadline: .now() + .milliseconds(Int(min(delay, 86_400 * 365) * 1000))) {
            [weak self] in
            guard let self, self.credentials.identityGeneration == generation, !self.channel.isClosed else { return }
            self.changeIdentity(to: .unauthenticated)
            self.send(.authRevoked(status: .expiredToken, reason: Self.expiredMessage))
            self.recheckListens()
            self.loop.flushPending()
        }
    }

    private static let expiredMessage = "Auth token is expired."
}
