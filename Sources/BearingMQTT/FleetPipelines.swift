import BearingModel
import BearingWire
/// Chains set by the fleet: a retained message on the fleet topic, read by every device that is told to obey
/// it (`mqtt.fleet_topic`):
///
///     {"version":"2026-11-25.2","mqtt":{"TPV":[{"op":"throttle","interval":60}],"ATT":[…]},
///      "pipelines":{"coarse":{"TPV":[{"op":"deadband","meters":50}]}}}
///
/// `mqtt` holds a chain per class the MQTT door publishes (TPV, ATT, SKY); a class it does not name keeps the
/// config's chain. `pipelines` holds named pipelines for the socket's clients (`?WATCH={"pipeline":NAME}`),
/// which a device takes only when its config allows (`mqtt.fleet_named_pipelines`); the fleet's set replaces
/// the previous version's whole. Every chain is checked with the same rules as a client's `?PIPELINE=`
/// (`NamedPipeline.chains`), so each version is whole, stands alone and does not depend on the one before.
/// An empty payload (the retained message cleared) goes back to the config. A message is at most
/// `maxMessageBytes`, names no key twice and has a printable ASCII `version`; a refusal quotes it bounded and
/// escaped (`maxRefusalCharacters`).
public struct FleetPipelines: Equatable, Sendable {
    public var version: String
    public var mqtt: [StreamClass: [OperatorSpec]]
    /// Named pipelines for the socket (origin `.fleet`); empty when the message has none.
    public var pipelines: [NamedPipeline]

    /// At most this many named pipelines in one version.
    public static let maxPipelines = 64

    /// A fleet message (and the copy saved of it) is at most this many bytes; a longer one is refused
    /// before it is parsed.
    public static let maxMessageBytes = 64 << 10

    /// A refusal is at most this many characters, and what it quotes of the message is escaped
    /// (`shownInMessage`): it goes into the retained status and the log, whatever the message held.
    public static let maxRefusalCharacters = 512

    /// What a version is, as refusals say it.
    public static let versionRule = "1–64 printable ASCII characters without spaces or quotation marks, e.g. \"2026-11-25.1\""

    /// Whether `version` follows `versionRule`: 1–64 bytes from `!` to `~` but `"`, so it stands in a log
    /// line, a topic and a file as it is.
    public static func validVersion(_ version: String) -> Bool {
        (1...64).contains(version.utf8.count) && version.isVisibleASCII && !version.contains("\"")
    }

    public init(version: String, mqtt: [StreamClass: [OperatorSpec]], pipelines: [NamedPipeline] = []) {
        self.version = version
        self.mqtt = mqtt
        self.pipelines = pipelines
    }

    /// Why a fleet message is refused; `version` when the message named one (as shown, escaped and cut to 64
    /// characters when it is not a valid one).
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var version: String?
        public var message: String
        public var description: String { message }

        /// `fleet pipelines "VERSION": why`, bounded and escaped however much of the message `why` quotes.
        init(version: String?, _ why: String) {
            let shown = version?.shownInMessage(limit: 64)
            self.version = shown
            message = "fleet pipelines\(shown.map { " \"\($0)\"" } ?? ""): \(why)".shownInMessage(limit: FleetPipelines.maxRefusalCharacters)
        }
    }

    /// This version refused because `held`, which the config or a local client defined, has the name of one
    /// of its pipelines: the fleet never replaces those.
    public func refusal(heldBy held: NamedPipeline) -> Refusal {
        let by = held.origin == .config ? "in the config file" : "by a local client (?PIPELINE=)"
        return Refusal(version: version, "pipelines.\(held.name): defined \(by) on this device; the fleet may not replace it")
    }

    /// The refusal of a message of `size` bytes, over `maxMessageBytes`: it is not read (the MQTT client
    /// does not even copy it).
    public static func refusal(size: Int) -> Refusal {
        Refusal(version: nil, "the message is \(size) bytes; at most \(maxMessageBytes) (\(maxMessageBytes >> 10) KiB)")
    }

    /// Reads a payload; nil for an empty one (back to the config). `classes` are those the door publishes.
    /// One over `maxMessageBytes` is refused before it is read, and one with a key twice, at any depth, as a
    /// socket request is (`JSONValue.repeatedKey`).
    public static func parse(_ payload: [UInt8], classes: Set<StreamClass>) -> Result<FleetPipelines?, Refusal> {
        if payload.isEmpty { return .success(nil) }
        guard payload.count <= maxMessageBytes else { return .failure(refusal(size: payload.count)) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .failure(Refusal(version: nil, "not UTF-8 text")) }
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch { return .failure(Refusal(version: nil, "not JSON: \(error)")) }
        guard case .map(let entries) = value else { return .failure(Refusal(version: nil, "not a JSON object")) }
        let versions = entries.filter { $0.0 == "version" }
        let version = versions.count == 1 ? versions[0].1.string : nil
        func refuse(_ why: String) -> Result<FleetPipelines?, Refusal> { .failure(Refusal(version: version, why)) }
        if let repeated = value.repeatedKey { return refuse(repeated) }
        guard let version, validVersion(version) else { return refuse("\"version\" is required: \(versionRule)") }
        if let other = entries.first(where: { $0.0 != "version" && $0.0 != "mqtt" && $0.0 != "pipelines" }) {
            return refuse("unknown key \"\(other.0.shownInMessage(limit: 40))\"; allowed: version, mqtt, pipelines")
        }
        guard value["mqtt"] != nil || value["pipelines"] != nil else {
            return refuse("\"mqtt\" (chains by class, e.g. {\"TPV\":[{\"op\":\"throttle\",\"interval\":60}]}) or \"pipelines\" (named pipelines) is required")
        }
        var chains: [StreamClass: [OperatorSpec]] = [:]
        var named: [NamedPipeline] = []
        do throws(OperatorSpecError) {
            if let mqtt = value["mqtt"] { chains = try NamedPipeline.chains(mqtt, path: "mqtt") }
            if let pipelines = value["pipelines"] {
                guard case .map(let list) = pipelines else {
                    return refuse("pipelines: expected an object of named pipelines, e.g. {\"coarse\":{\"TPV\":[{\"op\":\"deadband\",\"meters\":50}]}}, got \(pipelines.shown)")
                }
                guard list.count <= maxPipelines else { return refuse("pipelines: \(list.count) named pipelines; at most \(maxPipelines)") }
                for (name, value) in list {
                    guard NamedPipeline.validName(name) else {
                        return refuse("pipelines.\(name.shownInMessage(limit: 40)): not a pipeline name: a–z, 0–9, _ and -, up to 32 characters")
                    }
                    let c = try NamedPipeline.chains(value, path: "pipelines.\(name)")
                    guard !c.isEmpty else { return refuse("pipelines.\(name): no chains; give at least one class, e.g. \"TPV\":[{\"op\":\"throttle\",\"interval\":5}]") }
                    named.append(NamedPipeline(name: name, chains: c, origin: .fleet))
                }
            }
        } catch {
            return refuse(error.message)
        }
        if let other = chains.keys.first(where: { !classes.contains($0) }) {
            return refuse("mqtt.\(other.rawValue): the MQTT door publishes \(classes.map(\.rawValue).sorted().joined(separator: ", ")) only")
        }
        return .success(FleetPipelines(version: version, mqtt: chains, pipelines: named))
    }
}
