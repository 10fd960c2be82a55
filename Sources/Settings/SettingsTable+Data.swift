extension SettingsTable {
    /// Where namespaces persist, and who may create them.
    public enum Data {
        public static let directory = Setting(
            "data.directory", default: "data", .nonEmpty, flag: "--data-dir",
            doc: "data directory, one subdirectory per namespace")
        public static let defaultNamespace = Setting(
            "data.defaultNamespace", default: "default",
            doc: "the namespace of clients that name none: 1-63 of a-z A-Z 0-9 - _")
        public static let maxNamespaces = Setting(
            "data.maxNamespaces", default: 64, .range(1...100_000), doc: "most namespaces open at once")
        public static let namespaces = Setting(
            "data.namespaces", default: [String](), .namespacePatterns, flag: "--namespaces",
            doc: """
                namespaces any client may create off loopback: names or `*` patterns, comma-separated (none: only \
                the admin credential creates them; a loopback-only server creates any on first use)
                """)
        public static let fsync = Setting(
            "data.fsync", default: "always",
            doc: "when acknowledged writes reach the disk: `always`, `interval:MILLISECONDS` or `none`")

        static let all: [any AnySetting] = [directory, defaultNamespace, maxNamespaces, namespaces, fsync]
    }

    /// The security rules.
    public enum Rules {
        public static let path = Setting(
            "rules.path", default: "Config/database.rules.json", flag: "--rules",
            doc: "security rules file, checked at start and enforced")
        public static let directory = Setting<String?>(
            "rules.directory", default: nil, flag: "--rules-dir",
            doc: "per-namespace rules: `DIR/NAME.rules.json` are namespace NAME's rules (the rules file judges the others)")
        public static let allowOpen = Setting(
            "rules.allowOpen", default: false, flag: "--allow-open",
            doc: "without a rules file, serve open data on a non-loopback address")
        public static let explainDenials = Setting(
            "rules.explainDenials", default: false, flag: "--explain-denials",
            doc: "log each denied operation with every rule tried and its outcome")

        static let all: [any AnySetting] = [path, directory, allowOpen, explainDenials]
    }

    /// Cluster mode (`docs/cluster.md`).
    public enum Cluster {
        public static let nats = Setting(
            "cluster.nats", default: [String](), flag: "--cluster",
            doc: "cluster mode: the NATS JetStream servers holding every namespace's log, comma-separated")
        public static let replicas = Setting(
            "cluster.replicas", default: 3, .range(1...5), doc: "cluster mode: JetStream replicas of each log")
        public static let snapshotEvery = Setting(
            "cluster.snapshotEvery", default: 10_000, .range(0...Int(Int32.max)), flag: "--cluster-snapshot-every",
            doc: "cluster mode: log positions between a namespace's snapshots (`0`: never; the log then grows)")

        static let all: [any AnySetting] = [nats, replicas, snapshotEvery]
    }

    /// The web console at `/.console/`.
    public enum Console {
        public static let enabled = Setting("console.enabled", default: true, doc: "serve the web console")
        public static let directory = Setting<String?>(
            "console.directory", default: nil, flag: "--console-dir",
            doc: """
                serve the web console from DIR instead of the files built into the binary (development: edit \
                `Console/`, restart with `--console-dir Console`)
                """)

        static let all: [any AnySetting] = [enabled, directory]
    }

    /// Logging.
    public enum Log {
        public static let format = Setting(
            "log.format", default: "text", .oneOf(["text", "json"]), flag: "--log-format",
            doc: "`text` (human-readable) or `json` (JSON lines)")
        public static let level = Setting(
            "log.level", default: "info", .oneOf(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
            flag: "--log-level", doc: "`trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`")

        static let all: [any AnySetting] = [format, level]
    }
}
