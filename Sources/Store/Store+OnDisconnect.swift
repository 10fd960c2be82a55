extension Store {
    /// Arms `write` (`nil`: disarms) as the onDisconnect write of connection `session`, replacing the one armed
    /// before; ``fireDisconnect(session:completion:)`` runs it when the connection ends. Call it at the
    /// registration's place in the order (from an ``inOrder(publishing:_:)`` body, where the registration was
    /// judged). `completion` gets whether the write is armed.
    ///
    /// On a single node the store keeps the write, and `completion` runs at once. In a cluster the write is armed
    /// in every replica, through the log, and `completion` runs once this replica applied it: should this node
    /// die, a survivor runs the write once the node's heartbeats stop (``ClusterTiming``).
    public func armDisconnect(session: String, write: StoreWrite?,
                              completion: @escaping @Sendable (Bool) -> Void)
    {
        driver.armDisconnect(session: session, write: write, completion: completion)
    }

    /// Connection `session` ended: its armed write runs, as a privileged write (it was judged when registered),
    /// at this place in the order. `completion` gets the write's result (`nil` when nothing was armed).
    public func fireDisconnect(session: String,
                               completion: @escaping @Sendable (Result<WriteOutcome, StoreError>?) -> Void)
    {
        submit { [self] in driver.fireDisconnect(session: session, completion: completion) }
    }
}
