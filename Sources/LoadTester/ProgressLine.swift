import Glibc

/// The live progress line on standard error: rewritten in place several times a second on a terminal, a plain
/// line every five seconds otherwise (logs, pipes, CI).
final class ProgressLine {
    /// Seconds between plain lines when standard error is not a terminal.
    static let plainInterval: UInt64 = 5_000_000_000
    /// Seconds between rewrites on a terminal.
    static let terminalInterval: UInt64 = 250_000_000

    private let enabled: Bool
    private let terminal: Bool
    private var nextUpdate: UInt64 = 0
    private var showing = false

    init(enabled: Bool) {
        self.enabled = enabled
        terminal = isatty(STDERR_FILENO) == 1
    }

    /// Shows `text` (built only when due) at `now`.
    func update(now: UInt64, _ text: () -> String) {
        guard enabled else { return }
        if nextUpdate == 0, !terminal {
            // The first plain line comes one interval in, so that short runs print none.
            nextUpdate = now + Self.plainInterval
        }
        guard now >= nextUpdate else { return }
        nextUpdate = now + (terminal ? Self.terminalInterval : Self.plainInterval)
        if terminal {
            writeText("\r\u{1B}[K" + text(), to: STDERR_FILENO)
            showing = true
        } else {
            complain(text())
        }
    }

    /// Ends the line on a terminal so that what follows starts on its own line.
    func finish() {
        guard showing else { return }
        writeText("\r\u{1B}[K", to: STDERR_FILENO)
        showing = false
    }
}
