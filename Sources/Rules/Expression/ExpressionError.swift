/// A problem in one rule expression, with the byte range of the expression text it concerns.
struct ExpressionError: Error, Sendable, Equatable {
    /// Bytes of the expression the message is about.
    var range: Range<Int>
    /// What is wrong, in the words a rules author understands.
    var message: String

    init(_ range: Range<Int>, _ message: String) {
        self.range = range
        self.message = message
    }
}
