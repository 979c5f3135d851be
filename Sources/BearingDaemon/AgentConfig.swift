import BearingModel
import BearingWire
import BearingCalibration
import BearingPOSIX
import BearingConfig
import BearingYAML
import BearingLog
import BearingGPSD
import BearingSensors
import BearingMarine
import BearingMQTT
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Everything `bearing run` can be told, with defaults. See the README's config reference.
public struct AgentConfig: Equatable, Sendable {
    public struct Socket: Equatable, Sendable {
        public var path: String = AgentConfig.defaultSocketPath()
        public var mode: UInt32 = 0o660
        /// The socket file's group (e.g. `bearing`); nil leaves the daemon's own group.
        public var group: String? = nil
        /// Connections at once, over the UNIX socket and the TCP door together. 32: a Pi runs a handful
        /// of readers; each costs at most `clientQueue` queued lines (≈ 150 KB at 256 × 600 bytes), so 32
        /// bound the worst case near 5 MB on a 512 MB Zero 2 W. Raise it for a fleet of readers.
        public var maxClients: Int = 32
        /// Messages queued per client before messages for that client are dropped.
        public var clientQueue: Int = 256
        /// Least time between two writes to one client (seconds); lines that come sooner share the next
        /// write. 0 writes each line at once: lowest latency, one `send(2)` per line per reader.
        public var writeInterval: Double = 0
        /// The loopback TCP door for unmodified gpsd clients (`HOST:PORT`); nil for none.
        public var tcp: (host: String, port: Int)? = nil
        /// Allow a TCP door on an address other than loopback.
        public var tcpAllowRemote = false
        /// Users (uids or names) that may define named pipelines at run time, besides root.
        public var pipelineWriters: [String] = []
        /// Longest request line accepted.
        public var maxRequestBytes = 8192

        public init() {}

        public static func == (a: Socket, b: Socket) -> Bool {
            a.path == b.path && a.mode == b.mode && a.group == b.group && a.maxClients == b.maxClients && a.clientQueue == b.clientQueue
                && a.writeInterval == b.writeInterval
                && a.tcp?.host == b.tcp?.host && a.tcp?.port == b.tcp?.port && a.tcpAllowRemote == b.tcpAllowRemote
                && a.pipelineWriters == b.pipelineWriters && a.maxRequestBytes == b.maxRequestBytes
        }
    }

    public struct Log: Equatable, Sendable {
        public var level: Logger.Level = .info
        /// NDJSON file receiving every published object; nil for none.
        public var dataLog: String? = nil
    }

    /// The sections the sensors and the calibration workflow read too (BearingSensors).
    public typealias Magnetometer = MagnetometerConfig
    public typealias IMU = IMUConfig
    public typealias Heading = HeadingConfig

    public var gpsd = GPSDClient.Configuration()
    public var socket = Socket()
    public var magnetometer = Magnetometer()
    public var imu = IMU()
    public var heading = Heading()
    /// The default chain of each stream (config `pipeline.tpv`, `pipeline.att`, `pipeline.gpsd_att`, …).
    public var pipelines: [StreamKey: [OperatorSpec]] = AgentConfig.defaultPipelines
    /// Named pipelines from the config (`pipelines.NAME.TPV: […]`).
    public var namedPipelines: [NamedPipeline] = []
    /// Where client-defined pipelines are kept (`$STATE_DIRECTORY/pipelines.json` by default).
    public var pipelineStore: String = NamedPipelineStore.defaultPath()
    public var log = Log()
    /// The NMEA 0183 door (off until it has an output).
    public var nmea0183 = NMEA0183DoorConfig()
    /// The Signal K door (off until it has an output).
    public var signalK = SignalKDoorConfig()
    /// The MQTT door (off until it has a broker).
    public var mqtt = MQTTDoorConfig()
    /// The board profile the config was layered on, if any.
    public var board: String? = nil

    public init() {}

    public static let defaultTPVPipeline: [OperatorSpec] = [
        .minMode(.twoD), .maxError(meters: 500), .dedupe(.all), .throttle(interval: 1, latest: true),
    ]
    public static let defaultSKYPipeline: [OperatorSpec] = [.dedupe(.all), .throttle(interval: 5, latest: true)]
    public static let defaultATTPipeline: [OperatorSpec] = [.smooth(samples: 5), .throttle(interval: 0.5, latest: true)]
    /// gpsd's own ATT, GST, PPS and TOFF pass as gpsd sent them unless configured otherwise.
    public static let defaultPipelines: [StreamKey: [OperatorSpec]] = [
        StreamKey(.tpv, .gpsd): defaultTPVPipeline, StreamKey(.sky, .gpsd): defaultSKYPipeline,
        StreamKey(.att, .compass): defaultATTPipeline, StreamKey(.att, .gpsd): [],
        StreamKey(.gst, .gpsd): [], StreamKey(.pps, .gpsd): [], StreamKey(.toff, .gpsd): [],
    ]

    public var tpvPipeline: [OperatorSpec] { pipelines[StreamKey(.tpv, .gpsd)] ?? [] }
    public var skyPipeline: [OperatorSpec] { pipelines[StreamKey(.sky, .gpsd)] ?? [] }
    public var attPipeline: [OperatorSpec] { pipelines[StreamKey(.att, .compass)] ?? [] }

    /// `$RUNTIME_DIRECTORY/bearing.sock` under systemd, else `/run/bearing/bearing.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty {
            return "\(dir)/bearing.sock"
        }
        return "/run/bearing/bearing.sock"
    }

    /// `$STATE_DIRECTORY/calibration.json` under systemd, else `/var/lib/bearing/calibration.json`.
    public static func defaultCalibrationPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty {
            return "\(dir)/calibration.json"
        }
        return "/var/lib/bearing/calibration.json"
    }

    /// The calibration file in use: `magnetometer.calibration`, else the default.
    public var calibrationPath: String { magnetometer.calibrationFile ?? Self.defaultCalibrationPath() }

    /// The accelerometer calibration file in use: `imu.calibration`, else `accelerometer.json` beside the
    /// magnetometer's calibration file.
    public var accelerometerCalibrationPath: String { imu.calibrationFile ?? besideCalibration("accelerometer.json") }

    /// The mounting level file in use: `imu.level`, else `level.json` beside the magnetometer's calibration file.
    public var levelPath: String { imu.levelFile ?? besideCalibration("level.json") }

    private func besideCalibration(_ name: String) -> String {
        AtomicFile.parent(of: calibrationPath) + "/" + name
    }

    /// Switches every filter, de-duplication and throttle off.
    public mutating func makePassthrough() {
        for key in StreamKey.all { pipelines[key] = [] }
    }
}


extension AgentConfig {
    public static func load(file: String, over base: AgentConfig = AgentConfig()) throws(ConfigError) -> AgentConfig {
        let text: String
        do {
            text = try AtomicFile.readText(file)
        } catch {
            throw ConfigError("\(file): cannot read: \(error.message)")
        }
        return try parse(yaml: text, source: file, over: base)
    }

    /// Reads a config; keys it sets override `base` (the defaults, or a board profile's settings).
    public static func parse(yaml: String, source: String = "config", over base: AgentConfig = AgentConfig()) throws(ConfigError) -> AgentConfig {
        let root: YAMLNode?
        do {
            root = try YAMLNode.compose(yaml)
        } catch {
            throw ConfigError("\(source): not valid YAML: \(error)")
        }
        var config = base
        guard let root else { return config }
        let r = ConfigReader(source: source)
        var imuNode: YAMLNode?
        do {
        try r.section(root, "", [
            "gpsd": { node in
                try r.section(node, "gpsd", [
                    "host": { config.gpsd.host = try r.string($0, "gpsd.host", nonEmpty: true) },
                    "port": { config.gpsd.port = try r.int($0, "gpsd.port", 1...65535) },
                    "silence_timeout": { config.gpsd.silenceTimeout = try r.seconds($0, "gpsd.silence_timeout", 0.5...3600) },
                    "retry_initial": { config.gpsd.retryInitial = try r.seconds($0, "gpsd.retry_initial", 0.01...1) },
                    "retry_max": { config.gpsd.retryMax = try r.seconds($0, "gpsd.retry_max", 0.1...60) },
                ])
            },
            "socket": { node in
                try r.section(node, "socket", [
                    "path": { config.socket.path = try r.path($0, "socket.path") },
                    "mode": { config.socket.mode = try r.fileMode($0, "socket.mode") },
                    "group": { config.socket.group = try r.groupName($0, "socket.group") },
                    "max_clients": { config.socket.maxClients = try r.int($0, "socket.max_clients", 1...4096) },
                    "client_queue": { config.socket.clientQueue = try r.int($0, "socket.client_queue", 1...100_000) },
                    "write_interval": { config.socket.writeInterval = try r.seconds($0, "socket.write_interval", 0...1) },
                    "tcp": { config.socket.tcp = try r.hostPort($0, "socket.tcp") },
                    "tcp_allow_remote": { config.socket.tcpAllowRemote = try r.bool($0, "socket.tcp_allow_remote") },
                    "pipeline_writers": { config.socket.pipelineWriters = try r.users($0, "socket.pipeline_writers") },
                    "max_request": { config.socket.maxRequestBytes = try r.int($0, "socket.max_request", 256...1_048_576) },
                ])
            },
            "magnetometer": { node in
                config.magnetometer.enabled = true
                var axes = config.magnetometer.orientation.axes
                var rotation = config.magnetometer.orientation.rotation
                var orientationNode: YAMLNode?
                try r.section(node, "magnetometer", [
                    "enabled": { config.magnetometer.enabled = try r.bool($0, "magnetometer.enabled") },
                    "bus": { config.magnetometer.reader.bus = try r.busPath($0, "magnetometer.bus") },
                    "chip": { config.magnetometer.reader.chip = try r.chip($0, "magnetometer.chip", allowAuto: true) },
                    "address": { config.magnetometer.reader.address = try r.i2cAddress($0, "magnetometer.address") },
                    "rate": { config.magnetometer.reader.settings.rate = try r.number($0, "magnetometer.rate", 0.1...200, "samples per second") },
                    "range": { config.magnetometer.reader.settings.rangeMicrotesla = try r.number($0, "magnetometer.range", 10...10_000, "µT (full scale wanted)") },
                    "orientation": { axes = try r.scalar($0, "magnetometer.orientation"); orientationNode = $0 },
                    "rotation": { rotation = try r.rotation($0, "magnetometer.rotation"); orientationNode = orientationNode ?? $0 },
                    "calibration": { config.magnetometer.calibrationFile = try r.path($0, "magnetometer.calibration") },
                    "retry_initial": { config.magnetometer.reader.retryInitial = try r.seconds($0, "magnetometer.retry_initial", 0.01...10) },
                    "retry_max": { config.magnetometer.reader.retryMax = try r.seconds($0, "magnetometer.retry_max", 0.1...3600) },
                ])
                if let orientationNode {
                    config.magnetometer.orientation = try r.orientation(orientationNode, "magnetometer", axes: axes, rotation: rotation)
                }
            },
            "imu": { node in
                config.imu.enabled = true
                imuNode = node
                var axes = config.imu.orientation.axes
                var rotation = config.imu.orientation.rotation
                var orientationNode: YAMLNode?
                try r.section(node, "imu", [
                    "enabled": { config.imu.enabled = try r.bool($0, "imu.enabled") },
                    "bus": { config.imu.reader.bus = try r.busPath($0, "imu.bus") },
                    "chip": { config.imu.reader.chip = try r.inertialChip($0, "imu.chip", allowAuto: true) },
                    "address": { config.imu.reader.address = try r.i2cAddress($0, "imu.address") },
                    "rate": { config.imu.reader.settings.rate = try r.number($0, "imu.rate", 1...1000, "samples per second") },
                    "orientation": { axes = try r.scalar($0, "imu.orientation"); orientationNode = $0 },
                    "rotation": { rotation = try r.rotation($0, "imu.rotation"); orientationNode = orientationNode ?? $0 },
                    "calibration": { config.imu.calibrationFile = try r.path($0, "imu.calibration") },
                    "level": { config.imu.levelFile = try r.path($0, "imu.level") },
                    "retry_initial": { config.imu.reader.retryInitial = try r.seconds($0, "imu.retry_initial", 0.01...10) },
                    "retry_max": { config.imu.reader.retryMax = try r.seconds($0, "imu.retry_max", 0.1...3600) },
                ])
                if let orientationNode {
                    config.imu.orientation = try r.orientation(orientationNode, "imu", axes: axes, rotation: rotation)
                }
            },
            "heading": { node in
                try r.section(node, "heading", [
                    "true_north": { config.heading.trueNorth = try r.bool($0, "heading.true_north") },
                    "fallback_position": { config.heading.fallbackPosition = try r.position($0, "heading.fallback_position") },
                ])
            },
            "pipeline": { node in
                var keys: [String: (YAMLNode) throws -> Void] = [:]
                for key in StreamKey.all {
                    keys[key.configName] = { config.pipelines[key] = try r.chain($0, "pipeline.\(key.configName)", stream: key.stream) }
                }
                try r.section(node, "pipeline", keys)
            },
            "pipelines": { node in
                config.namedPipelines = try r.namedPipelines(node, "pipelines")
            },
            "pipeline_store": { config.pipelineStore = try r.path($0, "pipeline_store") },
            "nmea0183": { config.nmea0183 = try r.nmea0183($0, over: config.nmea0183) },
            "signalk": { config.signalK = try r.signalK($0, over: config.signalK) },
            "mqtt": { config.mqtt = try r.mqtt($0, over: config.mqtt) },
            "log": { node in
                try r.section(node, "log", [
                    "level": { config.log.level = try r.level($0, "log.level") },
                    "data_log": { config.log.dataLog = try r.optionalPath($0, "log.data_log") },
                ])
            },
        ])
        } catch let e as ConfigError {
            throw e
        } catch {
            throw ConfigError("\(source): \(error)")
        }
        if let tcp = config.socket.tcp, !config.socket.tcpAllowRemote, !TCPSocket.isLoopback(tcp.host) {
            throw ConfigReader.remoteRefused(at: source, key: "socket.tcp", address: tcp.host, what: "the TCP door", allowKey: "socket.tcp_allow_remote")
        }
        if config.imu.enabled && !config.magnetometer.enabled {
            let at = imuNode.map(r.at) ?? source
            throw ConfigError("\(at): imu: an accelerometer/gyroscope only tilt-compensates a compass; it needs a magnetometer section (enabled) too")
        }
        for (section, initial, max) in [("magnetometer", config.magnetometer.reader.retryInitial, config.magnetometer.reader.retryMax),
                                         ("imu", config.imu.reader.retryInitial, config.imu.reader.retryMax),
                                         ("gpsd", config.gpsd.retryInitial, config.gpsd.retryMax)] where max < initial {
            throw ConfigError("\(source): \(section).retry_max (\(max)) must be ≥ \(section).retry_initial (\(initial))")
        }
        return config
    }
}

extension ConfigReader {
    /// A driver name (`auto` gives nil when allowed).
    func chip(_ node: YAMLNode, _ key: String, allowAuto: Bool) throws -> String? {
        let c = try scalar(node, key).lowercased()
        if allowAuto && c == "auto" { return nil }
        guard MagnetometerChips.driver(named: c) != nil else {
            throw fail(node, key, c.quoted, "one of \(allowAuto ? "auto, " : "")\(MagnetometerChips.names.joined(separator: ", "))")
        }
        return c
    }

    /// An accelerometer + gyroscope driver name (`auto` gives nil when allowed).
    func inertialChip(_ node: YAMLNode, _ key: String, allowAuto: Bool) throws -> String? {
        let c = try scalar(node, key).lowercased()
        if allowAuto && c == "auto" { return nil }
        guard InertialChips.driver(named: c) != nil else {
            throw fail(node, key, c.quoted, "one of \(allowAuto ? "auto, " : "")\(InertialChips.names.joined(separator: ", "))")
        }
        return c
    }
}
