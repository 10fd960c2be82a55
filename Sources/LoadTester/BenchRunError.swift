/// Why a run could not be carried out at all (as opposed to a run that measured a failure, which
/// ``BenchReport/ok`` tells).
public enum BenchRunError: Error, CustomStringConvertible, Equatable {
    /// The server's address could not be resolved.
    case unreachable(String)
    /// No connection could be opened: the planned count and the first error (e.g. connection refused).
    case noConnections(planned: Int, firstError: String)
    /// The TLS settings could not be loaded.
    case tls(String)
    /// Preparing the server's data (the query scenario's list) failed.
    case setup(String)
    /// A worker process failed or said something unexpected.
    case workerProcess(String)
    /// A system call needed to run failed.
    case system(String)

    /// The reason, for people.
    public var description: String {
        switch self {
        case .unreachable(let reason): return "cannot reach the server: \(reason)"
        case .noConnections(let planned, let firstError):
            return "none of the \(planned) connections could be opened: \(firstError)"
        case .tls(let reason): return "TLS: \(reason)"
        case .setup(let reason): return "preparing the server's data failed: \(reason)"
        case .workerProcess(let reason): return "worker process: \(reason)"
        case .system(let reason): return reason
        }
    }
}
