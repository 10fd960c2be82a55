/// A compiled rules regular expression: a Thompson NFA run as a Pike VM (one pass over the input, every state
/// advanced in lock step), so matching costs at most O(input length × program size) — no catastrophic
/// backtracking on inputs a client controls, whatever the pattern. Patterns come from the operator's rules file;
/// strings come from anyone.
///
/// Matching works on Unicode scalars and is a search (`/a/` matches `"ba"`) unless anchored (§10).
struct RegexProgram: Sendable {
    enum Instruction: Sendable {
        /// One scalar (its lowercase form when the program ignores case).
        case scalar(UInt32)
        /// Any scalar except a line terminator.
        case any
        /// A member of `sets[index]`.
        case set(Int)
        /// Continue at both targets.
        case split(Int, Int)
        case jump(Int)
        case match
    }

    let instructions: [Instruction]
    let sets: [RegexCharacterSet]
    let anchoredStart: Bool
    let anchoredEnd: Bool
    let caseInsensitive: Bool

    /// Compiles parsed syntax; fails when the program would exceed `maxInstructions` (counted repetitions multiply
    /// the size of what they repeat).
    init(syntax: RegexSyntax, anchoredStart: Bool, anchoredEnd: Bool, caseInsensitive: Bool, maxInstructions: Int)
        throws(RegexParser.Failure)
    {
        var builder = Builder(caseInsensitive: caseInsensitive, maxInstructions: maxInstructions)
        try builder.emit(syntax)
        try builder.append(.match)
        instructions = builder.instructions
        sets = builder.sets
        self.anchoredStart = anchoredStart
        self.anchoredEnd = anchoredEnd
        self.caseInsensitive = caseInsensitive
    }

    private struct Builder {
        let caseInsensitive: Bool
        let maxInstructions: Int
        var instructions: [Instruction] = []
        var sets: [RegexCharacterSet] = []

        mutating func append(_ instruction: Instruction) throws(RegexParser.Failure) {
            guard instructions.count < maxInstructions else {
                throw RegexParser.Failure(
                    offset: 0, message: "regular expression too large (more than \(maxInstructions) steps once compiled)")
            }
            instructions.append(instruction)
        }

        mutating func emit(_ syntax: RegexSyntax) throws(RegexParser.Failure) {
            switch syntax {
            case .scalar(let scalar):
                try append(.scalar(caseInsensitive ? RegexProgram.lowercase(scalar.value) : scalar.value))
            case .anyCharacter:
                try append(.any)
            case .set(let set):
                sets.append(set)
                try append(.set(sets.count - 1))
            case .sequence(let parts):
                for part in parts { try emit(part) }
            case .alternation(let alternatives):
                var jumps: [Int] = []
                for (position, alternative) in alternatives.enumerated() {
                    if position < alternatives.count - 1 {
                        let split = instructions.count
                        try append(.split(split + 1, 0))
                        try emit(alternative)
                        jumps.append(instructions.count)
                        try append(.jump(0))
                        instructions[split] = .split(split + 1, instructions.count)
                    } else {
                        try emit(alternative)
                    }
                }
                for jump in jumps { instructions[jump] = .jump(instructions.count) }
            case .repetition(let inner, let minimum, let maximum):
                for _ in 0..<minimum { try emit(inner) }
                if let maximum {
                    var splits: [Int] = []
                    for _ in minimum..<maximum {
                        splits.append(instructions.count)
                        try append(.split(instructions.count + 1, 0))
                        try emit(inner)
                    }
                    for split in splits { instructions[split] = .split(split + 1, instructions.count) }
                } else {
                    let loop = instructions.count
                    try append(.split(loop + 1, 0))
                    try emit(inner)
                    try append(.jump(loop))
                    instructions[loop] = .split(loop + 1, instructions.count)
                }
            }
        }
    }

    /// The simple lowercase mapping of a scalar (itself when the full mapping is not a single scalar).
    static func lowercase(_ value: UInt32) -> UInt32 {
        if value < 0x80 {
            return value >= 0x41 && value <= 0x5A ? value + 0x20 : value
        }
        guard let scalar = Unicode.Scalar(value) else { return value }
        let mapping = scalar.properties.lowercaseMapping.unicodeScalars
        return mapping.count == 1 ? mapping.first?.value ?? value : value
    }

    /// The simple uppercase mapping of a scalar (itself when the full mapping is not a single scalar).
    static func uppercase(_ value: UInt32) -> UInt32 {
        if value < 0x80 {
            return value >= 0x61 && value <= 0x7A ? value - 0x20 : value
        }
        guard let scalar = Unicode.Scalar(value) else { return value }
        let mapping = scalar.properties.uppercaseMapping.unicodeScalars
        return mapping.count == 1 ? mapping.first?.value ?? value : value
    }

    private static func isLineTerminator(_ value: UInt32) -> Bool {
        value == 0x0A || value == 0x0D || value == 0x2028 || value == 0x2029
    }

    /// Whether the pattern matches somewhere in `text` (at its start when anchored at the start, ending at its end
    /// when anchored at the end); `nil` when the work exceeded `budget` steps (the budget is shared by all matches of
    /// one rule evaluation and decremented in place).
    func matches(_ text: String, budget: inout Int) -> Bool? {
        let count = instructions.count
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 5 * count + 2) { buffer -> Bool? in
            guard let base = buffer.baseAddress else { return false }
            let marks = base
            var current = base + count
            var next = base + 2 * count
            let stack = base + 3 * count  // 2 × count + 2 slots: each state pushes at most two others once
            marks.initialize(repeating: -1, count: count)
            var currentCount = 0
            var nextCount = 0
            var scalars = text.unicodeScalars.makeIterator()
            var upcoming = scalars.next()
            var position = 0

            /// Adds `start` and everything reachable from it without consuming input to `list`.
            func addThread(_ start: Int, to list: UnsafeMutablePointer<Int>, count listCount: inout Int, generation: Int) {
                var depth = 0
                stack[depth] = start
                depth += 1
                while depth > 0 {
                    depth -= 1
                    let pc = stack[depth]
                    if marks[pc] == generation { continue }
                    marks[pc] = generation
                    switch instructions[pc] {
                    case .jump(let target):
                        stack[depth] = target
                        depth += 1
                    case .split(let first, let second):
                        stack[depth] = second
                        stack[depth + 1] = first
                        depth += 2
                    default:
                        list[listCount] = pc
                        listCount += 1
                    }
                }
            }

            while true {
                if !anchoredStart || position == 0 {
                    addThread(0, to: current, count: &currentCount, generation: position)
                }
                if currentCount == 0 && (anchoredStart || upcoming == nil) { return false }
                let atEnd = upcoming == nil
                for slot in 0..<currentCount {
                    if case .match = instructions[current[slot]], !anchoredEnd || atEnd { return true }
                }
                guard let scalar = upcoming else { return false }
                budget -= currentCount + 1
                if budget < 0 { return nil }
                let value = scalar.value
                let lower = caseInsensitive ? Self.lowercase(value) : value
                let upper = caseInsensitive ? Self.uppercase(value) : value
                nextCount = 0
                for slot in 0..<currentCount {
                    let pc = current[slot]
                    let advances: Bool
                    switch instructions[pc] {
                    case .scalar(let expected): advances = expected == value || (caseInsensitive && expected == lower)
                    case .any: advances = !Self.isLineTerminator(value)
                    case .set(let index):
                        advances = sets[index].contains(value, lower: lower, upper: upper, caseInsensitive: caseInsensitive)
                    case .split, .jump, .match: advances = false
                    }
                    if advances { addThread(pc + 1, to: next, count: &nextCount, generation: position + 1) }
                }
                swap(&current, &next)
                currentCount = nextCount
                position += 1
                upcoming = scalars.next()
            }
        }
    }
}
