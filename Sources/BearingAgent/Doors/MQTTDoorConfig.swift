import BearingCore
import BearingIO
import BearingYAML
import FoundationEssentials

/// The MQTT door (config `mqtt:`): the device's TPV, ATT and SKY for a fleet's broker, numbered and
/// spooled on disk until the broker acknowledges them. Off until `broker` is set.
public struct MQTTDoorConfig: Equatable, Sendable {
    public var broker: MQTTBroker?
    /// The device name in the default prefix and client id (default: from /etc/machine-id, `DeviceIdentity`).
    public var device: String?
    public var clientID: String?
    /// Topics are `PREFIX/tpv`, `PREFIX/att`, `PREFIX/sky`, `PREFIX/status`, `PREFIX/spool` (default `bearing/DEVICE`).
    public var prefix: String?
    public var username: String?
    /// A file holding the password (its first line); read when the door opens, never logged.
    public var passwordFile: String?
    public var caFile: String?
    public var certificateFile: String?
    public var keyFile: String?
    public var keepalive = 60
    /// Each data topic sent, with the chain that sets its rate and content.
    public var topics: [MQTTDataTopic: [OperatorSpec]] = MQTTDoorConfig.defaultTopics
    /// Where unacknowledged messages wait (default `$STATE_DIRECTORY/mqtt-spool`, else /var/lib/bearing/mqtt-spool).
    public var spoolDirectory: String?
    /// The spool's bound; past it the oldest messages go (and are counted).
    public var spoolMaxBytes = 16 << 20
    /// QoS 1 messages in flight (sent, not yet acknowledged) at once.
    public var window = 32
    /// Reconnect delays: the first, doubling up to the last (each shortened by a random part of up to half).
    public var retryInitial = 1.0
    public var retryMax = 120.0
    /// Home Assistant discovery under this prefix (nil: off).
    public var homeAssistant: String?
    /// The topic whose retained message sets this device's chains (`FleetPipelines`; nil: only the config does).
    public var fleetTopic: String?
    /// Whether the fleet's message may also set the socket's named pipelines (its `pipelines`).
    public var fleetNamedPipelines = false

    public init() {}

    /// For a cellular link: a position and an attitude every 30 s, satellites every 5 min; ATT without the
    /// raw sensor fields. About 2.9 MB a day on the link, 3.2 over TLS (`bench/mqtt-link-bytes`; README, "MQTT").
    public static let defaultTopics: [MQTTDataTopic: [OperatorSpec]] = [
        .tpv: [.minMode(.twoD), .throttle(interval: 30, latest: true)],
        .att: [.fields(["time", "heading", "mheading", "mag_st", "pitch", "roll", "rot", "declination"]), .throttle(interval: 30, latest: true)],
        .sky: [.throttle(interval: 300, latest: true)],
    ]

    public static func defaultSpoolDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty { return "\(dir)/mqtt-spool" }
        return "/var/lib/bearing/mqtt-spool"
    }
}

/// The data topics: each a stream of the publishing hub.
public enum MQTTDataTopic: String, CaseIterable, Sendable, Comparable {
    case tpv, att, sky

    public var stream: StreamKey {
        switch self {
        case .tpv: return StreamKey(.tpv, .gpsd)
        case .att: return StreamKey(.att, .compass)
        case .sky: return StreamKey(.sky, .gpsd)
        }
    }

    /// The classes the door publishes (those a fleet message's `mqtt` may name).
    public static let classes = Set(allCases.map(\.stream.stream))

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

extension ConfigReader {
    func mqtt(_ node: YAMLNode, over base: MQTTDoorConfig) throws -> MQTTDoorConfig {
        var c = base
        var topicKeys: [String: (YAMLNode) throws -> Void] = [:]
        for topic in MQTTDataTopic.allCases {
            topicKeys[topic.rawValue] = { value in
                if case .scalar = value, !value.isNull, let on = value.string.flatMap(Self.boolean) {
                    c.topics[topic] = on ? (c.topics[topic] ?? MQTTDoorConfig.defaultTopics[topic]) : nil
                } else {
                    c.topics[topic] = try self.chain(value, "mqtt.topics.\(topic.rawValue)", stream: topic.stream.stream)
                }
            }
        }
        try section(node, "mqtt", [
            "broker": { value in
                let url = try self.scalar(value, "mqtt.broker")
                if url.isEmpty || url == "none" { c.broker = nil; return }
                switch MQTTBroker.parse(url) {
                case .success(let b): c.broker = b
                case .failure(let e): throw ConfigError("\(self.at(value)): mqtt.broker: \(e)")
                }
            },
            "device": { value in
                let s = try self.scalar(value, "mqtt.device")
                guard Self.isName(s) else {
                    throw self.fail(value, "mqtt.device", "\"\(s)\"", "1–64 letters, digits, _ and - (it goes in topics and the client id)")
                }
                c.device = s
            },
            "client_id": { value in
                let s = try self.scalar(value, "mqtt.client_id")
                guard !s.isEmpty, s.utf8.count <= 128, s.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                    throw self.fail(value, "mqtt.client_id", "\"\(s)\"", "1–128 printable ASCII characters without spaces, unique on the broker")
                }
                c.clientID = s
            },
            "prefix": { c.prefix = try self.topic($0, "mqtt.prefix", "a topic without + or #, tabs or newlines, not starting or ending with /, e.g. bearing/boat-7") },
            "username": { c.username = try self.string($0, "mqtt.username", nonEmpty: true) },
            "password_file": { c.passwordFile = try self.path($0, "mqtt.password_file") },
            "tls": { node in
                try self.section(node, "mqtt.tls", [
                    "ca": { c.caFile = try self.path($0, "mqtt.tls.ca") },
                    "certificate": { c.certificateFile = try self.path($0, "mqtt.tls.certificate") },
                    "key": { c.keyFile = try self.path($0, "mqtt.tls.key") },
                ])
            },
            "keepalive": { c.keepalive = try self.int($0, "mqtt.keepalive", 5...65535) },
            "window": { c.window = try self.int($0, "mqtt.window", 1...1000) },
            "retry_initial": { c.retryInitial = try self.seconds($0, "mqtt.retry_initial", 0.01...3600) },
            "retry_max": { c.retryMax = try self.seconds($0, "mqtt.retry_max", 0.01...86400) },
            "topics": { try self.section($0, "mqtt.topics", topicKeys) },
            "fleet_topic": { c.fleetTopic = try self.topic($0, "mqtt.fleet_topic", "one topic without + or #, e.g. bearing/fleet/pipelines (the broker's ACL decides who may publish there)") },
            "fleet_named_pipelines": { c.fleetNamedPipelines = try self.bool($0, "mqtt.fleet_named_pipelines") },
            "home_assistant": { value in
                if case .scalar = value, !value.isNull, let on = value.string.flatMap(Self.boolean) {
                    c.homeAssistant = on ? "homeassistant" : nil
                    return
                }
                try self.section(value, "mqtt.home_assistant", [
                    "discovery_prefix": { c.homeAssistant = try self.topic($0, "mqtt.home_assistant.discovery_prefix", "a topic without + or #, e.g. homeassistant (HA's default)") },
                ])
                if c.homeAssistant == nil { c.homeAssistant = "homeassistant" }
            },
            "spool": { node in
                try self.section(node, "mqtt.spool", [
                    "directory": { c.spoolDirectory = try self.path($0, "mqtt.spool.directory") },
                    "max_bytes": { c.spoolMaxBytes = try self.byteSize($0, "mqtt.spool.max_bytes", 256 << 10 ... 1 << 40) },
                ])
            },
        ])
        if (c.certificateFile == nil) != (c.keyFile == nil) {
            throw ConfigError("\(at(node)): mqtt.tls: a client certificate needs its key and a key its certificate (set both or neither)")
        }
        if c.broker?.tls == false && (c.caFile != nil || c.certificateFile != nil) {
            throw ConfigError("\(at(node)): mqtt.tls is set but mqtt.broker is mqtt://: use mqtts:// for TLS")
        }
        if c.retryMax < c.retryInitial {
            throw ConfigError("\(at(node)): mqtt.retry_max (\(c.retryMax)) must be ≥ mqtt.retry_initial (\(c.retryInitial))")
        }
        if c.fleetNamedPipelines && c.fleetTopic == nil {
            throw ConfigError("\(at(node)): mqtt.fleet_named_pipelines needs mqtt.fleet_topic (the topic whose message sets them)")
        }
        if c.passwordFile != nil && c.username == nil {
            throw ConfigError("\(at(node)): mqtt.password_file needs mqtt.username")
        }
        return c
    }

    /// `16777216`, `512K`, `16M`, `1G` (powers of 1024).
    func byteSize(_ node: YAMLNode, _ key: String, _ range: ClosedRange<Int>) throws -> Int {
        let s = try scalar(node, key).uppercased()
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var value: Int?
        if let unit = s.last.flatMap({ units[$0] }) {
            value = Int(s.dropLast().trimmingWhitespace()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        } else {
            value = Int(s)
        }
        guard let value, range.contains(value) else {
            throw fail(node, key, "\"\(s)\"", "a size from \(range.lowerBound >> 10)K to \(range.upperBound >> 30)G, in bytes or with K, M or G")
        }
        return value
    }

    /// A topic (or prefix) to publish or subscribe to, exactly: `isTopicPrefix`, or the error with `allowed`.
    func topic(_ node: YAMLNode, _ key: String, _ allowed: String) throws -> String {
        let s = try scalar(node, key)
        guard Self.isTopicPrefix(s) else { throw fail(node, key, "\"\(s)\"", allowed) }
        return s
    }

    /// Letters, digits, `_` and `-`, 1–64 of them: a name that can stand in topics, ids and labels.
    static func isName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) }
    }

    static func isTopicPrefix(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 256 && !s.hasPrefix("/") && !s.hasSuffix("/") && !s.contains("//")
            && !s.contains { "+#\t\n\r\0".contains($0) }
    }
}
