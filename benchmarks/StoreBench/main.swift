// StoreBench: throughput and start-up measurements for the Store module (not a test; run a release build).
//
//   StoreBench memory [count] [--batch B[,B...]]
//                                              in-memory leaf sets/s into one namespace log from one thread and
//                                              from one per core, submitted one by one (B = 1, the default) or
//                                              in write(batch:) calls of B
//   StoreBench ordering [count] [--batch B]     ns per write of the state transition alone and sequenced by a
//                                              store: the cost of the namespace's single order
//   StoreBench durable DIR [seconds] [writers] [--window W[,W...]]
//                                              acknowledged writes/s with fsync always (default 5 s, 64 writers,
//                                              window 1); one fresh store per window in DIR/window-W
//   StoreBench generate FILE [megabytes]       writes a JSON export file of about that size (default 100)
//   StoreBench import FILE DIR                 imports FILE into namespace directory DIR; time and peak RSS
//   StoreBench load DIR                        opens DIR (snapshot + replay); start-up time and peak RSS

#if canImport(Glibc)
import Glibc
#endif

let arguments = Arguments(CommandLine.arguments.dropFirst(2))
switch CommandLine.arguments.dropFirst().first {
case "memory":
    memoryBenchmark(count: arguments.positional(0, default: 2_000_000), batches: arguments.list("batch", default: [1]))
case "ordering":
    for batch in arguments.list("batch", default: [64]) {
        orderingBenchmark(count: arguments.positional(0, default: 1_000_000), batch: batch)
    }
case "durable" where arguments.positional.count >= 1:
    for window in arguments.list("window", default: [1]) {
        durableBenchmark(directory: arguments.positional[0] + "/window-\(window)",
                         seconds: arguments.positional(1, default: 5.0), writers: arguments.positional(2, default: 64),
                         window: window)
    }
case "generate" where arguments.positional.count >= 1:
    generate(file: arguments.positional[0], megabytes: arguments.positional(1, default: 100))
case "import" where arguments.positional.count >= 2:
    importBenchmark(file: arguments.positional[0], directory: arguments.positional[1])
case "load" where arguments.positional.count >= 1:
    loadBenchmark(directory: arguments.positional[0])
default:
    print("usage: StoreBench memory [count] [--batch B[,B...]] | ordering [count] [--batch B] | durable DIR [seconds] [writers] [--window W[,W...]] | "
        + "generate FILE [MB] | import FILE DIR | load DIR")
    exit(2)
}
