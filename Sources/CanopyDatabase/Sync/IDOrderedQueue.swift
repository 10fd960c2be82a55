/// Elements under increasing ids, in the order added (writes waiting for their acknowledgement). Removing the
/// oldest, the usual case since the server answers in order, costs O(1) amortized; any other is a binary search and
/// leaves a hole that is skipped. An array with `removeAll(where:)` cost a pass over every pending write per answer.
struct IDOrderedQueue<Element> {
    /// Slots from `head` on hold the elements; a removed element leaves `nil`.
    private var slots: [(id: Int, element: Element?)] = []
    private var head = 0
    /// How many elements are held.
    private(set) var count = 0

    /// Adds `element` under `id`, which must be larger than every id added before.
    mutating func append(_ element: Element, id: Int) {
        slots.append((id, element))
        count += 1
    }

    /// The element under `id`, if held; set through it to change a held element in place (setting `nil` changes
    /// nothing: ``remove(id:)`` removes).
    subscript(id id: Int) -> Element? {
        get { slot(of: id).flatMap { slots[$0].element } }
        set {
            guard let slot = slot(of: id), let newValue else { return }
            slots[slot].element = newValue
        }
    }

    /// Removes and returns the element under `id`.
    mutating func remove(id: Int) -> Element? {
        guard let slot = slot(of: id) else { return nil }
        let element = slots[slot].element
        slots[slot].element = nil
        count -= 1
        while head < slots.count, slots[head].element == nil { head += 1 }
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= slots.count {
            slots.removeSubrange(..<head)
            head = 0
        }
        return element
    }

    /// The ids of the elements, oldest first.
    var ids: [Int] { slots[head...].compactMap { $0.element == nil ? nil : $0.id } }

    /// Combines the elements, oldest first.
    func reduce<Result>(_ initial: Result, _ next: (Result, Element) -> Result) -> Result {
        var result = initial
        for slot in slots[head...] {
            if let element = slot.element { result = next(result, element) }
        }
        return result
    }

    /// Whether an element satisfies `predicate`.
    func contains(where predicate: (Element) -> Bool) -> Bool {
        slots[head...].contains { $0.element.map(predicate) ?? false }
    }

    private func slot(of id: Int) -> Int? {
        var low = head
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].id < id { low = middle + 1 } else { high = middle }
        }
        guard low < slots.count, slots[low].id == id, slots[low].element != nil else { return nil }
        return low
    }
}
