import Dispatch
import JWTKit
import Synchronization

/// Turns parsed keys into jwt-kit signers once, at start, so that verification never has to wait for anything.
///
/// jwt-kit 5 keeps its signers (`HMACSigner`, `RSASigner`, `ECDSASigner`) internal; the only public way to obtain one
/// is `JWTKeyCollection.getKey(for:alg:)`, which is `async` because the collection is an actor. The signer it returns
/// is an immutable `Sendable` value whose `verify(_:signs:)` is synchronous, so we fetch every signer here and keep
/// them; `JWTKeyCollection.verify` is never used.
///
/// ``TokenVerifier/init(configuration:)`` is synchronous (the server starts from a synchronous command), so this
/// blocks its caller until the collection has answered. The task runs with a preference for a private serial
/// dispatch queue (SE-0417 task executors; default actors such as `JWTKeyCollection` honour the preference), so
/// blocking even every thread of Swift's cooperative pool cannot starve it. Alternatives rejected: an `async`
/// factory would push the bridge into every caller; copying jwt-kit's signer code would mean owning crypto glue.
enum KeyRegistration {
    /// Returns a ``VerificationKey`` for each of `keys`, in order.
    static func register(_ keys: [ParsedKey]) throws(AuthConfigurationError) -> [VerificationKey] {
        guard !keys.isEmpty else { return [] }
        let executor = DispatchQueueTaskExecutor(label: "canopy.auth.key-registration")
        let outcome = RegistrationOutcome()
        let finished = DispatchSemaphore(value: 0)
        Task.detached(executorPreference: executor) {
            let result = await fetchSigners(keys)
            outcome.result.withLock { $0 = result }
            finished.signal()
        }
        finished.wait()
        let result = outcome.result.withLock { $0 }
        switch result {
        case .success(let keys): return keys
        case .failure(let error): throw error
        case nil: throw .keyRegistrationFailed(reason: "the registration task ended without a result")
        }
    }

    /// Adds each key to a fresh collection under a private key id and reads its signer back.
    private static func fetchSigners(_ keys: [ParsedKey]) async -> Result<[VerificationKey], AuthConfigurationError> {
        let collection = JWTKeyCollection()
        var verificationKeys: [VerificationKey] = []
        for (index, key) in keys.enumerated() {
            let slot = JWKIdentifier(string: "canopy-key-\(index)")
            switch key.material {
            case .hmac(let secret):
                await collection.add(hmac: secret, digestAlgorithm: .sha256, kid: slot)
            case .rsa(let publicKey):
                await collection.add(rsa: publicKey, digestAlgorithm: .sha256, kid: slot)
            case .ecdsa(let publicKey):
                await collection.add(ecdsa: publicKey, kid: slot)
            }
            let verifier: any JWTAlgorithm
            do {
                verifier = try await collection.getKey(for: slot, alg: key.algorithm.rawValue)
            } catch {
                return .failure(.keyRegistrationFailed(reason: "\(key.source): \(error)"))
            }
            guard verifier.name == key.algorithm.rawValue else {
                return .failure(
                    .keyRegistrationFailed(
                        reason: "\(key.source): jwt-kit made a \(verifier.name) signer, not \(key.algorithm.rawValue)"))
            }
            verificationKeys.append(
                VerificationKey(algorithm: key.algorithm, keyID: key.keyID, source: key.source, verifier: verifier))
        }
        return .success(verificationKeys)
    }
}

/// The registration task's result, handed from the task to the waiting caller.
private final class RegistrationOutcome: Sendable {
    /// Written once by the task before it signals; read by the caller after the wait. Protected by the mutex.
    let result = Mutex<Result<[VerificationKey], AuthConfigurationError>?>(nil)
}

/// A task executor that runs jobs on a serial dispatch queue of its own, outside Swift's cooperative pool.
private final class DispatchQueueTaskExecutor: TaskExecutor {
    /// Runs the jobs, one at a time.
    private let queue: DispatchQueue

    /// Creates an executor with a new serial queue named `label`.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `job` on the queue, telling it which task executor it runs on.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
