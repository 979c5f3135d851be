import ArgumentParser
import BearingDaemon
import BearingPOSIX

/// The options that say which board and config to run with, shared by `run` and `calibrate`.
struct BoardOptions: ParsableArguments {
    @Option(help: "YAML config file (bearing.yaml(5), docs/config-keys.md); its keys override the board's.") var config: String?
    @Option(help: "Board profile name (boards/NAME.yaml: rpi-3b, rpi-4b, rpi-5, rpi-zero-2w, simulator) or file.") var board: String?
    @Option(help: "Module of the board profile (default: the profile's default_module).") var module: String?

    /// The board profile's config with the config file's keys over it. A file that cannot be read or is
    /// invalid exits with `ExitStatus.config` (78), without the usage line.
    func resolve() throws -> AgentConfig {
        var c = AgentConfig()
        if let board {
            do { c = try BoardProfile.load(board).baseConfig(module: module) } catch { throw ExitStatus.configError(error.message) }
        } else if module != nil {
            throw ValidationError("--module needs --board")
        }
        if let config {
            do { c = try AgentConfig.load(file: config, over: c) } catch { throw ExitStatus.configError(error.message) }
        }
        return c
    }

    /// How the config was made, for the black box (the config file's text is read again; secrets are
    /// removed when it is recorded).
    func origin(passthrough: Bool = false) -> ConfigOrigin {
        ConfigOrigin(board: board, module: module, yaml: config.flatMap { try? AtomicFile.readText($0) }, passthrough: passthrough)
    }
}
