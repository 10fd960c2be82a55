import DataModel
@testable import Gateway
import Store
import Testing

@Suite("Routing writes to views")
struct ViewRegistryTests {
    private func view(_ registry: ViewRegistry, _ location: String) throws -> View {
        let key = ViewKey(path: try path(location), query: .all)
        return registry.acquire(key) {
            View(key: key, query: .all, metrics: GatewayMetrics())
        }.view
    }

    @Test("a write reaches views at its ancestors, itself and below it, and no others")
    func routing() throws {
        let registry = ViewRegistry()
        let root = try view(registry, "/")
        let rooms = try view(registry, "/rooms")
        let room = try view(registry, "/rooms/r1")
        let member = try view(registry, "/rooms/r1/members/alice")
        let otherRoom = try view(registry, "/rooms/r2")
        let users = try view(registry, "/users")
        let found = Set(registry.views(affectedBy: [try change("/rooms/r1/members", "null", "1")]).map(ObjectIdentifier.init))
        #expect(found == Set([root, rooms, room, member].map(ObjectIdentifier.init)))
        #expect(!found.contains(ObjectIdentifier(otherRoom)) && !found.contains(ObjectIdentifier(users)))
    }

    @Test("listens share one view per location and query; the last release removes it")
    func sharing() throws {
        let registry = ViewRegistry()
        let first = try view(registry, "/a/b")
        let second = try view(registry, "/a/b")
        #expect(first === second)
        #expect(registry.count == 1)
        #expect(!registry.release(first))
        #expect(registry.release(second))
        #expect(registry.count == 0)
        #expect(registry.views(affectedBy: [try change("/a/b", "null", "1")]).isEmpty)
    }
}
