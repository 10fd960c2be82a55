/// The rule naming a setting's environment variable: `server.idleTimeoutSeconds` → `CANOPY_SERVER_IDLE_TIMEOUT_SECONDS`.
public enum EnvironmentName {
    /// `CANOPY_` and each part of `key` in upper snake case, joined by `_`.
    public static func derived(fromKey key: String) -> String {
        "CANOPY_" + key.split(separator: ".").map { upperSnake(String($0)) }.joined(separator: "_")
    }

    /// `idleTimeoutSeconds` → `IDLE_TIMEOUT_SECONDS`; an acronym stays one word: `jwksURL` → `JWKS_URL`,
    /// `keysCAFile` → `KEYS_CA_FILE`.
    static func upperSnake(_ word: String) -> String {
        let characters = Array(word)
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if !previous.isUppercase || next?.isLowercase == true { out += "_" }
            }
            out += character.uppercased()
        }
        return out
    }
}
