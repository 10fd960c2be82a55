// Shared helpers of StoreBench: clocks, resident memory, number formatting, argument parsing.

import DataModel
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

/// User plus system CPU time of the whole process so far, in seconds: robust against other processes competing
/// for the cores, unlike wall-clock rates.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Resident memory now, in megabytes (from /proc/self/statm).
func currentResidentMegabytes() -> Double {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 256)
    guard fgets(&buffer, 256, file) != nil else { return 0 }
    let fields = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        .split(separator: " ")
    guard fields.count >= 2, let resident = Int(fields[1]) else { return 0 }
    return Double(resident * Int(sysconf(Int32(_SC_PAGESIZE)))) / 1_048_576
}

func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // Linux reports kilobytes
}

func fail(_ message: String) -> Never {
    print(message)
    exit(1)
}

func key(_ text: String) -> Key {
    guard let key = try? Key(text) else { fail("invalid benchmark key \(text)") }
    return key
}

/// `value` with two decimals.
func decimal(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

/// Command-line arguments split into positional ones and `--name value` options.
struct Arguments {
    var positional: [String] = []
    var options: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            if argument.hasPrefix("--"), let value = iterator.next() {
                options[String(argument.dropFirst(2))] = value
            } else {
                positional.append(argument)
            }
        }
    }

    /// Positional argument `index` as `T`, or `fallback` when absent.
    func positional<T: LosslessStringConvertible>(_ index: Int, default fallback: T) -> T {
        guard index < positional.count else { return fallback }
        guard let value = T(positional[index]) else { fail("not a number: \(positional[index])") }
        return value
    }

    /// A comma-separated list of positive integers, e.g. `--window 1,8`.
    func list(_ name: String, default fallback: [Int]) -> [Int] {
        guard let text = options[name] else { return fallback }
        let values = text.split(separator: ",").map { Int($0) ?? 0 }
        guard !values.isEmpty, values.allSatisfy({ $0 > 0 }) else { fail("--\(name) takes positive integers: \(text)") }
        return values
    }
}
