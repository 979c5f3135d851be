import BearingConfig
import BearingRecording

/// How the daemon's config was made — the board profile, the config file's YAML, the command line's
/// overrides that change what is published — so the black box can record it and a replay make the same.
public struct ConfigOrigin: Equatable, Sendable {
    public var board: String?
    public var module: String?
    /// The config file's text (recorded with secrets removed).
    public var yaml: String?
    /// `--passthrough`: every chain empty.
    public var passthrough = false

    public init(board: String? = nil, module: String? = nil, yaml: String? = nil, passthrough: Bool = false) {
        self.board = board
        self.module = module
        self.yaml = yaml
        self.passthrough = passthrough
    }

    /// The config this origin gives.
    public func resolve() throws(ConfigError) -> AgentConfig {
        var c = AgentConfig()
        if let board { c = try BoardProfile.load(board).baseConfig(module: module) }
        if let yaml { c = try AgentConfig.parse(yaml: yaml, source: "the recorded config", over: c) }
        if passthrough { c.makePassthrough() }
        return c
    }

    /// As the black box's environment pairs (the YAML goes in its own record).
    var pairs: [Record.Pair] {
        [.init("board", board ?? ""), .init("module", module ?? ""), .init("passthrough", passthrough ? "true" : "false")]
    }

    /// From a recording's environment and config record.
    public init(recorded environment: [Record.Pair], yaml: String?) {
        func value(_ name: String) -> String? { environment.first { $0.name == name }.flatMap { $0.value.isEmpty ? nil : $0.value } }
        self.init(board: value("board"), module: value("module"), yaml: yaml, passthrough: value("passthrough") == "true")
    }
}

extension AgentConfig {
    /// This config kept to one process (`bearing record`, `bearing replay`): the socket and the
    /// client-defined pipelines in `directory`, no TCP door, no NMEA 0183, Signal K, MQTT or web door, no data log
    /// — nothing that reaches the boat, the fleet or the service's files.
    public mutating func keepToThisProcess(in directory: String) {
        socket.path = "\(directory)/bearing.sock"
        socket.tcp = nil
        nmea0183 = AgentConfig().nmea0183
        signalK = AgentConfig().signalK
        mqtt = AgentConfig().mqtt
        web = AgentConfig().web
        log.dataLog = nil
        pipelineStore = "\(directory)/pipelines.json"
    }
}
