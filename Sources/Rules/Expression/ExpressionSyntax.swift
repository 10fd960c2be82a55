/// The syntax tree of one rule expression as parsed (security-rules.md §5.1), before name resolution and type
/// checking. Every node keeps its byte range for error messages.
struct ExpressionSyntax: Sendable {
    /// Binary operators (all left-associative).
    enum BinaryOperator: String, Sendable {
        case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case equal = "==", notEqual = "!="
    }

    /// Short-circuit operators; chains are flattened (`a && b && c` is one node with three operands), which keeps
    /// long generated rules shallow.
    enum LogicalOperator: String, Sendable {
        case and = "&&", or = "||"
    }

    /// Prefix operators.
    enum UnaryOperator: String, Sendable {
        case not = "!", negate = "-"
    }

    /// Literal values.
    enum Literal: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
    }

    indirect enum Kind: Sendable {
        case literal(Literal)
        case identifier(String)
        /// `object.name`.
        case member(ExpressionSyntax, name: String, nameRange: Range<Int>)
        /// `object[index]`.
        case subscripted(ExpressionSyntax, index: ExpressionSyntax)
        case call(ExpressionSyntax, arguments: [ExpressionSyntax])
        case unary(UnaryOperator, ExpressionSyntax)
        case binary(BinaryOperator, ExpressionSyntax, ExpressionSyntax)
        case logical(LogicalOperator, [ExpressionSyntax])
        case conditional(ExpressionSyntax, ExpressionSyntax, ExpressionSyntax)
        case array([ExpressionSyntax])
        case regex(pattern: String, flags: String)
    }

    var kind: Kind
    /// The bytes of the expression text this node covers.
    var range: Range<Int>
    /// Height of the tree below and including this node (a leaf is 1); bounded by the parser so that checking and
    /// evaluation recursion stay shallow.
    var height: Int
}
