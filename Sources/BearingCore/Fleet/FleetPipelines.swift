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
/// An empty payload (the retained message cleared) goes back to the config.
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

    public init(version: String, mqtt: [StreamClass: [OperatorSpec]], pipelines: [NamedPipeline] = []) {
        self.version = version
        self.mqtt = mqtt
        self.pipelines = pipelines
    }

    /// Why a fleet message is refused; `version` when the message named one.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var version: String?
        public var message: String
        public var description: String { message }
    }

    /// This version refused because `held`, which the config or a local client defined, has the name of one
    /// of its pipelines: the fleet never replaces those.
    public func refusal(heldBy held: NamedPipeline) -> Refusal {
        let by = held.origin == .config ? "in the config file" : "by a local client (?PIPELINE=)"
        return Refusal(version: version, message: "fleet pipelines \"\(version)\": pipelines.\(held.name): defined \(by) on this device; the fleet may not replace it")
    }

    /// Reads a payload; nil for an empty one (back to the config). `classes` are those the door publishes.
    public static func parse(_ payload: [UInt8], classes: Set<StreamClass>) -> Result<FleetPipelines?, Refusal> {
        if payload.isEmpty { return .success(nil) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .failure(Refusal(version: nil, message: "fleet pipelines: not UTF-8 text")) }
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch { return .failure(Refusal(version: nil, message: "fleet pipelines: not JSON: \(error)")) }
        guard case .map(let entries) = value else { return .failure(Refusal(version: nil, message: "fleet pipelines: not a JSON object")) }
        let version = value["version"]?.string
        func refuse(_ why: String) -> Result<FleetPipelines?, Refusal> {
            .failure(Refusal(version: version, message: "fleet pipelines\(version.map { " \"\($0.prefix(64))\"" } ?? ""): \(why)"))
        }
        guard let version, !version.isEmpty, version.count <= 64, version.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" }) else {
            return refuse("\"version\" is required: 1–64 printable ASCII characters without spaces, e.g. \"2026-11-25.1\"")
        }
        if let other = entries.first(where: { $0.0 != "version" && $0.0 != "mqtt" && $0.0 != "pipelines" }) {
            return refuse("unknown key \"\(other.0)\"; allowed: version, mqtt, pipelines")
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
                        return refuse("pipelines.\(name.prefix(40)): not a pipeline name: a–z, 0–9, _ and -, up to 32 characters")
                    }
                    guard !named.contains(where: { $0.name == name }) else { return refuse("pipelines.\(name): given twice") }
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
