// StoreCrashWriter: the child process of the store crash test (Tests/StoreTests/CrashTests.swift).
//
// Usage: StoreCrashWriter <namespace directory> <run number>
//
// Opens the namespace with fsync `always`, prints "READY", then applies writes from 16 concurrent submitters
// until it is killed, printing "ACK <id>" (one write(2) per line) for every write whose completion reported
// success. Write ids are run * 1_000_000 + n. What write `id` does is defined by `CrashWorkload` (shared with
// the test through this file's twin in the test target), so the test can rebuild the expected tree from the ids
// it finds present.

import DataModel
import Dispatch
import Store
import StoreCrashWorkload

#if canImport(Glibc)
import Glibc
#endif

func emit(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { exit(3) }
            offset += written
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let run = Int(arguments[2]) else {
    emit("usage: StoreCrashWriter <namespace directory> <run>")
    exit(2)
}
var persistence = PersistenceConfiguration(directory: arguments[1])
persistence.fsyncPolicy = .always
persistence.snapshotJournalBytes = 256 << 10
persistence.snapshotIntervalSeconds = 0.2
let store: Store
do {
    store = try Store(configuration: StoreConfiguration(persistence: persistence))
} catch {
    emit("OPEN FAILED \(error)")
    exit(1)
}
for discard in store.loadReport.discards { emit("LOG \(discard)") }
emit("READY")

let inFlight = DispatchSemaphore(value: 16)
var next = run * CrashWorkload.idsPerRun
while true {
    inFlight.wait()
    let id = next
    next += 1
    store.write(CrashWorkload.write(id), by: .privileged) { result in
        switch result {
        case .success: emit("ACK \(id)")
        case .failure(let error): emit("FAILED \(id) \(error)")
        }
        inFlight.signal()
    }
}
