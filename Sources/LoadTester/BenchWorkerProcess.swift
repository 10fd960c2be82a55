import Glibc

/// The body of a worker process (`canopy bench worker`, started by a run that needs more descriptors than one
/// process may hold): reads its assignment from standard input, runs its share of the connections, and reports on
/// standard output (``WorkerProtocol``).
public enum BenchWorkerProcess {
    /// Seconds between reports.
    static let reportInterval = 0.1

    /// Runs the worker until the parent says `stop` (or goes away); returns the exit status.
    public static func run() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        _ = ProcessStats.raiseOpenFileLimit()
        _ = fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK)
        var input = LineReader()
        guard let first = waitForLine(&input) else { return 1 }
        let assignment: WorkerAssignment
        let fleet: LocalFleet
        do {
            assignment = try WorkerProtocol.decode(WorkerAssignment.self, from: first)
            fleet = try LocalFleet(
                configuration: assignment.configuration, slot: assignment.slot, slots: assignment.slots,
                clockOrigin: assignment.clockOrigin)
            try fleet.startConnecting()
        } catch {
            report(WorkerMessage(kind: .failure, error: "\(error)"))
            return 1
        }
        var started = false
        while true {
            for line in input.readLines(STDIN_FILENO) {
                let text = String(decoding: line, as: UTF8.self)
                if text.hasPrefix(WorkerProtocol.startCommand + " "), !started,
                    let time = UInt64(text.dropFirst(WorkerProtocol.startCommand.count + 1))
                {
                    fleet.startWorkload(at: time)
                    started = true
                } else if text == WorkerProtocol.stopCommand {
                    return finish(fleet)
                }
            }
            if input.closed { return finish(fleet) }
            let progress = fleet.connectProgress
            if started {
                report(WorkerMessage(kind: .live, live: fleet.live, intervals: fleet.takeIntervals()))
            } else {
                report(
                    WorkerMessage(
                        kind: .connect, opened: progress.opened, failed: progress.failed, settled: progress.settled))
            }
            waitForInput(seconds: reportInterval)
        }
    }

    private static func finish(_ fleet: LocalFleet) -> Int32 {
        do {
            let stopped = try fleet.stop()
            report(WorkerMessage(kind: .result, intervals: stopped.intervals, result: stopped.result))
            return 0
        } catch {
            report(WorkerMessage(kind: .failure, error: "\(error)"))
            return 1
        }
    }

    private static func report(_ message: WorkerMessage) {
        guard let line = try? WorkerProtocol.line(message) else { return }
        writeAll(STDOUT_FILENO, line)
    }

    /// The first line of standard input, waiting for it (nil when the parent closed it first).
    private static func waitForLine(_ input: inout LineReader) -> ArraySlice<UInt8>? {
        while true {
            if let line = input.readLines(STDIN_FILENO).first { return line }
            if input.closed { return nil }
            waitForInput(seconds: 1)
        }
    }

    private static func waitForInput(seconds: Double) {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(seconds * 1000))
    }
}
