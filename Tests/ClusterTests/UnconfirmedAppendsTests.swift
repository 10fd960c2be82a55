@testable import Cluster
import Store
import Testing

private func append(_ id: String) -> UnconfirmedAppends.Append {
    UnconfirmedAppends.Append(id: id, payload: Array(id.utf8), failed: { _ in })
}

@Suite("An acknowledged append missing from the copy followed is published again")
struct UnconfirmedAppendsTests {
    @Test("delivered with its id it is confirmed; with another id at its position it is lost")
    func confirmedOrLost() {
        var appends = UnconfirmedAppends()
        #expect(appends.acknowledged(append("n-1"), at: 10) == nil)
        #expect(appends.acknowledged(append("n-2"), at: 11) == nil)
        let atTen = appends.delivered("n-1", at: 10)
        let atEleven = appends.delivered("m-7", at: 11)
        #expect(atTen.isEmpty && atEleven.map(\.id) == ["n-2"] && appends.byPosition.isEmpty)
    }

    @Test("an acknowledgement that comes after its position was delivered is checked against the id delivered there")
    func lateAcknowledgement() {
        var appends = UnconfirmedAppends()
        _ = appends.delivered("n-1", at: 20)
        _ = appends.delivered("m-3", at: 21)
        let confirmed = appends.acknowledged(append("n-1"), at: 20)
        let lost = appends.acknowledged(append("n-2"), at: 21)
        #expect(confirmed == nil && lost?.id == "n-2" && appends.byPosition.isEmpty)
        _ = appends.delivered("x-1", at: 21 + UInt64(UnconfirmedAppends.recentCapacity))
        #expect(appends.acknowledged(append("n-9"), at: 21) == nil, "too old to check: its slot holds a later position")
    }

    @Test("positions skipped below a snapshot drop their appends, which the snapshot holds")
    func skipped() {
        var appends = UnconfirmedAppends()
        _ = appends.acknowledged(append("n-1"), at: 5)
        _ = appends.acknowledged(append("n-2"), at: 9)
        let lost = appends.delivered("m-1", at: 8)
        #expect(lost.isEmpty && appends.byPosition.keys.sorted() == [9])
    }
}
