/// Every setting of `canopy serve`, each declared once (in the `SettingsTable+*.swift` files, one section each):
/// the defaults, the environment variables and the validation come from here, and `SettingsTests` check that
/// `Config/canopy.json`, the README's settings table and `canopy serve`'s flags agree with it.
public enum SettingsTable {
    /// Largest byte size any limit may have (1 GiB).
    public static let maxBytes = 1 << 30

    /// Every setting, in the order of `Config/canopy.json` and the README.
    public static let all: [any AnySetting] =
        Server.all + WebSocket.all + Outbound.all + TLS.all + Data.all + Auth.all + AppCheck.all + Gateway.all
        + REST.all + Rules.all + Log.all + Cluster.all + Console.all

    /// Flags of `canopy serve` that set no setting: they name files the command reads or writes.
    public static let commandOnlyFlags = ["--config", "--port-file", "--tls-port-file"]
}
