import ArgumentParser
import Auth
import Gateway
import Logging
import Settings
import TLS

/// The settings of fetched signing keys: Firebase ID tokens, OpenID Connect issuers and App Check.
///
/// The Auth module does no networking; here its key sets get their fetcher: TLS's `HTTPSClient` (the system's CAs
/// plus `auth.keysCAFile`, `auth.keysFetchTimeoutSeconds`, documents up to 1 MiB, three redirects at most).
enum AuthSettings {
    /// Largest key document accepted (Google's certificate map is about 3 KiB).
    static let maxDocumentBytes = 1 << 20

    /// Where ID-token keys are fetched from: `auth.jwksURL`, or Google's certificates with
    /// `auth.firebaseProjectId`; `nil` when keys come from the configuration only.
    static func idTokenKeys(from settings: SettingValues, logger: Logger) throws -> RemoteKeySource? {
        let jwksURL = settings[SettingsTable.Auth.jwksURL]
        guard settings[SettingsTable.Auth.firebaseProjectId] != nil || jwksURL != nil else { return nil }
        let url = jwksURL ?? RemoteKeySource.firebaseIDTokenCertificates
        return try source(url: url, settings: settings, logger: logger, tokens: "ID tokens")
    }

    /// The App Check policy: off unless `appCheck.projectNumber` is set and `appCheck.mode` is not `off`.
    static func appCheck(from settings: SettingValues, logger: Logger) throws -> AppCheckPolicy {
        typealias AppCheck = SettingsTable.AppCheck
        guard let mode = AppCheckPolicy.Mode(rawValue: settings[AppCheck.mode].lowercased()) else {
            throw ValidationError("appCheck.mode must be off, monitor or enforce")
        }
        guard let number = settings[AppCheck.projectNumber], mode != .off else { return AppCheckPolicy(mode: .off) }
        let keys = try source(url: settings[AppCheck.jwksURL], settings: settings, logger: logger,
                              tokens: "App Check tokens")
        let verifier: AppCheckVerifier
        do {
            verifier = try AppCheckVerifier(projectNumber: number, keys: keys,
                                            clockSkewSeconds: settings[SettingsTable.Auth.clockSkewSeconds])
        } catch {
            throw ValidationError("appCheck: \(error)")
        }
        logger.info("appcheck.enabled", metadata: [
            "project_number": "\(number)", "mode": "\(mode.rawValue)", "keys": "\(keys.url)",
        ])
        return AppCheckPolicy(mode: mode, verifier: verifier)
    }

    /// Logs how ID tokens are verified when their keys are fetched.
    static func logStart(_ settings: SettingValues, keys: RemoteKeySource?, logger: Logger) {
        guard let keys else { return }
        if let project = settings[SettingsTable.Auth.firebaseProjectId] {
            logger.info("auth.firebase: Firebase ID tokens of project \(project) are verified", metadata: [
                "keys": "\(keys.url)", "note": "keys are fetched in the background; tokens wait for them",
            ])
        } else {
            let issuer = settings[SettingsTable.Auth.issuer] ?? "?", audience = settings[SettingsTable.Auth.audience] ?? "?"
            logger.info("auth.jwks: tokens of \(issuer) for \(audience) are verified",
                        metadata: ["keys": "\(keys.url)"])
        }
    }

    /// A key source fetching over HTTPS with the operator's CA file and timing, logging every fetch.
    private static func source(url: String, settings: SettingValues, logger: Logger, tokens: String) throws
        -> RemoteKeySource
    {
        var source = RemoteKeySource(
            url: url, fetcher: try fetcher(settings),
            minimumRefreshSeconds: settings[SettingsTable.Auth.keysMinRefreshSeconds],
            fetchTimeoutSeconds: settings[SettingsTable.Auth.keysFetchTimeoutSeconds])
        source.maxDocumentBytes = maxDocumentBytes
        source.events = { event in
            switch event {
            case .fetched(let url, let keyIDs, let cacheSeconds, let ignored):
                logger.info("auth.keys_fetched", metadata: [
                    "tokens": "\(tokens)", "url": "\(url)", "kids": "\(keyIDs.joined(separator: ","))",
                    "cache_seconds": "\(Int(cacheSeconds))",
                ])
                for note in ignored { logger.notice("auth.keys_ignored: \(note)", metadata: ["url": "\(url)"]) }
            case .failed(let url, let reason, let keptKeys, let retrySeconds):
                logger.warning("auth.keys_fetch_failed: the cached keys stay in use", metadata: [
                    "tokens": "\(tokens)", "url": "\(url)", "reason": "\(reason)", "cached_keys": "\(keptKeys)",
                    "retry_seconds": "\(Int(retrySeconds))",
                ])
            }
        }
        return source
    }

    /// Fetches a key document with TLS's HTTPS client: a 200 response's body and its `Cache-Control` lifetime.
    private static func fetcher(_ settings: SettingValues) throws -> RemoteKeySource.Fetcher {
        let context: TLSContext
        do {
            context = try TLSContext.httpsClient(additionalTrustedCAPath: settings[SettingsTable.Auth.keysCAFile])
        } catch {
            throw ValidationError("auth.keysCAFile: \(error)")
        }
        let client = HTTPSClient(context: context, timeoutSeconds: settings[SettingsTable.Auth.keysFetchTimeoutSeconds],
                                 maxBodyBytes: maxDocumentBytes)
        return { url throws(KeyDocumentFetchError) in
            let response: HTTPSResponse
            do {
                response = try client.get(url)
            } catch {
                throw KeyDocumentFetchError("\(error)")
            }
            guard response.status == 200 else { throw KeyDocumentFetchError("HTTP status \(response.status)") }
            return FetchedKeyDocument(
                body: response.body,
                maxAgeSeconds: FetchedKeyDocument.maxAge(cacheControl: response.header("Cache-Control")))
        }
    }
}
