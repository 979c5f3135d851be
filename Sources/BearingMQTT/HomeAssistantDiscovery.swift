import BearingModel
import BearingWire
/// Home Assistant's MQTT discovery for one device: the retained config messages that make HA list it with a
/// `device_tracker` for its position and `sensor`s for true heading, roll, pitch and satellites used, all
/// in one device block and available while `PREFIX/status` says `online`.
///
/// Topics are `DISCOVERY/COMPONENT/bearing_DEVICE/OBJECT/config` (node id and object id: letters, digits, `_`,
/// `-`). The tracker's position comes from `PREFIX/position`, an attributes object with `latitude`,
/// `longitude` and `gps_accuracy` (metres), which `position(_:)` makes from a fix; the sensors read the
/// device's own ATT and SKY topics with a `value_template` (a field the message lacks gives `None`, which HA
/// shows as unknown).
public struct HomeAssistantDiscovery: Equatable, Sendable {
    public var discoveryPrefix: String
    public var device: String
    public var prefix: String
    public var version: String

    public init(discoveryPrefix: String = "homeassistant", device: String, prefix: String, version: String = Release.version) {
        self.discoveryPrefix = discoveryPrefix
        self.device = device
        self.prefix = prefix
        self.version = version
    }

    /// The topic HA announces itself on (`online` when it starts): the configs are sent again then.
    public var birthTopic: String { "\(discoveryPrefix)/status" }
    /// The tracker's attributes topic.
    public var positionTopic: String { "\(prefix)/position" }

    var node: String { "bearing_" + String(device.map { $0 == "-" ? "_" : $0 }) }

    /// Every config message: (topic, payload), all retained.
    public var configs: [(topic: String, payload: String)] {
        let availability: [(String, JSONValue)] = [
            ("availability_topic", .string("\(prefix)/status")),
            ("payload_available", .string("online")),
            ("payload_not_available", .string("offline")),
        ]
        let deviceBlock: JSONValue = .map([
            ("identifiers", .list([.string(node)])),
            ("name", .string("Bearing \(device)")),
            ("manufacturer", .string("Bearing")),
            ("model", .string("GPS and compass agent")),
            ("sw_version", .string(version)),
        ])
        let origin: JSONValue = .map([("name", .string("Bearing")), ("sw", .string(version))])
        func config(_ component: String, _ object: String, _ name: String, _ fields: [(String, JSONValue)]) -> (topic: String, payload: String) {
            let entries: [(String, JSONValue)] = [("name", .string(name)), ("unique_id", .string("\(node)_\(object)"))]
                + fields + availability + [("device", deviceBlock), ("origin", origin)]
            return ("\(discoveryPrefix)/\(component)/\(node)/\(object)/config", JSONValue.map(entries).json)
        }
        // A heading wraps at 360°: `measurement_angle` (HA 2025.4 on) gives it circular statistics. Roll and
        // pitch stay within ±180° and ±90°: `measurement`. No device class fits (`wind_direction` is the only
        // one in degrees).
        func angle(_ object: String, _ name: String, _ field: String, stateClass: String, icon: String) -> (topic: String, payload: String) {
            config("sensor", object, name, [
                ("state_topic", .string("\(prefix)/att")),
                ("value_template", .string("{{ value_json.\(field) | default('None') }}")),
                ("unit_of_measurement", .string("°")),
                ("state_class", .string(stateClass)),
                ("suggested_display_precision", .number(1)),
                ("icon", .string(icon)),
            ])
        }
        return [
            config("device_tracker", "position", "Position", [
                ("json_attributes_topic", .string(positionTopic)),
                ("source_type", .string("gps")),
                ("icon", .string("mdi:crosshairs-gps")),
            ]),
            angle("heading", "True heading", "heading", stateClass: "measurement_angle", icon: "mdi:compass"),
            angle("roll", "Roll", "roll", stateClass: "measurement", icon: "mdi:horizontal-rotate-clockwise"),
            angle("pitch", "Pitch", "pitch", stateClass: "measurement", icon: "mdi:rotate-right"),
            // Online calibration's judgement (ATT's Bearing field `mag_q`; absent with it off: None).
            config("sensor", "compass_quality", "Compass quality", [
                ("state_topic", .string("\(prefix)/att")),
                ("value_template", .string("{{ value_json.mag_q | default('None') }}")),
                ("device_class", .string("enum")),
                ("options", .list(["good", "fair", "poor", "uncalibrated", "unknown"].map { .string($0) })),
                ("icon", .string("mdi:compass-rose")),
            ]),
            config("sensor", "satellites_used", "Satellites used", [
                ("state_topic", .string("\(prefix)/sky")),
                ("value_template", .string("{{ value_json.uSat | default('None') }}")),
                ("state_class", .string("measurement")),
                ("icon", .string("mdi:satellite-variant")),
            ]),
        ]
    }

    /// The tracker's attributes for a fix with a position (nil without one): `gps_accuracy` is gpsd's `eph`
    /// (horizontal, 95 %), else the larger of `epx` and `epy`, else 0.
    public static func position(_ fix: GPSFix) -> String? {
        guard fix.hasPosition, let lat = fix.latitude, let lon = fix.longitude else { return nil }
        let accuracy = fix.eph ?? [fix.epx, fix.epy].compactMap { $0 }.max() ?? 0
        return JSONValue.map([("latitude", .number(lat)), ("longitude", .number(lon)), ("gps_accuracy", .number((accuracy * 10).rounded() / 10))]).json
    }
}
