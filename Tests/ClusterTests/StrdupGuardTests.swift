import CNatsGuard
import Testing

@Suite("nats.c's strdup of a missing name does not crash the process")
struct StrdupGuardTests {
    @Test("the process's strdup answers NULL for NULL (nats.c's js_Subscribe then fails, and the log tries again)")
    func nullAnswersNull() {
        #expect(canopy_strdup_guard_installed() == 1)
    }
}
