import Primitives

extension PushFrames {
    /// Hands this push to one event loop's subscriptions of a view (on that loop) and returns how many took it.
    ///
    /// The fan-out loop takes no reference count per delivery: subscriptions and chunks are borrowed from the lists
    /// and the push that hold them, and the transport retains a chunk only when it queues it. When the view has
    /// subscribers on several loops (`copyingPerLoop`), each loop first copies the few bytes of each format it
    /// sends: every loop then queues its own chunk, and the loops do not contend for one reference count, which
    /// costs more than the copy (docs/benchmarks.md, issue 14).
    func deliver(to subscriptions: SmallList<Subscription>, copyingPerLoop: Bool) -> Int {
        guard let first = subscriptions.first else { return 0 }
        var delivered = 0
        var format = first.format
        // `held` keeps the current chunk alive; the loop passes it on unretained.
        var held = loopChunk(for: format, copying: copyingPerLoop)
        var chunk = held.map(Unmanaged.passUnretained)
        subscriptions.forEachUnretained { reference in
            reference._withUnsafeGuaranteedRef { subscription in
                if subscription.format != format {
                    format = subscription.format
                    held = loopChunk(for: format, copying: copyingPerLoop)
                    chunk = held.map(Unmanaged.passUnretained)
                }
                let sent = chunk?._withUnsafeGuaranteedRef { push in
                    subscription.subscriber.deliver(push, sequence: sequence, to: subscription)
                }
                if sent == true { delivered += 1 }
            }
        }
        withExtendedLifetime(held) {}
        return delivered
    }

    /// The chunk a loop sends for `format`: this push's own, or a copy of it for this loop alone.
    private func loopChunk(for format: DeliveryFormat, copying: Bool) -> ByteChunk? {
        guard let chunk = chunk(for: format) else { return nil }
        return copying ? ByteChunk(copying: chunk.bytes) : chunk
    }
}
