/// Elements under increasing ids, in the order added (writes waiting for their acknowledgement). Removing the
/// oldest, the usual case since the server answers in order, costs O(1) amortized; any other is a binary search and
/// leaves a hole that is skipped. An array with `removeAll(where:)` cost a pass over every pending write per answer.
///
/// Elements are moved in and out, never copied: a pending write holds its request and a closure, and each copy
/// retained them.
struct IDOrderedQueue<Element> {
    /// From `head` on: the ids, and the elements (`nil` where one was removed).
    private var ids: [Int] = []
    private var elements: [Element?] = []
    private var head = 0
    /// How many elements are held.
    private(set) var count = 0

    /// Adds `element` under `id`, which must be larger than every id added before.
    mutating func append(_ element: Element, id: Int) {
        ids.append(id)
        elements.append(element)
        count += 1
    }

    /// Changes the element under `id` in place; `nil` when no element is held under it.
    mutating func modify<Result>(id: Int, _ change: (inout Element) -> Result) -> Result? {
        guard let slot = slot(of: id) else { return nil }
        return change(&elements[slot]!)
    }

    /// Removes and returns the element under `id`.
    mutating func remove(id: Int) -> Element? {
        guard let slot = slot(of: id) else { return nil }
        var element: Element?
        swap(&element, &elements[slot])
        count -= 1
        while head < elements.count, elements[head] == nil { head += 1 }
        if head == elements.count {
            ids.removeAll(keepingCapacity: true)
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= elements.count {
            ids.removeSubrange(..<head)
            elements.removeSubrange(..<head)
            head = 0
        }
        return element
    }

    /// The ids of the elements, oldest first.
    var heldIDs: [Int] { (head..<ids.count).filter { elements[$0] != nil }.map { ids[$0] } }

    /// Combines the elements, oldest first.
    func reduce<Result>(_ initial: Result, _ next: (Result, Element) -> Result) -> Result {
        var result = initial
        for index in head..<elements.count {
            if let element = elements[index] { result = next(result, element) }
        }
        return result
    }

    /// Whether an element satisfies `predicate`.
    func contains(where predicate: (Element) -> Bool) -> Bool {
        (head..<elements.count).contains { elements[$0].map(predicate) ?? false }
    }

    private func slot(of id: Int) -> Int? {
        var low = head
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        guard low < ids.count, ids[low] == id, elements[low] != nil else { return nil }
        return low
    }
}
