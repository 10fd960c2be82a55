import Store

/// The store's update entry (DataModel declares a parsed entry of the same name; this file sees only the store's).
typealias StoreUpdateEntry = UpdateEntry
