/// A list that keeps its first element inline and allocates only from the second on: for the per-view and
/// per-location lists that nearly always hold one element (a location's views, a view's delivery formats, event-loop
/// groups and their subscribers), where an array would cost a heap allocation each.
struct SmallList<Element>: RandomAccessCollection, MutableCollection {
    private var head: Element?
    private var tail: [Element] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tail.count }

    /// Positions past the end trap, as they do in an array.
    subscript(position: Int) -> Element {
        get {
            guard position == 0 else { return tail[position - 1] }
            guard let head else { preconditionFailure("SmallList index 0 out of range") }
            return head
        }
        set {
            guard position == 0 else {
                tail[position - 1] = newValue
                return
            }
            precondition(head != nil, "SmallList index 0 out of range")
            head = newValue
        }
    }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) {
        if head == nil { head = element } else { tail.append(element) }
    }

    /// Removes and returns the element at `position`; later elements move up by one.
    @discardableResult
    mutating func remove(at position: Int) -> Element {
        let removed = self[position]
        if position == 0 {
            head = tail.isEmpty ? nil : tail.removeFirst()
        } else {
            tail.remove(at: position - 1)
        }
        return removed
    }

    /// Removes and returns the last element.
    @discardableResult
    mutating func removeLast() -> Element {
        remove(at: endIndex - 1)
    }

    /// Removes every element for which `shouldRemove` is true, keeping the others' order.
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        var kept = SmallList()
        for element in self where !shouldRemove(element) { kept.append(element) }
        self = kept
    }
}

extension SmallList: Sendable where Element: Sendable {}

extension SmallList where Element: AnyObject {
    /// Calls `body` with each element in order, without retaining it: the list keeps the elements alive, and
    /// `body` must not outlive the call. For the fan-out loop, where a retain and release per subscriber would be
    /// most of the cost of a delivery.
    func forEachUnretained(_ body: (Unmanaged<Element>) -> Void) {
        guard let head else { return }
        body(Unmanaged.passUnretained(head))
        tail.withUnsafeBufferPointer { elements in
            guard let base = elements.baseAddress else { return }
            // A class reference and an `Unmanaged` of it have the same layout; reading the latter does not retain.
            base.withMemoryRebound(to: Unmanaged<Element>.self, capacity: elements.count) { references in
                for index in 0..<elements.count { body(references[index]) }
            }
        }
    }
}
