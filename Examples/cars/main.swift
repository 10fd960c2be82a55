/// Cars: a CRUD store, the flow of the classic SwiftUI + Firebase CRUD tutorial as a command-line program.
///
/// It observes the list at `cars` (`.childAdded`, `.childChanged`, `.childRemoved`, `.value`), then creates three
/// cars under push ids (`childByAutoId().setValue(from:)`), updates one (`updateChildValues`) and deletes one
/// (`removeValue`), printing every event as it arrives; it ends with the list as the server has it, and checks that
/// the events were exactly the expected ones.
///
/// Run it against a local server (it empties `cars` first, so every run prints the same lines):
///
///     scripts/run --namespaces '*'                            # in another terminal
///     swift run cars 'http://127.0.0.1:9000?ns=examples'
///
/// It exits 0 when everything went as expected, and 1 with a message otherwise (or after 20 s without an answer).

import CanopyDatabase
import Foundation

/// A car as the app stores it at `cars/<push id>`.
struct Car: Codable {
    var model: String
    var year: Int
}

let url = CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:9000?ns=examples"
giveUp(after: 20)
do {
    try await manageCars(at: url)
} catch {
    fail("\(error)")
}

/// The whole flow. (In a function rather than at the top level: in Swift 6, top-level code belongs to the main
/// actor, and the database's blocks run on its own callback queue.)
func manageCars(at url: String) async throws {
    let cars = Database.database(url: url).reference(withPath: "cars")
    try await cars.removeValue()  // start from an empty store

    // Read: observe the list, as a list view would. The blocks run on the database's callback queue; each one
    // passes its event on to `events`, in the order they happened.
    let (events, record) = AsyncStream.makeStream(of: String.self)
    cars.observe(.childAdded, with: { record.yield("childAdded \(describe($0))") })
    cars.observe(.childChanged, with: { record.yield("childChanged \(describe($0))") })
    cars.observe(.childRemoved, with: { record.yield("childRemoved \(describe($0))") })
    cars.observe(.value, with: { record.yield("value \($0.childrenCount)") })
    print("observing cars")
    var seen = await next(1, of: events)  // the first value: no cars yet

    // Create: each car under a new push id. Push ids grow with time, so the list stays in the order of creation.
    // The observers hear of a write at once, before the server has answered.
    var added: [DatabaseReference] = []
    for car in [Car(model: "Model S", year: 2012), Car(model: "Civic", year: 2019), Car(model: "Beetle", year: 1938)] {
        print("add \(car.model)")
        let ref = cars.childByAutoId()
        try ref.setValue(from: car) { error in
            if let error { fail("adding \(car.model) failed: \(error)") }
        }
        added.append(ref)
        seen += await next(2, of: events)  // childAdded, then the new value
    }

    // Update: only the children named change; the model stays.
    print("update Civic: year 2020")
    try await added[1].updateChildValues(["year": 2020])
    seen += await next(2, of: events)

    // Delete.
    print("remove Beetle")
    try await added[2].removeValue()
    seen += await next(2, of: events)

    // The list as the server has it now.
    let list = try await cars.getData()
    print("cars: \(list.children.map(describe).joined(separator: ", "))")

    let expected = [
        "value 0",
        "childAdded Model S (2012)", "value 1",
        "childAdded Civic (2019)", "value 2",
        "childAdded Beetle (1938)", "value 3",
        "childChanged Civic (2020)", "value 3",
        "childRemoved Beetle (1938)", "value 2",
    ]
    guard seen == expected else { fail("expected the events \(expected), saw \(seen)") }
    print("ok: \(seen.count) events as expected")
}

// MARK: - Helpers

/// "Civic (2019)", or what is wrong with the data.
func describe(_ snapshot: DataSnapshot) -> String {
    do {
        let car = try snapshot.data(as: Car.self)
        return "\(car.model) (\(car.year))"
    } catch {
        return "\(snapshot.key): not a car (\(error))"
    }
}

/// Waits for the next `count` events, prints them and returns them.
func next(_ count: Int, of events: AsyncStream<String>) async -> [String] {
    var lines: [String] = []
    for await line in events {
        print(line)
        lines.append(line)
        if lines.count == count { break }
    }
    return lines
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
