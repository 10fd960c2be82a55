// `StoreBench generate | import | load`: export-format test data, offline import, and start-up time.

import DataModel
import Store

#if canImport(Glibc)
import Glibc
#endif

func generate(file: String, megabytes: Int) {
    guard let output = fopen(file, "w") else { fail("cannot create \(file)") }
    defer { fclose(output) }
    var written = 0
    let target = megabytes << 20
    fputs("{\"users\":{", output)
    var index = 0
    while written < target {
        let record = (index == 0 ? "" : ",")
            + "\"user\(index)\":{\"name\":\"User number \(index)\",\"age\":\(index % 90),\"active\":\(index % 2 == 0),"
            + "\"score\":\(Double(index) / 7),\"tags\":{\"a\":true,\"b\":\"tag \(index % 13)\"},\".priority\":\(index % 5)}"
        fputs(record, output)
        written += record.utf8.count
        index += 1
    }
    fputs("},\"meta\":{\"count\":\(index)}}", output)
    print("wrote \(index) users, about \(written >> 20) MB, to \(file)")
}

func importBenchmark(file: String, directory: String) {
    let started = now()
    do {
        try OfflineTools.importJSON(file: file, directory: directory, path: .root)
    } catch {
        fail("import failed: \(error)")
    }
    print("import: \(decimal(now() - started)) s wall, \(decimal(processCPUSeconds())) s CPU, "
        + "peak RSS \(Int(peakResidentMegabytes())) MB")
}

func loadBenchmark(directory: String) -> Never {
    let started = now()
    var persistence = PersistenceConfiguration(directory: directory)
    persistence.snapshotIntervalSeconds = nil
    do {
        let store = try Store(configuration: StoreConfiguration(persistence: persistence))
        let elapsed = now() - started
        print("start-up load: \(decimal(elapsed)) s wall, \(decimal(processCPUSeconds())) s CPU, "
            + "peak RSS \(Int(peakResidentMegabytes())) MB, RSS after load \(Int(currentResidentMegabytes())) MB, "
            + "\(store.loadReport.replayedRecords) entries replayed")
        exit(0)  // measure loading only; the process exit releases the lock
    } catch {
        fail("load failed: \(error)")
    }
}
