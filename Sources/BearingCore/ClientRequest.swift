import Foundation

/// What a client asks for with `?WATCH={…}`. Field names are gpsd's; `classes` is Bearing's own
/// extension. New per-client options (e.g. an operator chain) are added as new optional fields, so
/// existing clients keep working; unknown fields are refused by name, as gpsd does.
public struct WatchOptions: Equatable, Sendable {
    public var enable: Bool = false
    public var json: Bool = false
    /// The object classes to send (`TPV`, `SKY`, `STATE`, …); nil means all.
    public var classes: Set<String>? = nil

    public init(enable: Bool = false, json: Bool = false, classes: Set<String>? = nil) {
        self.enable = enable
        self.json = json
        self.classes = classes
    }

    /// Whether an object of `className` goes to this client. Raw `MAG` samples go only to clients that
    /// list them: at the sensor rate they would swamp a plain gpsd client.
    public func wants(_ className: String) -> Bool {
        guard enable && json else { return false }
        if let classes { return classes.contains(className) }
        return !WatchOptions.optInClasses.contains(className)
    }

    /// The `WATCH` reply echoing the options in force.
    public var replyJSON: String {
        var w = JSONObjectWriter(class: "WATCH")
        w.bool("enable", enable)
        w.bool("json", json)
        w.bool("nmea", false)
        w.int("raw", 0)
        w.bool("scaled", false)
        w.bool("timing", false)
        w.bool("split24", false)
        w.bool("pps", false)
        if let classes {
            w.raw("classes", "[" + classes.sorted().map(JSONObjectWriter.escaped).joined(separator: ",") + "]")
        }
        return w.finished()
    }

    /// The classes Bearing publishes, for validating `classes`.
    public static let publishedClasses: Set<String> = ["TPV", "SKY", "ATT", "STATE", "OVERFLOW", "MAG", "CALIBRATION"]
    /// Classes sent only when `classes` names them.
    public static let optInClasses: Set<String> = ["MAG"]
}

/// One request line from a client, parsed.
public enum ClientRequest: Equatable, Sendable {
    case watch(WatchOptions?)       // nil: `?WATCH;` asks for the current options
    case version
    case devices
    case poll
    /// `?CALIBRATION;` reports the calibration in force; `?CALIBRATION={"reload":true};` reloads the file first.
    case calibration(reload: Bool)
}

public struct ClientRequestError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

extension ClientRequest {
    /// Parses one line such as `?WATCH={"enable":true,"json":true};`.
    /// `current` is the client's present WATCH state, which a partial WATCH object updates.
    public static func parse(_ line: Substring, current: WatchOptions) throws(ClientRequestError) -> ClientRequest {
        var text = line.trimmingCharacters(in: .whitespacesAndNewlines)[...]
        while text.hasSuffix(";") { text = text.dropLast() }
        guard text.first == "?" else {
            throw ClientRequestError(message: "requests start with '?', e.g. ?WATCH={\"enable\":true,\"json\":true};")
        }
        text = text.dropFirst()
        let name: Substring
        let argument: Substring?
        if let eq = text.firstIndex(of: "=") {
            name = text[..<eq]
            argument = text[text.index(after: eq)...]
        } else {
            name = text
            argument = nil
        }
        let printable = String(name.prefix(32)).unicodeScalars.map { $0.value >= 0x20 && $0.value < 0x7f ? String($0) : "?" }.joined()
        switch name {
        case "WATCH":
            guard let argument else { return .watch(nil) }
            return .watch(try parseWatch(argument, current: current))
        case "VERSION": return .version
        case "DEVICES": return .devices
        case "POLL": return .poll
        case "CALIBRATION":
            guard let argument else { return .calibration(reload: false) }
            return .calibration(reload: try parseCalibration(argument))
        default:
            throw ClientRequestError(message: "Unrecognized request '\(printable)'")
        }
    }

    static func parseWatch(_ argument: Substring, current: WatchOptions) throws(ClientRequestError) -> WatchOptions {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(argument.utf8)) as? [String: Any] else {
                throw ClientRequestError(message: "WATCH takes a JSON object")
            }
            object = parsed
        } catch let e as ClientRequestError {
            throw e
        } catch {
            throw ClientRequestError(message: "WATCH: invalid JSON")
        }
        var options = current
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "class":
                guard value as? String == "WATCH" else { throw ClientRequestError(message: "WATCH: \"class\" must be \"WATCH\"") }
            case "enable":
                options.enable = try boolean(key, value)
            case "json":
                options.json = try boolean(key, value)
            case "nmea", "raw":
                if (value as? Bool == true) || ((value as? Int).map { $0 != 0 } ?? false) {
                    throw ClientRequestError(message: "WATCH: \(key) output is not available from bearing; use \"json\":true")
                }
            case "scaled", "timing", "split24", "pps":
                _ = try boolean(key, value)
            case "device":
                guard value is String else { throw ClientRequestError(message: "WATCH: \"device\" must be a string") }
            case "classes":
                guard let list = value as? [String], !list.isEmpty else {
                    throw ClientRequestError(message: "WATCH: \"classes\" must be a non-empty array of class names")
                }
                let unknown = list.filter { !WatchOptions.publishedClasses.contains($0) }
                guard unknown.isEmpty else {
                    throw ClientRequestError(message: "WATCH: unknown class \(unknown[0]) in \"classes\"; known: \(WatchOptions.publishedClasses.sorted().joined(separator: ", "))")
                }
                options.classes = Set(list)
            default:
                throw ClientRequestError(message: "WATCH: unknown attribute \"\(key)\"")
            }
        }
        if object["enable"] != nil, object["json"] == nil, options.enable { options.json = true }
        return options
    }

    static func parseCalibration(_ argument: Substring) throws(ClientRequestError) -> Bool {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(argument.utf8))) as? [String: Any] else {
            throw ClientRequestError(message: "CALIBRATION: expected a JSON object such as {\"reload\":true}")
        }
        var reload = false
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "class":
                guard value as? String == "CALIBRATION" else { throw ClientRequestError(message: "CALIBRATION: \"class\" must be \"CALIBRATION\"") }
            case "reload":
                reload = try boolean(key, value, request: "CALIBRATION")
            default:
                throw ClientRequestError(message: "CALIBRATION: unknown attribute \"\(key)\"")
            }
        }
        return reload
    }

    private static func boolean(_ key: String, _ value: Any, request: String = "WATCH") throws(ClientRequestError) -> Bool {
        // JSONSerialization gives NSNumber for both booleans and numbers; accept only true/false.
        if let n = value as? NSNumber, CFGetTypeIDIfBoolean(n) { return n.boolValue }
        throw ClientRequestError(message: "\(request): \"\(key)\" must be true or false")
    }
}

@inline(__always)
private func CFGetTypeIDIfBoolean(_ n: NSNumber) -> Bool {
    // On Linux NSNumber(value: true) has objCType "c"; JSON numbers never do.
    String(cString: n.objCType) == "c"
}
