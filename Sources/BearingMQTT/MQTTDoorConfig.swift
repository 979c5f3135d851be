import BearingModel
import BearingWire
import BearingConfig
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

    /// What `spool.max_bytes` may be.
    public static let spoolBytes = 256 << 10 ... 1 << 30

    /// The first topic the door publishes to (`PREFIX/…`, and Home Assistant's) that a subscription to
    /// `filter` would receive, or nil. `device` nil (from /etc/machine-id, not known yet) stands for any.
    public func ownTopic(matching filter: String, device: String?) -> String? {
        guard let filter = MQTTTopicFilter(filter) else { return nil }
        // An unknown device is any one level: `+` where its name stands.
        let name = device ?? "+"
        let prefix = self.prefix ?? "bearing/\(name)"
        let topics = MQTTTopics(prefix: prefix)
        var own = [topics.status, topics.spool, topics.fleetStatus] + MQTTDataTopic.allCases.map(topics.data)
        if let homeAssistant {
            let discovery = HomeAssistantDiscovery(discoveryPrefix: homeAssistant, device: name, prefix: prefix)
            own += [discovery.positionTopic] + discovery.configs.map(\.topic)
        }
        return own.first { topic in
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map { $0.contains("+") ? "+" : $0 }
            return MQTTTopicFilter(levels.joined(separator: "/")).map(filter.overlaps) ?? false
        }
    }

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
    public func mqtt(_ node: YAMLNode, over base: MQTTDoorConfig) throws -> MQTTDoorConfig {
        var c = base
        var topicKeys: [String: (YAMLNode) throws -> Void] = [:]
        var fleetNode: YAMLNode?
        for topic in MQTTDataTopic.allCases {
            topicKeys[topic.rawValue] = { value in
                c.topics[topic] = try self.switchedChain(value, "mqtt.topics.\(topic.rawValue)", stream: topic.stream.stream,
                                                         current: c.topics[topic], default: MQTTDoorConfig.defaultTopics[topic])
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
                    throw self.fail(value, "mqtt.device", s.quoted, "1–64 letters, digits, _ and - (it goes in topics and the client id)")
                }
                c.device = s
            },
            "client_id": { value in
                let s = try self.scalar(value, "mqtt.client_id")
                guard (1...128).contains(s.utf8.count), s.isVisibleASCII else {
                    throw self.fail(value, "mqtt.client_id", s.quoted, "1–128 printable ASCII characters (! to ~: no spaces or control characters), unique on the broker")
                }
                c.clientID = s
            },
            "prefix": { c.prefix = try self.topic($0, "mqtt.prefix", "a topic without + or #, control characters or //, not starting or ending with /, e.g. bearing/boat-7") },
            "username": { value in
                let s = try self.string(value, "mqtt.username", nonEmpty: true)
                guard !s.hasControlCharacter else {
                    throw self.fail(value, "mqtt.username", s.quoted, "a user name without control characters")
                }
                c.username = s
            },
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
            "fleet_topic": { value in
                c.fleetTopic = try self.topic(value, "mqtt.fleet_topic", "one topic without + or #, e.g. bearing/fleet/pipelines (the broker's ACL decides who may publish there)")
                fleetNode = value
            },
            "fleet_named_pipelines": { c.fleetNamedPipelines = try self.bool($0, "mqtt.fleet_named_pipelines") },
            "home_assistant": { value in
                if case .scalar(let s, _) = value, !value.isNull, !s.string.isEmpty {
                    guard let on = Self.boolean(s.string) else {
                        throw self.fail(value, "mqtt.home_assistant", self.shown(value), "true, false or a mapping {discovery_prefix: PREFIX}")
                    }
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
                    "max_bytes": { c.spoolMaxBytes = try self.byteSize($0, "mqtt.spool.max_bytes", MQTTDoorConfig.spoolBytes) },
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
        if let fleet = c.fleetTopic, let own = c.ownTopic(matching: fleet, device: c.device) {
            let name = c.device == nil ? ", + being this device's name" : ""
            throw fail(fleetNode ?? node, "mqtt.fleet_topic", fleet.quoted, "this device publishes to (\(own)\(name)), so it would read its own status as a fleet message; e.g. bearing/fleet/pipelines")
        }
        return c
    }

    /// `16777216`, `512K`, `16M`, `1G` (powers of 1024).
    public func byteSize(_ node: YAMLNode, _ key: String, _ range: ClosedRange<Int>) throws -> Int {
        let s = try scalar(node, key).uppercased()
        var value: Int?
        if let unit = s.last.flatMap({ Self.byteUnits[$0] }) {
            value = Int(s.dropLast().trimmingWhitespace()).flatMap { $0.multipliedReportingOverflow(by: unit).overflow ? nil : $0 * unit }
        } else {
            value = Int(s)
        }
        guard let value, range.contains(value) else {
            throw fail(node, key, s.quoted, "a size from \(Self.sizeText(range.lowerBound)) to \(Self.sizeText(range.upperBound)), in bytes or with K, M or G")
        }
        return value
    }

    static let byteUnits: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]

    /// `bytes` as `byteSize` reads it: with the largest unit that divides it.
    public static func sizeText(_ bytes: Int) -> String {
        guard let (unit, size) = byteUnits.filter({ bytes != 0 && bytes % $0.value == 0 }).max(by: { $0.value < $1.value }) else { return "\(bytes)" }
        return "\(bytes / size)\(unit)"
    }

    /// A topic (or prefix) to publish or subscribe to, exactly: `isTopicPrefix`, or the error with `allowed`.
    public func topic(_ node: YAMLNode, _ key: String, _ allowed: String) throws -> String {
        let s = try scalar(node, key)
        guard Self.isTopicPrefix(s) else { throw fail(node, key, s.quoted, allowed) }
        return s
    }


    public static func isTopicPrefix(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 256 && !s.hasPrefix("/") && !s.hasSuffix("/") && !s.contains("//")
            && !s.contains { $0 == "+" || $0 == "#" } && !s.hasControlCharacter
    }
}
