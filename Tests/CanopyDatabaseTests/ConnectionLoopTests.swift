@testable import CanopyDatabase
import Dispatch
import Synchronization
import Testing

extension ConnectionLoop {
    /// Runs `body` on the loop after everything posted before it, and waits for it (tests only).
    func perform(_ body: @escaping () -> Void) {
        let done = DispatchSemaphore(value: 0)
        post {
            body()
            done.signal()
        }
        done.wait()
    }
}

/// The thread that owns a connection: what other threads post, its timers, and the callbacks it hands over.
@Suite("ConnectionLoop")
struct ConnectionLoopTests {
    /// What ran, in order; touched only on the loop, read after it drained.
    final class Log: @unchecked Sendable {
        var entries: [(thread: Int, number: Int)] = []
        var names: [String] = []
    }

    /// Waits (at most 10 s) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
        return condition()
    }

    @Test("closures posted from many threads all run on the loop, each thread's in the order it posted them")
    func keepsEachPostersOrder() async {
        let loop = ConnectionLoop()
        defer { loop.stop() }
        let log = Log()
        let posters = 4
        let perPoster = 5_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<posters {
                group.addTask {
                    for number in 0..<perPoster {
                        loop.post {
                            loop.assertOnLoop()
                            log.entries.append((thread, number))
                        }
                    }
                }
            }
        }
        loop.perform {}
        #expect(log.entries.count == posters * perPoster)
        for thread in 0..<posters {
            #expect(log.entries.filter { $0.thread == thread }.map(\.number) == Array(0..<perPoster))
        }
    }

    @Test("a post wakes a loop that sleeps with no timer")
    func postWakesSleepingLoop() async {
        let loop = ConnectionLoop()
        defer { loop.stop() }
        loop.perform {}
        // The loop has nothing to do now, so it sleeps in poll without a deadline until woken.
        let ran = Mutex(false)
        loop.post { ran.withLock { $0 = true } }
        #expect(await Self.eventually { ran.withLock { $0 } })
    }

    @Test("timers run in deadline order, on time, and a cancelled one never runs")
    func timers() async {
        let loop = ConnectionLoop()
        defer { loop.stop() }
        let log = Log()
        let started = DispatchTime.now().uptimeNanoseconds
        let finished = Mutex<UInt64>(0)
        loop.perform {
            loop.after(0.2) {
                log.names.append("late")
                finished.withLock { $0 = DispatchTime.now().uptimeNanoseconds }
            }
            let cancelled = loop.after(0.1) { log.names.append("cancelled") }
            loop.after(0.05) { log.names.append("early") }
            loop.cancelTimer(cancelled)
        }
        #expect(await Self.eventually { finished.withLock { $0 } != 0 })
        loop.perform {}
        #expect(log.names == ["early", "late"])
        #expect(finished.withLock { $0 } - started >= 200_000_000)
    }

    @Test("a timer that is due may cancel another one due at the same time")
    func dueTimerCancelsAnother() async {
        let loop = ConnectionLoop()
        defer { loop.stop() }
        let log = Log()
        let done = Mutex(false)
        loop.perform {
            var second = 0
            loop.after(0.05) {
                log.names.append("first")
                loop.cancelTimer(second)
            }
            second = loop.after(0.05) { log.names.append("second") }
            loop.after(0.1) { done.withLock { $0 = true } }
        }
        #expect(await Self.eventually { done.withLock { $0 } })
        loop.perform {}
        #expect(log.names == ["first"])
    }

    @Test("callbacks run on the callback queue in the order raised, on the database's own queue and on an app's")
    func callbacksRunOnTheirQueue() async {
        for ownQueue in [true, false] {
            let loop = ConnectionLoop()
            defer { loop.stop() }
            let queue = DispatchQueue(label: "callbacks-test")
            let key = DispatchSpecificKey<Int>()
            queue.setSpecific(key: key, value: 1)
            let callbacks = Callbacks(queue: queue, ownQueue: ownQueue, loop: loop)
            loop.perform { loop.turnEnded = { callbacks.deliver() } }
            let seen = Mutex<[Int?]>([])
            loop.perform {
                for _ in 0..<3 { callbacks.raise { seen.withLock { $0.append(DispatchQueue.getSpecific(key: key)) } } }
            }
            callbacks.post { seen.withLock { $0.append(DispatchQueue.getSpecific(key: key).map { $0 + 1 }) } }
            #expect(await Self.eventually { seen.withLock { $0.count } == 4 })
            #expect(seen.withLock { $0 } == [1, 1, 1, 2])
        }
    }
}
