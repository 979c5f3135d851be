// The config fuzz target's check, shared by Fuzz/Config and ConfigCorpusTests: for any bytes (read as
// UTF-8, bad sequences replaced), parsing returns a config or throws a ConfigError with a message.
import BearingDaemon
import BearingConfig
import Foundation

public enum ConfigCheck {
    /// Returns a description of the failure, nil when the check holds.
    public static func failure(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        do throws(ConfigError) {
            _ = try AgentConfig.parse(yaml: text, source: "fuzz.yaml")
        } catch {
            if error.message.isEmpty { return "ConfigError with an empty message" }
        }
        return nil
    }

    public static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) {
            FileHandle.standardError.write(Data("fuzz-config: \(f)\n".utf8))
            abort()
        }
    }
}
