import Glibc

/// The connections spread over worker processes (`canopy bench worker`), for runs beyond one process's open-file
/// limit; each worker runs a ``LocalFleet`` for its slot and reports over a pipe (``WorkerProtocol``).
final class ProcessFleet: Fleet {
    /// Seconds to wait for every worker's result after `stop`.
    static let resultTimeout = 30.0

    private struct Child {
        var pid: pid_t
        var input: Int32
        var output: Int32
        var reader = LineReader()
        var connect = WorkerMessage(kind: .connect)
        var live = LiveCounts()
        var result: WorkerResult?
        var failure: String?
    }

    private var children: [Child] = []
    private var intervals: [IntervalSample] = []
    private let assignments: [WorkerAssignment]
    private let command: [String]

    init(configuration: BenchConfiguration, command: [String], clockOrigin: UInt64) throws {
        guard !command.isEmpty else { throw BenchRunError.workerProcess("no worker command") }
        let slots = configuration.processes ?? 1
        self.command = command
        assignments = (0..<slots).map {
            WorkerAssignment(configuration: configuration, slot: $0, slots: slots, clockOrigin: clockOrigin)
        }
    }

    deinit {
        for child in children {
            close(child.input)
            close(child.output)
        }
    }

    func startConnecting() throws {
        for assignment in assignments {
            var child = try spawn()
            children.append(child)
            guard writeAll(child.input, try WorkerProtocol.line(assignment)) else {
                child.failure = "worker \(assignment.slot) closed its input"
                throw BenchRunError.workerProcess(child.failure ?? "")
            }
        }
    }

    func pump() {
        for index in children.indices {
            let lines = children[index].reader.readLines(children[index].output)
            for line in lines {
                let message: WorkerMessage
                do {
                    message = try WorkerProtocol.decode(WorkerMessage.self, from: line)
                } catch {
                    children[index].failure = "unreadable report: \(String(decoding: line.prefix(120), as: UTF8.self))"
                    continue
                }
                switch message.kind {
                case .connect: children[index].connect = message
                case .live:
                    children[index].live = message.live
                    intervals += message.intervals
                case .result:
                    intervals += message.intervals
                    children[index].result = message.result
                case .failure: children[index].failure = message.error ?? "failed"
                }
            }
            if children[index].reader.closed, children[index].result == nil, children[index].failure == nil {
                children[index].failure = "worker process \(children[index].pid) exited early"
            }
        }
    }

    var connectProgress: (opened: Int, failed: Int, settled: Bool) {
        (
            children.reduce(0) { $0 + $1.connect.opened }, children.reduce(0) { $0 + $1.connect.failed },
            children.allSatisfy { $0.connect.settled || $0.failure != nil }
        )
    }

    func startWorkload(at time: UInt64) {
        for child in children { writeAll(child.input, Array("\(WorkerProtocol.startCommand) \(time)\n".utf8)) }
    }

    var live: LiveCounts {
        var total = LiveCounts(finished: true)
        for child in children {
            total.delivered += child.live.delivered
            total.acks += child.live.acks
            total.sent += child.live.sent
            total.finished = total.finished && (child.live.finished || child.failure != nil)
        }
        return total
    }

    func takeIntervals() -> [IntervalSample] {
        defer { intervals.removeAll() }
        return intervals
    }

    func clientCPUSeconds() -> Double {
        children.reduce(ProcessStats.ownCPUSeconds()) { $0 + (ProcessStats.cpuSeconds(pid: Int($1.pid)) ?? 0) }
    }

    func stop() throws -> (result: WorkerResult, intervals: [IntervalSample]) {
        for child in children { writeAll(child.input, Array("\(WorkerProtocol.stopCommand)\n".utf8)) }
        let deadline = monotonicNanoseconds() + UInt64(Self.resultTimeout * 1e9)
        while children.contains(where: { $0.result == nil && $0.failure == nil }), monotonicNanoseconds() < deadline {
            pump()
            sleepSeconds(0.01)
        }
        var merged = WorkerResult()
        var failures: [String] = []
        for child in children {
            var status: Int32 = 0
            if child.result == nil { kill(child.pid, SIGKILL) }
            waitpid(child.pid, &status, 0)
            if let result = child.result { merged.merge(result) }
            if let failure = child.failure { failures.append(failure) }
        }
        if !failures.isEmpty { throw BenchRunError.workerProcess(failures.joined(separator: "; ")) }
        return (merged, takeIntervals())
    }

    /// Starts one worker process with pipes for its standard input and output.
    private func spawn() throws -> Child {
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw BenchRunError.system("pipe: \(errnoText())")
        }
        // Only the child's copies (dup2'ed onto 0 and 1) may survive exec; no other worker may inherit these.
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
        let arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, command[0], &actions, nil, arguments, environ)
        close(toChild[0])
        close(fromChild[1])
        guard status == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw BenchRunError.workerProcess("cannot start \(command[0]): \(String(cString: strerror(status)))")
        }
        _ = fcntl(fromChild[0], F_SETFL, fcntl(fromChild[0], F_GETFL) | O_NONBLOCK)
        return Child(pid: pid, input: toChild[1], output: fromChild[0])
    }
}
