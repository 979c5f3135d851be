/// Chains set by the fleet: a retained message on the fleet topic, read by every device that is told to obey
/// it (`mqtt.fleet_topic`):
///
///     {"version":"2026-11-25.2","mqtt":{"TPV":[{"op":"throttle","interval":60}],"ATT":[…]}}
///
/// `mqtt` holds a chain per class the MQTT door publishes (TPV, ATT, SKY), checked with the same rules as a
/// client's `?PIPELINE=` (`NamedPipeline.chains`); a class it does not name keeps the config's chain, so each
/// version is whole and does not depend on the one before. An empty payload (the retained message cleared)
/// goes back to the config.
public struct FleetPipelines: Equatable, Sendable {
    public var version: String
    public var mqtt: [StreamClass: [OperatorSpec]]

    public init(version: String, mqtt: [StreamClass: [OperatorSpec]]) {
        self.version = version
        self.mqtt = mqtt
    }

    /// Why a fleet message is refused; `version` when the message named one.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var version: String?
        public var message: String
        public var description: String { message }
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
        if let other = entries.first(where: { $0.0 != "version" && $0.0 != "mqtt" && $0.0 != "class" }) {
            return refuse("unknown key \"\(other.0)\"; allowed: version, mqtt")
        }
        guard let mqtt = value["mqtt"] else { return refuse("\"mqtt\" is required: chains by class, e.g. {\"TPV\":[{\"op\":\"throttle\",\"interval\":60}]}") }
        let chains: [StreamClass: [OperatorSpec]]
        do throws(OperatorSpecError) {
            chains = try NamedPipeline.chains(mqtt, path: "mqtt")
        } catch {
            return refuse(error.message)
        }
        if let other = chains.keys.first(where: { !classes.contains($0) }) {
            return refuse("mqtt.\(other.rawValue): the MQTT door publishes \(classes.map(\.rawValue).sorted().joined(separator: ", ")) only")
        }
        return .success(FleetPipelines(version: version, mqtt: chains))
    }
}
