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
    /// The MQTT version tried first: 5 (3.1.1 for a broker that refuses it), or 3.1.1 only.
    public var protocolVersion: MQTTProtocolVersion = .v5

    public init() {}

    /// For a cellular link: a position and an attitude every 30 s, satellites every 5 min; ATT without the
    /// raw sensor fields. About 2.9 MB a day on the link, 3.2 over TLS (`bench/mqtt-link-bytes`; docs/mqtt.md).
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

extension MQTTDoorConfig {
    /// The section while it is read: the config, and where `fleet_topic` stood (for its error).
    public struct Reading: Sendable {
        public var config: MQTTDoorConfig
        var fleetNode: YAMLNode?
        public init(config: MQTTDoorConfig) { self.config = config }
    }

    /// The `mqtt:` section.
    public static let keys: [ConfigKey<Reading>] = [
        .init("broker", "`mqtt://HOST[:PORT]` (1883), `mqtts://HOST[:PORT]` (8883, TLS), or `none`", "the fleet's broker (a URL with a user and "
                + "password is refused without showing them)", default: { $0.config.broker.map { ConfigShow.code("\($0)") } ?? "none (the door is off)" }) {
            r, node, path, c in
            let url = try r.scalar(node, path)
            if url.isEmpty || url == "none" { c.config.broker = nil; return }
            switch MQTTBroker.parse(url) {
            case .success(let b): c.config.broker = b
            case .failure(let e): throw ConfigError("\(r.at(node)): \(path): \(e)")
            }
        },
        .init("device", "1–64 letters, digits, `_`, `-`", "the device's name in the default prefix and client id",
              default: { $0.config.device.map(ConfigShow.code) ?? "from `/etc/machine-id` (12 hex digits of systemd's app-specific id)" }) { r, node, path, c in
            let s = try r.scalar(node, path)
            guard ConfigReader.isName(s) else {
                throw r.fail(node, path, s.quoted, "1–64 letters, digits, _ and - (it goes in topics and the client id)")
            }
            c.config.device = s
        },
        .init("client_id", "1–128 printable ASCII (`!`–`~`: no space, control character or NUL)", "the MQTT client id, unique on the broker",
              default: { $0.config.clientID.map(ConfigShow.code) ?? "`bearing-DEVICE`" }) { r, node, path, c in
            let s = try r.scalar(node, path)
            guard (1...128).contains(s.utf8.count), s.isVisibleASCII else {
                throw r.fail(node, path, s.quoted, "1–128 printable ASCII characters (! to ~: no spaces or control characters), unique on the broker")
            }
            c.config.clientID = s
        },
        .init("prefix", "a topic without `+`, `#`, control characters or `//`, not starting or ending with `/`",
              "the topics' prefix: `PREFIX/tpv`, `PREFIX/att`, `PREFIX/sky`, `PREFIX/status`, `PREFIX/spool`",
              default: { $0.config.prefix.map(ConfigShow.code) ?? "`bearing/DEVICE`" }) { r, node, path, c in
            c.config.prefix = try r.topic(node, path, "a topic without + or #, control characters or //, not starting or ending with /, e.g. bearing/boat-7")
        },
        .init("username", "a name without control characters", "the user name at the broker", default: { $0.config.username.map(ConfigShow.code) ?? "none" }) {
            r, node, path, c in
            let s = try r.string(node, path, nonEmpty: true)
            guard !s.hasControlCharacter else { throw r.fail(node, path, s.quoted, "a user name without control characters") }
            c.config.username = s
        },
        .path("password_file", \.config.passwordFile, default: "none",
              "a file holding the password (needs `username`): its first line, read when the door opens, never logged"),
        .section("tls", \.self, tlsKeys, "TLS for `mqtts://`: the CA that signed the broker's certificate, and a client certificate"),
        .init("protocol", "`5` or `3.1.1`", "the MQTT version: 5 tells the broker the largest packet Bearing takes, so it does not send "
                + "a larger fleet message; a broker that refuses 5 gets 3.1.1 (a warning, and HEALTH's `protocol`); `3.1.1` only for a "
                + "broker that mishandles 5 ([docs/mqtt.md](mqtt.md#mqtt-5-the-largest-packet))", default: { ConfigShow.code($0.config.protocolVersion.rawValue) }) {
            r, node, path, c in
            let s = try r.scalar(node, path)
            guard let v = MQTTProtocolVersion(rawValue: s) else { throw r.fail(node, path, s.quoted, "5 or 3.1.1") }
            c.config.protocolVersion = v
        },
        .int("keepalive", \.config.keepalive, 5...65535, unit: " s", "MQTT keepalive"),
        .int("window", \.config.window, 1...1000, "QoS 1 messages in flight (sent, not yet acknowledged) at once"),
        .seconds("retry_initial", \.config.retryInitial, 0.01...3600, "first reconnect delay; doubles per failed attempt, each shortened at random by up to half"),
        .seconds("retry_max", \.config.retryMax, 0.01...86400, allowed: ", ≥ `retry_initial`", "longest reconnect delay; reconnects go on for ever"),
        .section("topics", \.config.topics, topicKeys, "each data topic sent, and the chain that sets its rate and content"),
        .init("fleet_topic", "one topic without `+` or `#`, not one this device publishes to", "the retained message there sets this device's MQTT "
                + "chains (chains set by the fleet in [docs/mqtt.md](mqtt.md#chains-set-by-the-fleet))", default: { $0.config.fleetTopic.map(ConfigShow.code) ?? "none" }) { r, node, path, c in
            c.config.fleetTopic = try r.topic(node, path, "one topic without + or #, e.g. bearing/fleet/pipelines (the broker's ACL decides who may publish there)")
            c.fleetNode = node
        },
        .bool("fleet_named_pipelines", \.config.fleetNamedPipelines, allowed: "`true`, `false` (needs `fleet_topic`)",
              "the fleet's message also sets the socket's named pipelines (its `pipelines`)"),
        .init("home_assistant", "`true`, `false` or a mapping", "Home Assistant MQTT discovery (`true`: under `homeassistant`)",
              default: { $0.config.homeAssistant.map { ConfigShow.code("{discovery_prefix: \($0)}") } ?? "`false`" },
              subsections: { c, path, doc in homeAssistantKeys.reference(path, doc, defaults: c) }) { r, node, path, c in
            if case .scalar(let s, _) = node, !node.isNull, !s.string.isEmpty {
                guard let on = ConfigReader.boolean(s.string) else {
                    throw r.fail(node, path, r.shown(node), "true, false or a mapping {discovery_prefix: PREFIX}")
                }
                c.config.homeAssistant = on ? "homeassistant" : nil
                return
            }
            try r.section(node, path, homeAssistantKeys, into: &c)
            if c.config.homeAssistant == nil { c.config.homeAssistant = "homeassistant" }
        },
        .section("spool", \.self, spoolKeys, "where unacknowledged messages wait, and how much of them"),
    ]

    static let tlsKeys: [ConfigKey<Reading>] = [
        .path("ca", \.config.caFile, default: "the system's CAs", "the CA that signed the broker's certificate"),
        .path("certificate", \.config.certificateFile, default: "none", "a client certificate (with `key`)"),
        .path("key", \.config.keyFile, default: "none", "the client certificate's key (with `certificate`)"),
    ]

    /// One key per data topic.
    static let topicKeys: [ConfigKey<[MQTTDataTopic: [OperatorSpec]]>] = MQTTDataTopic.allCases.map { topic in
        .switchedChain(topic.rawValue, \.[topic], topic.stream.stream, default: { defaultTopics[topic] }, "`PREFIX/\(topic.rawValue)` and its chain")
    }

    static let homeAssistantKeys: [ConfigKey<Reading>] = [
        .init("discovery_prefix", "a topic without `+` or `#`", "where discovery configs go", default: { _ in "`homeassistant` (HA's default)" }) {
            r, node, path, c in
            c.config.homeAssistant = try r.topic(node, path, "a topic without + or #, e.g. homeassistant (HA's default)")
        },
    ]

    static let spoolKeys: [ConfigKey<Reading>] = [
        .path("directory", \.config.spoolDirectory, default: "`$STATE_DIRECTORY/mqtt-spool`, else `/var/lib/bearing/mqtt-spool`",
              "where unacknowledged messages wait"),
        .init("max_bytes", "\(ConfigReader.sizeText(spoolBytes.lowerBound))–\(ConfigReader.sizeText(spoolBytes.upperBound)) (bytes, or with `K`, `M`, `G`)",
              "the spool's bound; past it the oldest messages go (and are counted)",
              default: { ConfigShow.code(ConfigReader.sizeText($0.config.spoolMaxBytes)) }) { r, node, path, c in
            c.config.spoolMaxBytes = try r.byteSize(node, path, spoolBytes)
        },
    ]
}

extension ConfigReader {
    /// The checks across the section's keys, made once it is read.
    public func checked(_ reading: MQTTDoorConfig.Reading, _ node: YAMLNode) throws -> MQTTDoorConfig {
        let c = reading.config
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
            throw fail(reading.fleetNode ?? node, "mqtt.fleet_topic", fleet.quoted, "this device publishes to (\(own)\(name)), so it would read its own status as a fleet message; e.g. bearing/fleet/pipelines")
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
