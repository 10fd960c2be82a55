/// Profile: what an app does for a signed-in user at launch.
///
/// - First-login defaults: read `users/<uid>/profile` (`getData`) and write the defaults (`setValue`) only if there
///   is no profile yet; `createdAt` is the server's time (`ServerValue.timestamp()`).
/// - A visit counter: `ServerValue.increment(1)` on `users/<uid>/visits`, added by the server, so that visits from
///   several devices at once are all counted.
/// - Presence: when `.info/connected` says true, ask the server to set `status/<uid>` to "offline" when this
///   connection drops (`onDisconnectSetValue`), then set it to "online".
///
/// Run it twice against a local server: the first run writes the defaults, the second keeps them (same
/// `createdAt`) and counts a second visit. Between and after runs, `status/<uid>` is "offline".
///
///     scripts/run --namespaces '*'                            # in another terminal
///     swift run profile 'http://127.0.0.1:9000?ns=examples'  # optionally a uid after the URL (default: ada)
///
/// It exits 0 when everything went as expected, and 1 with a message otherwise (or after 20 s without an answer).

import CanopyDatabase
import Foundation

/// A user's profile at `users/<uid>/profile`.
struct Profile: Codable {
    var name: String
    var theme: String
    /// When the profile was created, in milliseconds since 1970 (the server's clock).
    var createdAt: Int
}

let arguments = CommandLine.arguments.dropFirst()
let url = arguments.first ?? "http://127.0.0.1:9000?ns=examples"
let uid = arguments.dropFirst().first ?? "ada"
giveUp(after: 20)
do {
    try await launch(at: url, uid: uid)
} catch {
    fail("\(error)")
}

/// The whole flow. (In a function rather than at the top level: in Swift 6, top-level code belongs to the main
/// actor, and the database's blocks run on its own callback queue.)
func launch(at url: String, uid: String) async throws {
    let database = Database.database(url: url)
    let user = database.reference(withPath: "users/\(uid)")

    // First login: write the defaults only when there is no profile. (Two devices signing in for the first time at
    // the same moment could both write them; `runTransactionBlock` would settle that.)
    let profile = user.child("profile")
    if try await profile.getData().exists() {
        print("returning user: profile kept")
    } else {
        try await profile.setValue(["name": "Guest", "theme": "system", "createdAt": ServerValue.timestamp()])
        print("first login: default profile written")
    }
    let saved = try await profile.getData().data(as: Profile.self)
    print("profile: name=\(saved.name) theme=\(saved.theme) createdAt=\(saved.createdAt)")

    // A visit: the server adds 1 to whatever number is there (or starts at 1).
    let visits = user.child("visits")
    try await visits.setValue(ServerValue.increment(1))
    let count = try await visits.getData().data(as: Int.self)
    print("visits: \(count)")

    // Presence, as Firebase's guide writes it with blocks. `.info/connected` fires again after every reconnection,
    // and the server forgets onDisconnect operations when they run, so they are set again each time.
    let status = database.reference(withPath: "status/\(uid)")
    let (presence, report) = AsyncStream.makeStream(of: String.self)
    database.reference(withPath: ".info/connected").observe(.value, with: { snapshot in
        guard snapshot.value as? Bool == true else { return }
        report.yield("connected")
        status.onDisconnectSetValue("offline") { error, _ in
            if let error {
                report.yield("error: onDisconnect refused: \(error)")
                return
            }
            report.yield("on disconnect: status/\(uid) = offline")
            status.setValue("online") { error, _ in
                report.yield(error.map { "error: online refused: \($0)" } ?? "status/\(uid) = online")
            }
        }
    })
    for await line in presence {
        if line.hasPrefix("error: ") { fail(String(line.dropFirst(7))) }
        print(line)
        if line == "status/\(uid) = online" { break }
    }

    // What another device would read now.
    let current = try await status.getData().value as? String ?? "nothing"
    print("server has status/\(uid) = \(current)")
    print("exiting: the server sets status/\(uid) to offline when the connection drops")
}

// MARK: - Helpers

/// Prints `message` to standard error and exits with status 1.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

/// Fails after `seconds`, so that a server that does not answer cannot hang the program.
func giveUp(after seconds: Int) {
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
        fail("no answer within \(seconds) s")
    }
}
