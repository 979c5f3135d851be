import BearingModel
/// What a client watches: gpsd's `?WATCH` fields plus Bearing's extensions (`classes`, `pipeline`,
/// `pipelines`). New per-client options are added as optional fields, so existing clients keep working;
/// unknown fields are refused by name, as gpsd does.
public struct WatchOptions: Equatable, Sendable {
    public var enable: Bool = false
    public var json: Bool = false
    /// gpsd's flag for PPS and TOFF objects.
    public var pps: Bool = false
    /// The object classes to send (`TPV`, `SKY`, `STATE`, …); nil means all but the opt-in ones.
    public var classes: Set<String>? = nil
    /// A named pipeline whose chains replace the defaults for the classes it defines.
    public var pipeline: String? = nil
    /// This client's own chains, each starting from the unfiltered stream of its class.
    public var pipelines: [StreamClass: [OperatorSpec]] = [:]

    public init(enable: Bool = false, json: Bool = false, classes: Set<String>? = nil, pps: Bool = false,
                pipeline: String? = nil, pipelines: [StreamClass: [OperatorSpec]] = [:]) {
        self.enable = enable
        self.json = json
        self.classes = classes
        self.pps = pps
        self.pipeline = pipeline
        self.pipelines = pipelines
    }

    /// Whether an object of `className` goes to this client. Raw `MAG` samples go only to clients that
    /// list them (at the sensor rate they would swamp a plain gpsd client); PPS and TOFF, as in gpsd, to
    /// clients that set `pps` or list them.
    public func wants(_ className: String) -> Bool {
        guard enable && json else { return false }
        if let classes { return classes.contains(className) }
        if className == "PPS" || className == "TOFF" { return pps }
        return !WatchOptions.optInClasses.contains(className)
    }

    /// The classes Bearing publishes, for validating `classes`.
    public static let publishedClasses: Set<String> = Set(StreamClass.allCases.map(\.rawValue))
        .union(["STATE", "OVERFLOW", "MAG", "CALIBRATION"])
    /// Classes sent only when `classes` names them.
    public static let optInClasses: Set<String> = ["MAG"]

    /// Applies a partial `?WATCH={…}`: the fields it names change, the rest stay.
    public func applying(_ change: WatchChange) -> WatchOptions {
        var o = self
        if let v = change.enable { o.enable = v }
        if let v = change.json { o.json = v }
        if let v = change.pps { o.pps = v }
        if let v = change.classes { o.classes = v }
        if let v = change.pipeline { o.pipeline = v }
        if let v = change.pipelines { o.pipelines = v }
        // gpsd: `{"enable":true}` alone means JSON.
        if change.enable == true, change.json == nil { o.json = true }
        return o
    }
}

/// The fields one `?WATCH={…}` names; nil fields leave the client's options as they are.
public struct WatchChange: Equatable, Sendable {
    public var enable: Bool?
    public var json: Bool?
    public var pps: Bool?
    public var classes: Set<String>??
    /// `.some(nil)` (`"pipeline":null`) goes back to the default chains.
    public var pipeline: String??
    public var pipelines: [StreamClass: [OperatorSpec]]?

    public init(enable: Bool? = nil, json: Bool? = nil, pps: Bool? = nil, classes: Set<String>?? = nil,
                pipeline: String?? = nil, pipelines: [StreamClass: [OperatorSpec]]? = nil) {
        self.enable = enable
        self.json = json
        self.pps = pps
        self.classes = classes
        self.pipeline = pipeline
        self.pipelines = pipelines
    }

    /// The request's JSON object (what `BearingClient` sends).
    public var requestJSON: String {
        var e: [(String, JSONValue)] = []
        if let enable { e.append(("enable", .bool(enable))) }
        if let json { e.append(("json", .bool(json))) }
        if let pps { e.append(("pps", .bool(pps))) }
        if let classes { e.append(("classes", classes.map { .list($0.sorted().map(JSONValue.string)) } ?? .null)) }
        if let pipeline { e.append(("pipeline", pipeline.map(JSONValue.string) ?? .null)) }
        if let pipelines {
            e.append(("pipelines", .map(pipelines.keys.sorted().map { ($0.rawValue, .list(pipelines[$0]!.map(\.value))) })))
        }
        return JSONValue.map(e).json
    }
}

/// A named set of chains: defined in the config, at run time by `?PIPELINE`, or by the fleet
/// (`FleetPipelines`), computed once for every client that subscribes to it. Only its origin may change it.
public struct NamedPipeline: Equatable, Sendable {
    public enum Origin: String, Sendable { case config, client, fleet }
    public var name: String
    public var chains: [StreamClass: [OperatorSpec]]
    public var origin: Origin

    public init(name: String, chains: [StreamClass: [OperatorSpec]], origin: Origin) {
        self.name = name
        self.chains = chains
        self.origin = origin
    }

    /// Names are short identifiers, so they can stand in file names, logs and errors.
    public static func validName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 32 && s.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
    }

    /// Reads `{"TPV":[…],"ATT":[…]}` (`classes` of a request, `pipelines.NAME` of the config), checking
    /// each chain against the operator table; `path` names where it stands in errors.
    public static func chains(_ value: JSONValue, path: String, skipping: Set<String> = []) throws(OperatorSpecError) -> [StreamClass: [OperatorSpec]] {
        guard case .map(let entries) = value else {
            throw OperatorSpecError("\(path): expected an object of chains by class such as {\"TPV\":[{\"op\":\"throttle\",\"interval\":5}]}, got \(value.shown)")
        }
        var out: [StreamClass: [OperatorSpec]] = [:]
        for (key, v) in entries where !skipping.contains(key) {
            guard let c = StreamClass(rawValue: key) else {
                throw OperatorSpecError("\(path).\(key.shownInMessage(limit: 40)): not a class with a chain; allowed: \(StreamClass.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let chain = try OperatorSpec.chain(v, path: "\(path).\(key)")
            try OperatorSpec.validate(chain, for: c, path: "\(path).\(key)")
            out[c] = chain
        }
        return out
    }
}

/// One request line from a client, parsed.
public enum ClientRequest: Equatable, Sendable {
    /// nil: `?WATCH;` asks for the current options.
    case watch(WatchChange?)
    case version
    case devices
    case poll
    /// `?CALIBRATION;` reports the calibration in force; `?CALIBRATION={"reload":true};` reloads the file first.
    case calibration(reload: Bool)
    /// `?PIPELINES;` lists the default and named chains.
    case pipelines
    /// `?PIPELINE={"name":"slow","TPV":[…]};` defines (or replaces) a named pipeline.
    case definePipeline(NamedPipeline)
    /// `?PIPELINE={"name":"slow","delete":true};`
    case deletePipeline(String)
    /// `?BLACKBOX;` asks for the black box's ring as a recording file (UNIX socket only).
    case blackBox
    /// `?CALIBRATION={"points":true};`: the CALIBRATION object with what it was learnt from: online calibration's
    /// points and history, the deviation curve in force, the observations from driving.
    case calibrationPoints
    /// `?CALIBRATION={"online":"lock"};` (`unlock`, `reset`): an action on online calibration (privileged).
    case onlineCalibration(OnlineCalibrationAction)
    /// `?BLACKBOX={"save":true};`: save the ring into the black box's directory (privileged).
    case saveBlackBox
    /// `?HEALTH;`: the sources, the doors and their readers, the black box.
    case health
    /// `?SWING;` (how a swing goes), `?SWING={"action":"start"};` (`stop`: solve and apply; `cancel`): a GNSS
    /// swing run by the daemon (privileged but for the status).
    case swing(SwingAction)
}

/// What a client asks of the daemon's swing.
public enum SwingAction: String, Sendable, CaseIterable {
    case status, start, stop, cancel
}

/// What a privileged client may do to online calibration at run time.
public enum OnlineCalibrationAction: String, Sendable, CaseIterable {
    /// Keep the calibration in force and stop learning (as `calibration.auto: locked`) until unlocked or restarted.
    case lock
    /// Learn again (as `calibration.auto: track`).
    case unlock
    /// Forget what was learnt: back to the calibration file's (or none), learning from the start.
    case reset
}

public struct ClientRequestError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

extension ClientRequest {
    /// Parses one request such as `?WATCH={"enable":true,"json":true};`.
    public static func parse(_ line: Substring) throws(ClientRequestError) -> ClientRequest {
        var text = line.drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        while let last = text.last, last == " " || last == "\t" || last == "\r" || last == "\n" || last == ";" { text = text.dropLast() }
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
        switch name {
        case "WATCH":
            guard let argument else { return .watch(nil) }
            return .watch(try parseWatch(try object(argument, "WATCH")))
        case "SWING":
            guard let argument else { return .swing(.status) }
            return try parseSwing(try object(argument, "SWING"))
        case "BLACKBOX" where argument != nil:
            return try parseBlackBox(try object(argument!, "BLACKBOX"))
        case "VERSION", "DEVICES", "POLL", "PIPELINES", "BLACKBOX", "HEALTH":
            guard argument == nil else { throw ClientRequestError(message: "\(name) takes no argument; send ?\(name);") }
            switch name {
            case "VERSION": return .version
            case "DEVICES": return .devices
            case "POLL": return .poll
            case "BLACKBOX": return .blackBox
            case "HEALTH": return .health
            default: return .pipelines
            }
        case "PIPELINE":
            guard let argument else {
                throw ClientRequestError(message: "PIPELINE: expected {\"name\":\"…\",\"TPV\":[…]}; ?PIPELINES; lists them")
            }
            return try parsePipeline(try object(argument, "PIPELINE"))
        case "CALIBRATION":
            guard let argument else { return .calibration(reload: false) }
            return try parseCalibration(try object(argument, "CALIBRATION"))
        default:
            let printable = String(name.prefix(32)).unicodeScalars.map { $0.value >= 0x20 && $0.value < 0x7f ? String($0) : "?" }.joined()
            throw ClientRequestError(message: "Unrecognized request '\(printable)'")
        }
    }

    static func object(_ argument: Substring, _ request: String) throws(ClientRequestError) -> [(String, JSONValue)] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(argument)
        } catch {
            throw ClientRequestError(message: "\(request): invalid JSON: \(error)")
        }
        guard case .map(let entries) = value else {
            throw ClientRequestError(message: "\(request) takes a JSON object, got \(value.shown)")
        }
        if let repeated = value.repeatedKey { throw ClientRequestError(message: "\(request): \(repeated)") }
        return entries
    }

    static func parseWatch(_ entries: [(String, JSONValue)]) throws(ClientRequestError) -> WatchChange {
        var change = WatchChange()
        for (key, value) in entries {
            switch key {
            case "class":
                guard value.string == "WATCH" else { throw ClientRequestError(message: "WATCH: \"class\" must be \"WATCH\"") }
            case "enable": change.enable = try boolean(key, value)
            case "json": change.json = try boolean(key, value)
            case "pps": change.pps = try boolean(key, value)
            case "nmea", "raw":
                if value.bool == true || (value.number.map { $0 != 0 } ?? false) {
                    throw ClientRequestError(message: "WATCH: \(key) output is not available from bearing; use \"json\":true")
                }
            case "scaled", "timing", "split24":
                _ = try boolean(key, value)
            case "device", "remote":
                guard value.string != nil else { throw ClientRequestError(message: "WATCH: \"\(key)\" must be a string") }
            case "classes":
                if value == .null { change.classes = .some(nil); continue }
                guard case .list(let items) = value, !items.isEmpty, items.allSatisfy({ $0.string != nil }) else {
                    throw ClientRequestError(message: "WATCH: \"classes\" must be a non-empty array of class names")
                }
                let list = items.compactMap(\.string)
                if let unknown = list.first(where: { !WatchOptions.publishedClasses.contains($0) }) {
                    throw ClientRequestError(message: "WATCH: unknown class \(JSONValue.string(unknown).shown) in \"classes\"; known: \(WatchOptions.publishedClasses.sorted().joined(separator: ", "))")
                }
                change.classes = .some(Set(list))
            case "pipeline":
                if value == .null { change.pipeline = .some(nil); continue }
                guard let name = value.string, NamedPipeline.validName(name) else {
                    throw ClientRequestError(message: "WATCH: \"pipeline\" must be a pipeline name (a–z, 0–9, _ and -, up to 32) or null; ?PIPELINES; lists them")
                }
                change.pipeline = .some(name)
            case "pipelines":
                do {
                    change.pipelines = try NamedPipeline.chains(value, path: "pipelines")
                } catch {
                    throw ClientRequestError(message: "WATCH: \(error.message)")
                }
            default:
                throw ClientRequestError(message: "WATCH: unknown attribute \(JSONValue.string(key).shown)")
            }
        }
        return change
    }

    static func parsePipeline(_ entries: [(String, JSONValue)]) throws(ClientRequestError) -> ClientRequest {
        let object = JSONValue.map(entries)
        guard let name = object["name"]?.string, NamedPipeline.validName(name) else {
            throw ClientRequestError(message: "PIPELINE: \"name\" is required: a–z, 0–9, _ and -, up to 32 characters")
        }
        if let delete = object["delete"] {
            guard try boolean("delete", delete, request: "PIPELINE") else {
                throw ClientRequestError(message: "PIPELINE: \"delete\" can only be true")
            }
            if let other = entries.first(where: { $0.0 != "name" && $0.0 != "delete" && $0.0 != "class" }) {
                throw ClientRequestError(message: "PIPELINE: \"\(other.0)\" does not go with \"delete\"")
            }
            return .deletePipeline(name)
        }
        if let c = object["class"], c.string != "PIPELINE" {
            throw ClientRequestError(message: "PIPELINE: \"class\" must be \"PIPELINE\"")
        }
        do throws(OperatorSpecError) {
            let chains = try NamedPipeline.chains(object, path: "PIPELINE", skipping: ["name", "class"])
            guard !chains.isEmpty else {
                throw OperatorSpecError("PIPELINE: no chains; give at least one class, e.g. \"TPV\":[{\"op\":\"throttle\",\"interval\":5}]")
            }
            return .definePipeline(NamedPipeline(name: name, chains: chains, origin: .client))
        } catch {
            throw ClientRequestError(message: error.message)
        }
    }

    /// `reload`, `points` and `online` ask for different things: at most one of them is true or given.
    static func parseCalibration(_ entries: [(String, JSONValue)]) throws(ClientRequestError) -> ClientRequest {
        var asked: [ClientRequest] = []
        for (key, value) in entries {
            switch key {
            case "class":
                guard value.string == "CALIBRATION" else { throw ClientRequestError(message: "CALIBRATION: \"class\" must be \"CALIBRATION\"") }
            case "reload":
                if try boolean(key, value, request: "CALIBRATION") { asked.append(.calibration(reload: true)) }
            case "points":
                if try boolean(key, value, request: "CALIBRATION") { asked.append(.calibrationPoints) }
            case "online":
                guard let action = value.string.flatMap(OnlineCalibrationAction.init(rawValue:)) else {
                    let allowed = OnlineCalibrationAction.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                    throw ClientRequestError(message: "CALIBRATION: \"online\" must be one of \(allowed), got \(value.shown)")
                }
                asked.append(.onlineCalibration(action))
            default:
                throw ClientRequestError(message: "CALIBRATION: unknown attribute \(JSONValue.string(key).shown)")
            }
        }
        guard asked.count <= 1 else { throw ClientRequestError(message: "CALIBRATION: give one of \"reload\", \"points\" and \"online\" at a time") }
        return asked.first ?? .calibration(reload: false)
    }

    static func parseSwing(_ entries: [(String, JSONValue)]) throws(ClientRequestError) -> ClientRequest {
        var action = SwingAction.status
        for (key, value) in entries {
            switch key {
            case "class":
                guard value.string == "SWING" else { throw ClientRequestError(message: "SWING: \"class\" must be \"SWING\"") }
            case "action":
                guard let a = value.string.flatMap(SwingAction.init(rawValue:)) else {
                    let allowed = SwingAction.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                    throw ClientRequestError(message: "SWING: \"action\" must be one of \(allowed), got \(value.shown)")
                }
                action = a
            default:
                throw ClientRequestError(message: "SWING: unknown attribute \(JSONValue.string(key).shown)")
            }
        }
        return .swing(action)
    }

    static func parseBlackBox(_ entries: [(String, JSONValue)]) throws(ClientRequestError) -> ClientRequest {
        var save = false
        for (key, value) in entries {
            switch key {
            case "class":
                guard value.string == "BLACKBOX" else { throw ClientRequestError(message: "BLACKBOX: \"class\" must be \"BLACKBOX\"") }
            case "save":
                save = try boolean(key, value, request: "BLACKBOX")
            default:
                throw ClientRequestError(message: "BLACKBOX: unknown attribute \(JSONValue.string(key).shown)")
            }
        }
        return save ? .saveBlackBox : .blackBox
    }

    private static func boolean(_ key: String, _ value: JSONValue, request: String = "WATCH") throws(ClientRequestError) -> Bool {
        guard let b = value.bool else { throw ClientRequestError(message: "\(request): \"\(key)\" must be true or false, got \(value.shown)") }
        return b
    }

    /// The request line a client sends (with `;` and newline).
    public var line: String {
        switch self {
        case .watch(nil): return "?WATCH;\n"
        case .watch(let c?): return "?WATCH=\(c.requestJSON);\n"
        case .version: return "?VERSION;\n"
        case .devices: return "?DEVICES;\n"
        case .poll: return "?POLL;\n"
        case .pipelines: return "?PIPELINES;\n"
        case .blackBox: return "?BLACKBOX;\n"
        case .saveBlackBox: return "?BLACKBOX={\"save\":true};\n"
        case .health: return "?HEALTH;\n"
        case .swing(.status): return "?SWING;\n"
        case .swing(let a): return "?SWING={\"action\":\"\(a.rawValue)\"};\n"
        case .calibrationPoints: return "?CALIBRATION={\"points\":true};\n"
        case .onlineCalibration(let a): return "?CALIBRATION={\"online\":\"\(a.rawValue)\"};\n"
        case .calibration(let reload): return reload ? "?CALIBRATION={\"reload\":true};\n" : "?CALIBRATION;\n"
        case .definePipeline(let p):
            var e: [(String, JSONValue)] = [("name", .string(p.name))]
            e += p.chains.keys.sorted().map { ($0.rawValue, .list(p.chains[$0]!.map(\.value))) }
            return "?PIPELINE=\(JSONValue.map(e).json);\n"
        case .deletePipeline(let name):
            return "?PIPELINE=\(JSONValue.map([("name", .string(name)), ("delete", .bool(true))]).json);\n"
        }
    }
}
