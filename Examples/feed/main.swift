/// Feed: a timeline paged by key, as a social app shows posts.
///
/// It writes 12 posts under push ids (`childByAutoId`: keys grow with time, so key order is posting order), shows
/// the newest page live (`queryOrderedByKey().queryLimited(toLast: 5)`, `.childAdded`), lets another user post twice
/// and sees the posts arrive, "pulls to refresh" the posts newer than the newest shown
/// (`queryStarting(atValue: newestKey)`), and "loads more" older pages until the first post
/// (`queryEnding(atValue: oldestKey).queryLimited(toLast: 6)`). The bound of a range is included, so each page drops
/// the post it starts or ends at: that one is already shown.
///
/// Run it against a local server (it empties `posts` first, so every run prints the same lines):
///
///     scripts/run --namespaces '*'                            # in another terminal
///     swift run feed 'http://127.0.0.1:9000?ns=examples'
///
/// It exits 0 when the timeline came out whole and in order, and 1 with a message otherwise (or after 20 s without
/// an answer).

import CanopyDatabase
import Foundation

let url = CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:9000?ns=examples"
giveUp(after: 20)
do {
    try await showFeed(at: url)
} catch {
    fail("\(error)")
}

/// The whole flow. (In a function rather than at the top level: in Swift 6, top-level code belongs to the main
/// actor, and the database's blocks run on its own callback queue.)
func showFeed(at url: String) async throws {
    guard let configuration = DatabaseConfiguration(url: url) else { fail("not a database URL: \(url)") }
    let posts = Database(configuration: configuration).reference(withPath: "posts")
    try await posts.removeValue()
    for number in 1...12 {
        try await posts.childByAutoId().setValue(["title": "Post \(number)", "postedAt": ServerValue.timestamp()])
    }
    print("posted 12 posts")

    // The newest page, live: its first five `.childAdded` events are the page, later ones are new posts.
    let (arrivals, deliver) = AsyncStream.makeStream(of: DataSnapshot.self)
    posts.queryOrderedByKey().queryLimited(toLast: 5).observe(.childAdded, with: { deliver.yield($0) })
    let firstPage = await next(5, of: arrivals)
    print("page: \(titles(firstPage))")
    var timeline = firstPage.map(title)  // oldest first
    guard var oldestKey = firstPage.first?.key, let newestKey = firstPage.last?.key else { fail("no posts") }

    // Another user (another connection) posts twice; the live query delivers the posts as they are written.
    let otherUser = Database(configuration: configuration).reference(withPath: "posts")
    for number in 13...14 {
        try await otherUser.childByAutoId().setValue(["title": "Post \(number)", "postedAt": ServerValue.timestamp()])
    }
    for post in await next(2, of: arrivals) {
        print("new post: \(title(post))")
    }

    // Pull to refresh: the posts from the newest one shown on, without that one.
    let newer = try await posts.queryOrderedByKey().queryStarting(atValue: newestKey).getData()
        .children.filter { $0.key != newestKey }
    print("refresh: \(titles(newer))")
    timeline += newer.map(title)

    // Load more: the page of five ending just before the oldest post shown, until there is none.
    while true {
        let older = try await posts.queryOrderedByKey().queryEnding(atValue: oldestKey).queryLimited(toLast: 6)
            .getData().children.filter { $0.key != oldestKey }
        guard let oldest = older.first else {
            print("older: none, this is the first post")
            break
        }
        print("older: \(titles(older))")
        timeline = older.map(title) + timeline
        oldestKey = oldest.key
    }

    print("timeline: \(timeline.joined(separator: ", "))")
    let expected = (1...14).map { "Post \($0)" }
    guard timeline == expected else { fail("expected the timeline \(expected), got \(timeline)") }
    print("ok: \(timeline.count) posts in order")
}

// MARK: - Helpers

/// The title of a post.
func title(_ post: DataSnapshot) -> String {
    post.childSnapshot(forPath: "title").value as? String ?? "(\(post.key): no title)"
}

/// "Post 1, Post 2, …"
func titles(_ posts: [DataSnapshot]) -> String {
    posts.map(title).joined(separator: ", ")
}

/// Waits for the next `count` snapshots and returns them.
func next(_ count: Int, of snapshots: AsyncStream<DataSnapshot>) async -> [DataSnapshot] {
    var received: [DataSnapshot] = []
    for await snapshot in snapshots {
        received.append(snapshot)
        if received.count == count { break }
    }
    return received
}

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
