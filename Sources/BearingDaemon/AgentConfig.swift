import BearingModel
import BearingWire
import BearingCalibration
import BearingOnlineCalibration
import BearingPOSIX
import BearingConfig
import BearingYAML
import BearingLog
import BearingGPSD
import BearingSensors
import BearingMarine
import BearingMQTT
import BearingSocketDoor
import BearingWebDoor
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Everything `bearing run` can be told, with defaults: docs/config-keys.md, generated from the key tables.
public struct AgentConfig: Equatable, Sendable {
    /// The socket and TCP door's section (BearingSocketDoor).
    public typealias Socket = SocketSettings

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
    /// Online magnetometer calibration and the deviation curves (config `calibration.auto`, `calibration.auto_file`,
    /// `calibration.deviation_file`, `calibration.driving_file`).
    public var calibration = OnlineCalibration()
    /// What the compass is mounted in (config `vehicle`): on land the deviation is learnt from driving.
    public var vehicle: Vehicle = .none
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
    /// The web door (off until the config has a `web:` section).
    public var web = WebSettings()
    /// The black box: the ring in memory, saves, continuous recording.
    public var blackbox = BlackBoxConfig()
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
        SocketSettings.defaultPath(environment: environment)
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

    /// `calibration.auto` in force: as set, else `track` with an IMU (the fused "up" it learns with) and `off`
    /// without one.
    public var autoCalibration: AutoCalibrationMode { imu.enabled ? calibration.auto ?? .track : .off }

    /// Where the online calibration is kept: `calibration.auto_file`, else `auto-calibration.json` beside the
    /// magnetometer's calibration file.
    public var autoCalibrationPath: String { calibration.autoFile ?? besideCalibration("auto-calibration.json") }

    /// The deviation curve's file: `calibration.deviation_file`, else `deviation.json` beside the magnetometer's
    /// calibration file.
    public var deviationPath: String { calibration.deviationFile ?? besideCalibration("deviation.json") }

    /// Where the deviation learnt from driving is kept: `calibration.driving_file`, else `driving-deviation.json`
    /// beside the magnetometer's calibration file.
    public var drivingDeviationPath: String { calibration.drivingFile ?? besideCalibration("driving-deviation.json") }

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
        guard let root else { return base }
        let r = ConfigReader(source: source)
        var reading = Reading(config: base)
        do {
            try r.section(root, "", keys, into: &reading)
        } catch let e as ConfigError {
            throw e
        } catch {
            throw ConfigError("\(source): \(error)")
        }
        let config = reading.config
        if let tcp = config.socket.tcp, !config.socket.tcpAllowRemote, !TCPSocket.isLoopback(tcp.host) {
            throw ConfigReader.remoteRefused(at: source, key: "socket.tcp", address: tcp.host, what: "the TCP door", allowKey: "socket.tcp_allow_remote")
        }
        if config.imu.enabled && !config.magnetometer.enabled {
            let at = reading.imuNode.map(r.at) ?? source
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

/// The config's tables: each section's keys beside it, in the order the reference lists them
/// (`ConfigReference` writes docs/config-keys.md and bearing.yaml(5) from them).
extension AgentConfig {
    /// The file while it is read: the config, and where `imu:` stood (for the error when it lacks a magnetometer).
    struct Reading {
        var config: AgentConfig
        var imuNode: YAMLNode?
    }

    /// The file's top level: the sections, and the keys of their own.
    static let keys: [ConfigKey<Reading>] = [
        .section("gpsd", \.config.gpsd, gpsdKeys, "where gpsd is, and how a lost link is noticed and retried"),
        .section("socket", \.config.socket, Socket.keys, "the UNIX socket clients read, and the TCP door for unmodified gpsd clients"),
        .section("magnetometer", \.config.magnetometer, Magnetometer.keys, default: "absent: no compass",
                 "present (or `--board`) enables the compass: which bus and chip, how it is mounted, how often it is read",
                 begin: { var m = $0; m.enabled = true; return Mounting(m) }, end: { r, _, path, m in try m.mounted(r, path) }),
        .section("imu", \.config.imu, IMU.keys, default: "absent: no accelerometer/gyroscope",
                 "present (or a `--board` module with an IMU; needs `magnetometer`) tilt-compensates the compass: ATT gets a true, "
                    + "tilt-compensated `heading`, `roll`, `pitch`, `yaw`, `acc_*`, `gyro_*` (with a gyroscope) and `quat`",
                 begin: { var imu = $0; imu.enabled = true; return Mounting(imu) }, end: { r, _, path, m in try m.mounted(r, path) })
            .noting(\.imuNode),
        .section("heading", \.config.heading, Heading.keys, "how headings are referred to true north"),
        .init("vehicle", Vehicle.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", "),
              "what the compass is mounted in: with `car` or `rover` (and an IMU and gpsd) the deviation is learnt from driving "
                + "(the course at speed is the heading) and corrects ATT's headings, NMEA HDG's deviation field and Signal K's `headingCompass`; "
                + "the fixes' speed takes the vehicle's own acceleration out of the accelerometer, and from a cold start the first straight "
                + "fixes give online calibration the hard iron",
              default: { ConfigShow.code($0.config.vehicle.rawValue) }) { r, node, path, c in
            let value = try r.scalar(node, path)
            guard let v = Vehicle(rawValue: value) else { throw r.fail(node, path, value.quoted, Vehicle.allCases.map(\.rawValue).joined(separator: ", ")) }
            c.config.vehicle = v
        },
        .section("calibration", \.config.calibration, OnlineCalibration.keys,
                 "online magnetometer calibration where the compass is mounted ([docs/calibration-online.md](calibration-online.md))"),
        .section("pipeline", \.config.pipelines, pipelineKeys, "the default chain of each stream ([docs/operators.md](operators.md))"),
        .init("pipelines", "`NAME: {CLASS: operator list, …}`; NAME uses a–z, 0–9, `_`, `-`; CLASS is `TPV`, `SKY`, `ATT`, `GST`, `PPS` or `TOFF`",
              "named pipelines: a client subscribes with `?WATCH={\"pipeline\":\"NAME\",…}`; classes a pipeline leaves out use `pipeline`'s chains",
              default: { _ in "none" }) { r, node, path, c in c.config.namedPipelines = try r.namedPipelines(node, path) },
        .path("pipeline_store", \.config.pipelineStore, default: "`$STATE_DIRECTORY/pipelines.json`, else `/var/lib/bearing/pipelines.json`",
              "where pipelines defined at run time are kept (atomic writes)"),
        .section("nmea0183", \.config.nmea0183, NMEA0183DoorConfig.keys, default: "absent: off",
                 "the NMEA 0183 door: heading, attitude, rate of turn and RMC sentences ([docs/marine.md](marine.md)); off until it has an output",
                 begin: { $0 }, end: { r, node, path, c in try r.checkRemote(c.outputs, path, node); return c }),
        .section("signalk", \.config.signalK, SignalKDoorConfig.keys, default: "absent: off",
                 "the Signal K door: deltas for a Signal K server's UDP input and Signal K TCP readers; off until it has an output",
                 begin: { $0 }, end: { r, node, path, c in try r.checkRemote(c.outputs, path, node); return c }),
        .section("mqtt", \.config.mqtt, MQTTDoorConfig.keys, default: "absent: off",
                 "the MQTT door: TPV, ATT and SKY for a fleet's broker, spooled until acknowledged ([docs/mqtt.md](mqtt.md)); off until `broker` is set",
                 begin: { MQTTDoorConfig.Reading(config: $0) }, end: { r, node, _, c in try r.checked(c, node) }),
        .section("web", \.config.web, WebSettings.keys, default: "absent: off",
                 "the web door: a page showing heading, sky, calibration, deviation and health, and the protocol over HTTP "
                    + "([docs/web.md](web.md)); present (even `web: {}`) turns it on, on loopback",
                 begin: { var w = $0; w.enabled = true; return w }, end: { _, _, _, w in w }),
        .section("log", \.config.log, Log.keys, "what the daemon logs, and where every published object goes"),
        .section("blackbox", \.config.blackbox, BlackBoxConfig.keys,
                 "the black box: what the sensors and gpsd said, kept in memory and saved on request or fault ([docs/blackbox.md](blackbox.md))"),
    ]

    static let gpsdKeys: [ConfigKey<GPSDClient.Configuration>] = [
        .string("host", \.host, "gpsd host"),
        .int("port", \.port, 1...65535, "gpsd port"),
        .seconds("silence_timeout", \.silenceTimeout, 0.5...3600, "no message for this long = link lost (a frozen gpsd gives no error otherwise)"),
        .seconds("retry_initial", \.retryInitial, 0.01...1, "first reconnect delay; doubles per failed attempt"),
        .seconds("retry_max", \.retryMax, 0.1...60, allowed: ", ≥ `retry_initial`", "longest reconnect delay"),
    ]

    /// One key per stream (`tpv`, `att` for the compass, `gpsd_att`, …), from `StreamKey.all`.
    static let pipelineKeys: [ConfigKey<[StreamKey: [OperatorSpec]]>] = StreamKey.all.map { stream in
        .init(stream.configName, "operator list over \(stream.stream.rawValue)",
              "the default chain for \(stream.source == .compass ? "the compass's" : "gpsd's") \(stream.stream.rawValue) messages",
              default: { ConfigShow.chain($0[stream] ?? []) }) { r, node, path, pipelines in
            pipelines[stream] = try r.chain(node, path, stream: stream.stream)
        }
    }
}

extension AgentConfig.Socket {
    static let keys: [ConfigKey<Self>] = [
        .path("path", \.path, default: "`$RUNTIME_DIRECTORY/bearing.sock`, else `/run/bearing/bearing.sock`", "the UNIX socket"),
        .init("mode", "an octal mode such as `\"0660\"`, readable and writable by the owner", "file mode of the socket",
              default: { ConfigShow.code("\"0\(String($0.mode, radix: 8))\"") }) { r, node, path, s in s.mode = try r.fileMode(node, path) },
        .init("group", "a group name, or `none`", "the socket file's group, e.g. `bearing`: who may read it",
              default: { $0.group.map(ConfigShow.code) ?? "none (the daemon's group)" }) { r, node, path, s in s.group = try r.groupName(node, path) },
        .int("max_clients", \.maxClients, 1...4096, "connections at once (UNIX socket and TCP door together); beyond this a client gets an ERROR and is closed, "
                + "unless a reader that stopped reading gives up its slot (client slots in [docs/protocol.md](protocol.md#client-slots-refusals-and-readers-that-stop-reading)). Each costs up to `client_queue` lines "
                + "(≈ 150 KB), so 32 keep the worst case near 5 MB on a 512 MB Zero 2 W"),
        .int("client_queue", \.clientQueue, 1...100_000, "messages queued per client before that client's messages are dropped"),
        .seconds("write_interval", \.writeInterval, 0...1, "least time between two writes to one reader; lines that come sooner wait and go out together. "
                    + "`0` writes each line the moment its chain emits it (lowest latency, one `send(2)` per line per reader)"),
        .init("tcp", "`HOST:PORT`, numeric, or `none`", "the TCP door for gpsd clients, e.g. `127.0.0.1:2948`; loopback only unless `tcp_allow_remote`",
              default: { $0.tcp.map { ConfigShow.code(TCPSocket.name($0.host, $0.port)) } ?? "none" }) { r, node, path, s in s.tcp = try r.hostPort(node, path) },
        .bool("tcp_allow_remote", \.tcpAllowRemote, "allow a non-loopback `tcp` (logged as a warning: the door has no authentication)"),
        .init("pipeline_writers", "list of user names or uids", "who may define named pipelines at run time (`?PIPELINE`), besides root; "
                + "over the UNIX socket only (SO_PEERCRED)", default: { $0.pipelineWriters.isEmpty ? "none" : ConfigShow.code("[\($0.pipelineWriters.joined(separator: ", "))]") }) {
            r, node, path, s in s.pipelineWriters = try r.users(node, path)
        },
        .int("max_request", \.maxRequestBytes, 256...1_048_576, unit: " bytes", "longest request line; a longer one gets an ERROR and is skipped"),
    ]
}

extension WebSettings {
    static let keys: [ConfigKey<Self>] = [
        .init("host", "a numeric IPv4 or IPv6 address", "where the page is served: loopback by default; a LAN address (e.g. `0.0.0.0`) "
                + "needs the credential for everything, and the credential file must exist", default: { ConfigShow.code($0.host) }) { r, node, path, w in
            let text = try r.scalar(node, path)
            guard TCPSocket.isNumeric(text) else {
                throw r.fail(node, path, text.quoted, "a numeric IPv4 or IPv6 address, e.g. 127.0.0.1 or 0.0.0.0")
            }
            w.host = text
        },
        .int("port", \.port, 0...65535, "the TCP port (`0`: the kernel picks one, logged at start)"),
        .path("credential", \.credentialFile, default: "`/etc/bearing/web-credential`",
              "the file holding the web credential (`bearing web-credential` writes it, mode 0640, group `bearing`): needed to log in, "
                + "for every action, and for viewing from another host"),
        .int("max_pages", \.maxPages, 1...1024, "pages open at once (each an event stream and a thread); beyond, a page is told to try later (HTTP 503)"),
        .int("client_queue", \.clientQueue, 8...100_000, "lines queued per page; a page that lets more wait has stopped reading and is dropped (it reconnects)"),
        .seconds("write_interval", \.writeInterval, 0...1, "least time between two writes to one page; lines that come sooner go out together "
                    + "(one wake of the page's thread and one send for several). `0` writes each line at once"),
        .int("max_request", \.maxRequestBytes, 256...1_048_576, unit: " bytes", "the largest request body (a request line, a login); larger is refused (HTTP 413)"),
        .int("max_headers", \.maxHeaders, 8...200, "headers per request at most; more is refused (HTTP 431)"),
        .seconds("session", \.sessionLifetime, 60...2_592_000, "how long a login lasts"),
    ]
}

private let busesAllowed = "`/dev/…`, a bus number, `simulator`, `simulator:tumble`, `simulator:six-position`"

/// A sensor mounted on the board: its orientation comes from `orientation` and `rotation` together.
protocol Mounted: Sendable {
    var orientation: Orientation { get set }
}

extension AgentConfig.Magnetometer: Mounted {
    static let keys: [ConfigKey<Mounting<Self>>] = [
        .bool("enabled", \.sensor.enabled, "switch a board's compass off"),
        .init("bus", busesAllowed, "the I2C bus (`simulator:tumble`: the simulated board also pitches and rolls, for trying `calibrate`; "
                + "`simulator:six-position`: its IMU is held in each face and six tilts in turn, for trying `calibrate --accel`)",
              default: { ConfigShow.code($0.sensor.reader.bus) }) { r, node, path, m in m.sensor.reader.bus = try r.busPath(node, path) },
        .init("chip", "`auto`, " + MagnetometerChips.names.joined(separator: ", "), "the driver; `auto` tries every supported chip at its addresses",
              default: { ConfigShow.code($0.sensor.reader.chip ?? "auto") }) { r, node, path, m in
            m.sensor.reader.chip = try r.chip(node, path, allowAuto: true)
        },
        .address(\.sensor.reader.address),
        .number("rate", \.sensor.reader.settings.rate, 0.1...200, "/s", "samples per second",
                "samples per second (the driver picks the nearest output data rate at or above)"),
        .number("range", \.sensor.reader.settings.rangeMicrotesla, 10...10_000, "µT", "µT (full scale wanted)", default: "chip default",
                "full scale wanted (the smallest range at or above)"),
        .orientation("board x (forward), y (right), z (down) from chip axes; `\"+X-Y-Z\"` for a chip lying Z-up with Y to the left. Mirror images are refused"),
        .rotation("roll, pitch, yaw (degrees) of a chip mounted at an angle, after the remap"),
        .path("calibration", \.sensor.calibrationFile, default: "`$STATE_DIRECTORY/calibration.json`, else `/var/lib/bearing/calibration.json`",
              "the calibration file `bearing calibrate` writes and the daemon loads"),
        .seconds("retry_initial", \.sensor.reader.retryInitial, 0.01...10, "first delay before re-probing a lost sensor; doubles per failed attempt"),
        .seconds("retry_max", \.sensor.reader.retryMax, 0.1...3600, allowed: ", ≥ `retry_initial`", "longest delay between re-probes"),
    ]
}

extension AgentConfig.IMU: Mounted {
    static let keys: [ConfigKey<Mounting<Self>>] = [
        .bool("enabled", \.sensor.enabled, "switch a board's IMU off (back to the magnetometer alone)"),
        .init("bus", busesAllowed, "the IMU's I2C bus", default: { ConfigShow.code($0.sensor.reader.bus) }) { r, node, path, m in
            m.sensor.reader.bus = try r.busPath(node, path)
        },
        .init("chip", "`auto`, " + InertialChips.names.joined(separator: ", "),
              "the accelerometer/gyroscope driver (`lsm303`: an accelerometer alone); `auto` tries every supported chip at its addresses",
              default: { ConfigShow.code($0.sensor.reader.chip ?? "auto") }) { r, node, path, m in
            m.sensor.reader.chip = try r.inertialChip(node, path, allowAuto: true)
        },
        .address(\.sensor.reader.address),
        .number("rate", \.sensor.reader.settings.rate, 1...1000, "/s", "samples per second",
                "samples per second (the fusion runs at this rate; `pipeline.att` sets how often ATT is published)"),
        .orientation("board x (forward), y (right), z (down) from the IMU chip's axes, as `magnetometer.orientation`"),
        .rotation("roll, pitch, yaw (degrees) of an IMU mounted at an angle, after the remap"),
        .path("calibration", \.sensor.calibrationFile, default: "`accelerometer.json` beside `magnetometer.calibration`",
              "the accelerometer calibration file `bearing calibrate --accel` writes and the daemon loads"),
        .path("level", \.sensor.levelFile, default: "`level.json` beside `magnetometer.calibration`",
              "the mounting level file `bearing level` writes and the daemon loads"),
        .seconds("retry_initial", \.sensor.reader.retryInitial, 0.01...10, "first delay before re-probing a lost IMU; doubles per failed attempt"),
        .seconds("retry_max", \.sensor.reader.retryMax, 0.1...3600, allowed: ", ≥ `retry_initial`", "longest delay between re-probes"),
    ]
}

/// A sensor's section while it is read: `orientation` and `rotation` make one orientation at the end.
struct Mounting<Sensor: Mounted> {
    var sensor: Sensor
    var axes: String
    var rotation: Vector3
    /// Where the mounting was given (`orientation`, else `rotation`), for its error.
    var node: YAMLNode?

    init(_ sensor: Sensor) {
        self.sensor = sensor
        axes = sensor.orientation.axes
        rotation = sensor.orientation.rotation
    }

    func mounted(_ r: ConfigReader, _ path: String) throws -> Sensor {
        guard let node else { return sensor }
        var s = sensor
        s.orientation = try r.orientation(node, path, axes: axes, rotation: rotation)
        return s
    }
}

extension ConfigKey {
    static func address<S>(_ part: WritableKeyPath<Value, UInt8?> & Sendable) -> Self where Value == Mounting<S> {
        .init("address", "0x03–0x77, or `auto`", "the chip's address",
              default: { v in ConfigShow.code(v[keyPath: part].map { "0x" + String($0, radix: 16) } ?? "auto") }) { r, node, path, m in
            m[keyPath: part] = try r.i2cAddress(node, path)
        }
    }

    static func orientation<S>(_ doc: String) -> Self where Value == Mounting<S> {
        .init("orientation", "three signed axes forming a rotation", doc, default: { ConfigShow.code("\"\($0.axes)\"") }) { r, node, path, m in
            m.axes = try r.scalar(node, path)
            m.node = node
        }
    }

    static func rotation<S>(_ doc: String) -> Self where Value == Mounting<S> {
        .init("rotation", "3 numbers", doc, default: { ConfigShow.code("[\([$0.rotation.x, $0.rotation.y, $0.rotation.z].map(ConfigShow.number).joined(separator: ", "))]") }) {
            r, node, path, m in
            m.rotation = try r.rotation(node, path)
            m.node = m.node ?? node
        }
    }
}

extension AgentConfig {
    /// The `calibration` section.
    public struct OnlineCalibration: Equatable, Sendable {
        /// nil: the default (`track` with an IMU).
        public var auto: AutoCalibrationMode?
        public var autoFile: String?
        public var deviationFile: String?
        public var drivingFile: String?
        public init() {}
    }
}

extension AgentConfig.OnlineCalibration {
    static let keys: [ConfigKey<Self>] = [
        .init("auto", AutoCalibrationMode.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", "),
              "online hard- and soft-iron calibration (with an IMU; without one it is off): learn while the vehicle moves (`track`), "
                + "keep what was learnt without learning more (`locked`), or none (`off`)",
              default: { $0.auto.map { ConfigShow.code($0.rawValue) } ?? "`track` with an IMU, else `off`" }) { r, node, path, c in
            let value = try r.scalar(node, path)
            guard let mode = AutoCalibrationMode(rawValue: value) else {
                throw r.fail(node, path, value.quoted, AutoCalibrationMode.allCases.map(\.rawValue).joined(separator: ", "))
            }
            c.auto = mode
        },
        .path("auto_file", \.autoFile, default: "`auto-calibration.json` beside `magnetometer.calibration`",
              "where the online calibration is kept across restarts (written atomically at each change)"),
        .path("deviation_file", \.deviationFile, default: "`deviation.json` beside `magnetometer.calibration`",
              "the deviation curve that corrects the compass heading (with an IMU), as `bearing swing` writes it"),
        .path("driving_file", \.drivingFile, default: "`driving-deviation.json` beside `magnetometer.calibration`",
              "where the deviation learnt from driving (`vehicle` car or rover, with an IMU) is kept across restarts, "
                + "with the calibration it was seen after (written atomically at each new sector and every 10 minutes while learning)"),
    ]
}

extension AgentConfig.Heading {
    static let keys: [ConfigKey<Self>] = [
        .bool("true_north", \.trueNorth, "add the WMM2025 declination to get `heading` (false: magnetic heading only)"),
        .init("fallback_position", "`[lat, lon]` or `[lat, lon, height_km]` within -90…90, -180…180, -1…100, or `none`",
              "position for the declination until the first 2D/3D fix (then a fix out of reach of the last is held for 10 s: [Positions out of reach](attitude.md#positions-out-of-reach))", default: { $0.fallbackPosition == nil ? "none" : "set" }) { r, node, path, h in
            h.fallbackPosition = try r.position(node, path)
        },
    ]
}

extension AgentConfig.Log {
    static let keys: [ConfigKey<Self>] = [
        .init("level", Logger.Level.allCases.map(\.rawValue).joined(separator: ", "), "stderr log level",
              default: { ConfigShow.code($0.level.rawValue) }) { r, node, path, l in l.level = try r.level(node, path) },
        .init("data_log", "a path, or `none`", "NDJSON file receiving every published object",
              default: { $0.dataLog.map(ConfigShow.code) ?? "none" }) { r, node, path, l in l.dataLog = try r.optionalPath(node, path) },
    ]
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
