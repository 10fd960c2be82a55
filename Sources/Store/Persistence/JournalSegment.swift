/// One journal segment file: `<first sequence, 20 digits>.log` in a journal directory.
///
/// Segments are named by the sequence number of their first record, so sorting names sorts segments, and a
/// segment whose successor starts at or below `s + 1` holds only records up to `s`.
struct JournalSegment: Sendable, Equatable, Comparable {
    /// Sequence number of the segment's first record.
    let firstSequence: UInt64
    /// Absolute path of the file.
    let path: String

    /// The file-name suffix of segments.
    static let fileExtension = ".log"

    /// The segment of `directory` that starts at `firstSequence`.
    init(directory: String, firstSequence: UInt64) {
        self.firstSequence = firstSequence
        let digits = String(firstSequence)
        path = directory + "/" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
            + Self.fileExtension
    }

    /// The segment named `name` in `directory`, or `nil` if `name` is not a segment name.
    init?(directory: String, name: String) {
        guard name.hasSuffix(Self.fileExtension), name.utf8.count == 20 + Self.fileExtension.utf8.count,
            let sequence = UInt64(name.dropLast(Self.fileExtension.utf8.count))
        else { return nil }
        self.init(directory: directory, firstSequence: sequence)
    }

    /// The segments in `directory`, oldest first; a missing directory has none.
    static func list(in directory: String) throws(JournalError) -> [JournalSegment] {
        guard FileSystem.isDirectory(directory) else { return [] }
        return try FileSystem.listDirectory(directory).compactMap { JournalSegment(directory: directory, name: $0) }
            .sorted()
    }

    static func < (lhs: JournalSegment, rhs: JournalSegment) -> Bool {
        lhs.firstSequence < rhs.firstSequence
    }
}
