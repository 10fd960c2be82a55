import Dispatch
import Synchronization

/// The signing keys published at a ``RemoteKeySource``, cached and kept fresh on a queue of their own.
///
/// Verification reads the cached keys without waiting (``keys``). Fetching — the HTTPS request, parsing, and
/// turning each key into a jwt-kit signer — runs on a private serial queue, never on an event loop or a namespace's
/// sequencer. A fetch starts at creation, again when the cache lifetime (`max-age`, within the source's bounds)
/// runs out, after a failure with a growing delay, and on demand through ``refresh(forUnknownKeyID:then:)`` when a
/// token names a key the cache lacks, at most once per ``RemoteKeySource/minimumRefreshSeconds``. A successful
/// fetch replaces the keys: a key withdrawn from the document is no longer accepted. A failed one keeps them.
final class RemoteKeySet: Sendable {
    let source: RemoteKeySource
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let fetchDocument: @Sendable (String) throws(KeyDocumentFetchError) -> FetchedKeyDocument

    private struct State {
        var keys: [VerificationKey] = []
        var fetchedAt: UInt64?
        var lastAttemptAt: UInt64?
        var fetching = false
        var waiters: [Int: @Sendable () -> Void] = [:]
        var nextWaiter = 0
        var consecutiveFailures = 0
        var lastError: String?
        var fetches = 0
        var failures = 0
        /// Bumped whenever a timer is set, so only the latest one fetches.
        var timerGeneration = 0
    }

    /// Creates the set and starts the first fetch in the background.
    ///
    /// - Throws: ``AuthConfigurationError/invalidKeyURL(_:)`` for a URL that is not `https://`.
    init(source: RemoteKeySource, label: String) throws(AuthConfigurationError) {
        guard source.url.lowercased().hasPrefix("https://"), source.url.count > "https://".count else {
            throw .invalidKeyURL(source.url)
        }
        guard source.minimumRefreshSeconds.isFinite, source.minimumRefreshSeconds >= 0,
              source.fetchTimeoutSeconds.isFinite, source.fetchTimeoutSeconds > 0
        else { throw .invalidKeyURL("\(source.url): the refresh interval and the fetch timeout must be positive") }
        self.source = source
        queue = DispatchQueue(label: "canopy.auth.keys.\(label)")
        fetchDocument = source.fetcher
        startFetch()
    }

    /// The keys in use now (empty until the first fetch succeeded).
    var keys: [VerificationKey] {
        state.withLock { $0.keys }
    }

    /// Why the last fetch failed, when it did.
    var lastError: String? {
        state.withLock { $0.lastError }
    }

    /// Counts and age, for `/.metrics`.
    var status: RemoteKeyStatus {
        let now = Self.now()
        return state.withLock { state in
            RemoteKeyStatus(
                url: source.url, keyCount: state.keys.count, fetches: state.fetches, failures: state.failures,
                ageSeconds: state.fetchedAt.map { Double(now &- $0) / 1e9 })
        }
    }

    /// A token named a key the cache lacks: fetches the document again unless a fetch is running (then joins it)
    /// or one started less than ``RemoteKeySource/minimumRefreshSeconds`` ago.
    ///
    /// - Returns: `true` when `then` will be called, once, when the fetch ends (whatever its result) or after
    ///   ``RemoteKeySource/fetchTimeoutSeconds`` plus a second, on a queue of the set's; `false` when no fetch may
    ///   run now (`then` is never called).
    func refresh(forUnknownKeyID keyID: String?, then: @escaping @Sendable () -> Void) -> Bool {
        let now = Self.now()
        let decision: (waiter: Int, starts: Bool)? = state.withLock { state in
            var starts = false
            if !state.fetching {
                if let last = state.lastAttemptAt, Double(now &- last) / 1e9 < source.minimumRefreshSeconds {
                    return nil
                }
                state.fetching = true
                state.lastAttemptAt = now
                starts = true
            }
            let id = state.nextWaiter
            state.nextWaiter += 1
            state.waiters[id] = then
            return (id, starts)
        }
        guard let decision else { return false }
        if decision.starts { queue.async { [self] in runFetch() } }
        // Bounded: a fetch that hangs (a name lookup cannot be bounded) does not hold the request.
        let bound = source.fetchTimeoutSeconds + 1
        DispatchQueue.global().asyncAfter(deadline: .now() + bound) { [weak self] in
            guard let self else { return }
            let late = self.state.withLock { $0.waiters.removeValue(forKey: decision.waiter) }
            late?()
        }
        return true
    }

    /// Starts a fetch unless one is running (at creation, and when a timer fires).
    private func startFetch() {
        let now = Self.now()
        let start = state.withLock { state -> Bool in
            guard !state.fetching else { return false }
            state.fetching = true
            state.lastAttemptAt = now
            return true
        }
        guard start else { return }
        queue.async { [self] in runFetch() }
    }

    /// One fetch, on the queue: the document, its keys, the new state, the next timer, the waiters.
    private func runFetch() {
        let result = Result { () throws(KeyDocumentFetchError) -> (KeyFileReader.Contents, [VerificationKey], Double) in
            let document = try fetchDocument(source.url)
            guard document.body.count <= source.maxDocumentBytes else {
                throw KeyDocumentFetchError("the document is larger than \(source.maxDocumentBytes) bytes")
            }
            let contents: KeyFileReader.Contents
            let keys: [VerificationKey]
            do {
                contents = try KeyFileReader.parse(document.body, path: source.url)
                keys = try KeyRegistration.register(contents.keys)
            } catch {
                throw KeyDocumentFetchError("\(error)")
            }
            let maxAge = document.maxAgeSeconds ?? source.defaultCacheSeconds
            let lifetime = min(max(maxAge, source.minimumRefreshSeconds, 1), source.maximumCacheSeconds)
            return (contents, keys, lifetime)
        }
        let now = Self.now()
        let (waiters, event, delay, generation) = state.withLock { state in
            state.fetching = false
            let waiters = Array(state.waiters.values)
            state.waiters.removeAll()
            state.timerGeneration += 1
            switch result {
            case .success(let (contents, keys, lifetime)):
                state.keys = keys
                state.fetchedAt = now
                state.consecutiveFailures = 0
                state.lastError = nil
                state.fetches += 1
                let event = RemoteKeyEvent.fetched(
                    url: source.url, keyIDs: keys.map { $0.keyID ?? "(none)" }, cacheSeconds: lifetime,
                    ignored: contents.ignored)
                return (waiters, event, lifetime, state.timerGeneration)
            case .failure(let error):
                state.consecutiveFailures += 1
                state.failures += 1
                state.lastError = error.description
                let first = max(source.minimumRefreshSeconds, 1)
                let delay = min(first * Double(1 << min(state.consecutiveFailures - 1, 10)), 300)
                let event = RemoteKeyEvent.failed(
                    url: source.url, reason: error.description, keptKeys: state.keys.count, retrySeconds: delay)
                return (waiters, event, delay, state.timerGeneration)
            }
        }
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, self.state.withLock({ $0.timerGeneration == generation }) else { return }
            self.startFetch()
        }
        source.events?(event)
        for waiter in waiters { waiter() }
    }

    private static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}
