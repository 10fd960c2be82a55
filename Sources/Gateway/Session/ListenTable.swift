import Wire

/// A wire session's listens by location and tag (wire-protocol.md §6.1: a listen replaces one with the same key).
///
/// Most connections hold one listen, so the first is kept inline and costs no allocation; a dictionary is made from
/// the second on. The key is not stored: it is the subscription's own path and tag.
struct ListenTable {
    private enum Storage {
        case empty
        case one(Subscription)
        case many([ListenKey: Subscription])
    }

    private var storage = Storage.empty

    /// The listen with `key`, if any.
    subscript(key: ListenKey) -> Subscription? {
        switch storage {
        case .empty: nil
        case .one(let subscription): subscription.listenKey == key ? subscription : nil
        case .many(let byKey): byKey[key]
        }
    }

    var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    var count: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let byKey): byKey.count
        }
    }

    /// Every listen, in no particular order.
    var subscriptions: [Subscription] {
        switch storage {
        case .empty: []
        case .one(let subscription): [subscription]
        case .many(let byKey): Array(byKey.values)
        }
    }

    /// Adds `subscription`, replacing a listen with the same key (the caller detaches that one first).
    mutating func insert(_ subscription: Subscription) {
        let key = subscription.listenKey
        switch storage {
        case .empty:
            storage = .one(subscription)
        case .one(let existing) where existing.listenKey == key:
            storage = .one(subscription)
        case .one(let existing):
            storage = .many([existing.listenKey: existing, key: subscription])
        case .many(var byKey):
            storage = .empty  // the dictionary stays uniquely referenced while it changes
            byKey[key] = subscription
            storage = .many(byKey)
        }
    }

    /// Takes the listen with `key` out, and returns it.
    @discardableResult
    mutating func remove(_ key: ListenKey) -> Subscription? {
        switch storage {
        case .empty:
            return nil
        case .one(let subscription):
            guard subscription.listenKey == key else { return nil }
            storage = .empty
            return subscription
        case .many(var byKey):
            storage = .empty
            let removed = byKey.removeValue(forKey: key)
            storage = byKey.isEmpty ? .empty : .many(byKey)
            return removed
        }
    }

    /// Takes `subscription` out if it is still the listen for its key; returns whether it was.
    @discardableResult
    mutating func remove(_ subscription: Subscription) -> Bool {
        guard self[subscription.listenKey] === subscription else { return false }
        remove(subscription.listenKey)
        return true
    }

    mutating func removeAll() {
        storage = .empty
    }
}

extension Subscription {
    /// The key of this listen in its session's ``ListenTable``.
    var listenKey: ListenKey { ListenKey(path: path, tag: tag) }
}
