/// What a journal does once a record is durable under the journal's ``FsyncPolicy``: call this with the outcome
/// (a failure when the journal could not write the record).
typealias JournalAck = @Sendable (Result<Void, JournalError>) -> Void
