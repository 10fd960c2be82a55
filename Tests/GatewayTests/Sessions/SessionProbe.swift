import DataModel
@testable import Gateway
import Rules
import Wire

/// One wire session on a ``RecordingChannel`` over an ``InMemoryGateway``, with helpers to send requests and read
/// what came back.
final class SessionProbe: @unchecked Sendable {
    let memory: InMemoryGateway
    let channel = RecordingChannel()
    let session: WireSession

    init(_ memory: InMemoryGateway, crossSite: Bool = false, lastSessionID: String? = nil) {
        self.memory = memory
        let channel = self.channel
        session = memory.onLoop {
            let session = WireSession(channel: channel, loop: memory.loop, namespace: memory.namespace,
                                      services: memory.services, host: "test", lastSessionID: lastSessionID,
                                      openedByCrossSitePage: crossSite)
            session.open()
            return session
        }
    }

    /// Sends raw message bytes, as the channel would hand them on.
    func send(raw: String) {
        let session = self.session
        memory.onLoop { session.receive(Array(raw.utf8)) }
    }

    /// Sends request `number`.
    func send(_ number: Int, _ action: String, _ body: String) {
        send(raw: String(decoding: request(number, action, body), as: UTF8.self))
    }

    /// Every message received, parsed.
    var received: [JSONValue] {
        channel.messages.compactMap { try? JSONReader.readValue(Array($0.utf8)) }
    }

    /// The answer to request `number` (its status and data), waiting for it.
    func answer(_ number: Int, within seconds: Double = 5) -> (status: String, data: JSONValue?)? {
        var found: (String, JSONValue?)?
        _ = eventually(within: seconds) {
            for message in received {
                guard case .number(let r)? = message["d"]?["r"], Int(r) == number,
                      case .string(let status)? = message["d"]?["b"]?["s"] else { continue }
                found = (status, message["d"]?["b"]?["d"])
                return true
            }
            return false
        }
        return found
    }

    /// Sends request `number` and waits for its answer's status.
    @discardableResult
    func ask(_ number: Int, _ action: String, _ body: String) -> String? {
        send(number, action, body)
        return answer(number)?.status
    }

    /// The data pushes received (`a` = `d`), as `(path, data, tag)`.
    var pushes: [(path: String, data: JSONValue, tag: Int?)] {
        received.compactMap { message in
            guard case .string("d")? = message["d"]?["a"], case .string(let path)? = message["d"]?["b"]?["p"],
                  let data = message["d"]?["b"]?["d"] else { return nil }
            var tag: Int?
            if case .number(let number)? = message["d"]?["b"]?["t"] { tag = Int(number) }
            return (path, data, tag)
        }
    }

    /// Control messages received, by type (`h`, `s`, `e`, `o`, …).
    var controls: [String] {
        received.compactMap { message in
            guard case .string("c")? = message["t"], case .string(let type)? = message["d"]?["t"] else { return nil }
            return type
        }
    }

    /// Server-initiated data actions received (`c` revocations, `ac`, `apc`, `sd`), in order.
    var actions: [String] {
        received.compactMap { message in
            guard case .string("d")? = message["t"], message["d"]?["r"] == nil,
                  case .string(let action)? = message["d"]?["a"] else { return nil }
            return action
        }
    }

    /// Ends the session as a closed transport does.
    func close() {
        let session = self.session
        memory.onLoop { session.closed() }
    }
}

extension InMemoryGateway {
    /// A gateway whose default namespace enforces `rules` (JSON text).
    convenience init(rules: String, configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        let holder = RulesHolder(nil)
        _ = try holder.replace(with: Array(rules.utf8), fileName: "test.rules.json")
        try self.init { configuration in
            configuration.rules = RulesLibrary(defaults: holder)
            configure(&configuration)
        }
    }
}
