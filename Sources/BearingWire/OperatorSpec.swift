import BearingModel
/// The classes whose values flow through operator chains. `ATT` covers both Bearing's compass and an
/// attitude that gpsd reports (a GNSS compass, an NMEA heading sensor); each gets its own chain instance.
public enum StreamClass: String, CaseIterable, Sendable, Comparable, Codable {
    case tpv = "TPV", sky = "SKY", att = "ATT", gst = "GST", pps = "PPS", toff = "TOFF"

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    public static let all = Set(allCases)
    public static func list(_ classes: Set<StreamClass>) -> String {
        classes == all ? "every class" : classes.sorted().map(\.rawValue).joined(separator: ", ")
    }
}

/// One step of a publisher chain, as data. A chain (`[OperatorSpec]`) comes from the config file, a
/// client's WATCH or a named pipeline, and `Pipeline` turns it into OpenCombine operators.
///
/// JSON/YAML form: an object with `op` and the operator's parameters, e.g.
/// `{"op":"throttle","interval":1,"latest":true}`.
public enum OperatorSpec: Equatable, Sendable {
    /// Drop fixes whose mode is below `mode`.
    case minMode(FixMode)
    /// Drop fixes whose horizontal error exceeds `meters`. Fixes without an error estimate pass.
    case maxError(meters: Double)
    /// Drop a value equal to the one before it, compared by `key`.
    case dedupe(DedupeKey)
    /// At most one value per `interval` seconds; `latest` picks the newest value of a window, else the first.
    case throttle(interval: Double, latest: Bool)
    /// Every `every`-th value, starting with the first.
    case sample(every: Int)
    /// A value only once `interval` seconds passed without a newer one (the last of a burst).
    case debounce(interval: Double)
    /// A value only when it moved, turned or changed enough since the last one published, or when
    /// `heartbeat` seconds passed since then.
    case deadband(Deadband)
    /// Keep only the named fields (`class` is always kept).
    case fields([String])
    /// Average the last `samples` compass readings: headings as unit vectors, so 359° and 1° average to 0°.
    case smooth(samples: Int)

    public enum DedupeKey: String, Sendable, CaseIterable {
        /// The whole value.
        case all
        /// The timestamp only: one value per epoch.
        case time
        /// Mode and position only (TPV): a stationary receiver publishes once until it moves.
        case position
    }

    public struct Deadband: Equatable, Sendable {
        public enum Measure: Equatable, Sendable {
            /// Great-circle distance from the last published position (TPV).
            case meters(Double)
            /// Turn from the last published heading (ATT `heading`, else `mheading`; TPV `track`).
            case degrees(Double)
            /// Absolute change of a numeric field.
            case field(String, change: Double)
        }
        public var measure: Measure
        /// Seconds of silence after which the next value is published however little it changed.
        public var heartbeat: Double?
        public init(_ measure: Measure, heartbeat: Double? = nil) {
            self.measure = measure
            self.heartbeat = heartbeat
        }
    }

    public var name: String {
        switch self {
        case .minMode: return "min_mode"
        case .maxError: return "max_error"
        case .dedupe: return "dedupe"
        case .throttle: return "throttle"
        case .sample: return "sample"
        case .debounce: return "debounce"
        case .deadband: return "deadband"
        case .fields: return "fields"
        case .smooth: return "smooth"
        }
    }

    /// The classes this operator (with these parameters) applies to, from the operator table.
    public var classes: Set<StreamClass> {
        let declared = OperatorSpec.table.first { $0.name == name }!.classes
        switch self {
        case .dedupe(.position): return [.tpv]
        case .deadband(let d):
            switch d.measure {
            case .meters: return [.tpv]
            case .degrees: return [.att, .tpv]
            case .field: return declared
            }
        default: return declared
        }
    }

    public func applies(to c: StreamClass) -> Bool { classes.contains(c) }
}

/// One row of the operator table: what an operator does, its parameters and the classes it applies to.
/// Config validation, WATCH validation, `PIPELINES` and docs/operators.md's table all read this.
public struct OperatorInfo: Sendable {
    public var name: String
    public var parameters: String
    public var classes: Set<StreamClass>
    public var summary: String
}

extension OperatorSpec {
    /// The operator table: each operator's classes are declared here and nowhere else.
    public static let table: [OperatorInfo] = [
        OperatorInfo(name: "min_mode", parameters: "mode: 1, 2 or 3", classes: [.tpv],
                     summary: "drop fixes below this mode (1 no fix, 2 2D, 3 3D)"),
        OperatorInfo(name: "max_error", parameters: "meters: > 0", classes: [.tpv],
                     summary: "drop fixes whose horizontal error exceeds this (fixes without one pass)"),
        OperatorInfo(name: "dedupe", parameters: "key: all (default), time, position (TPV only)", classes: StreamClass.all,
                     summary: "drop a value equal to the previous one by this key"),
        OperatorInfo(name: "throttle", parameters: "interval: seconds; latest: true (default) or false", classes: StreamClass.all,
                     summary: "at most one value per interval, the newest (or first) of each window"),
        OperatorInfo(name: "sample", parameters: "every: N ≥ 1", classes: StreamClass.all,
                     summary: "every Nth value, starting with the first"),
        OperatorInfo(name: "debounce", parameters: "interval: seconds", classes: StreamClass.all,
                     summary: "a value once the stream has been quiet this long (the last of a burst)"),
        OperatorInfo(name: "deadband", parameters: "one of meters (TPV), degrees (ATT heading, TPV track), field + change; heartbeat: seconds",
                     classes: StreamClass.all,
                     summary: "publish only after moving, turning or changing at least this much, or after heartbeat seconds"),
        OperatorInfo(name: "fields", parameters: "keep: [field names]", classes: StreamClass.all,
                     summary: "keep only these fields (class always kept)"),
        OperatorInfo(name: "smooth", parameters: "samples: 1–1000", classes: [.att],
                     summary: "moving average of Bearing's compass headings (circular) and field; gpsd's ATT passes unchanged"),
    ]

    public static var names: [String] { table.map(\.name) }

    /// Checks that every operator of `chain` applies to `stream`; the error names the index, the
    /// operator and what is allowed for that class.
    public static func validate(_ chain: [OperatorSpec], for stream: StreamClass, path: String) throws(OperatorSpecError) {
        for (i, spec) in chain.enumerated() {
            if !spec.applies(to: stream) {
                let allowed = table.filter { info in
                    info.classes.contains(stream)
                }.map(\.name).joined(separator: ", ")
                throw OperatorSpecError("\(path)[\(i)]: operator \(spec.name) (\(spec.json)) does not apply to \(stream.rawValue); allowed for \(stream.rawValue): \(allowed)")
            }
            if case .fields(let names) = spec, let known = WireSchema.fields[stream] {
                if let bad = names.first(where: { !known.contains($0) }) {
                    throw OperatorSpecError("\(path)[\(i)].keep: \"\(bad)\" is not a \(stream.rawValue) field; allowed: \(known.joined(separator: ", "))")
                }
            }
            if case .deadband(let d) = spec, case .field(let f, _) = d.measure, let known = WireSchema.numericFields[stream] {
                guard known.contains(f) else {
                    throw OperatorSpecError("\(path)[\(i)].field: \"\(f)\" is not a numeric \(stream.rawValue) field; allowed: \(known.joined(separator: ", "))")
                }
            }
        }
    }
}

/// A parse error naming the operator, the field, the value and what is allowed.
public struct OperatorSpecError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension OperatorSpec {
    /// Reads one spec; `path` names where it stands (e.g. `pipeline.tpv[2]`) in error messages.
    public init(_ value: JSONValue, path: String) throws(OperatorSpecError) {
        guard case .map(let entries) = value else {
            throw OperatorSpecError("\(path): expected an object like {\"op\":\"throttle\",\"interval\":1}, got \(value.shown)")
        }
        guard case .string(let op)? = value["op"] else {
            throw OperatorSpecError("\(path): missing \"op\"; allowed: \(OperatorSpec.names.joined(separator: ", "))")
        }
        let p = "\(path) (\(op))"
        func allow(_ keys: Set<String>) throws(OperatorSpecError) {
            for (k, _) in entries where k != "op" && !keys.contains(k) {
                let allowed = keys.isEmpty ? "none" : keys.sorted().joined(separator: ", ")
                throw OperatorSpecError("\(p).\(k.shownInMessage(limit: 40)): unknown parameter for \(op); allowed: \(allowed)")
            }
        }
        func number(_ key: String) throws(OperatorSpecError) -> Double? {
            switch value[key] {
            case .number(let n)?: return n
            case nil: return nil
            case let other?: throw OperatorSpecError("\(p).\(key): expected a number, got \(other.shown)")
            }
        }
        func required(_ key: String) throws(OperatorSpecError) -> Double {
            guard let n = try number(key) else { throw OperatorSpecError("\(p).\(key): required for \(op)") }
            return n
        }
        func seconds(_ key: String, _ n: Double) throws(OperatorSpecError) -> Double {
            guard n.isFinite, n > 0, n <= 86_400 else {
                throw OperatorSpecError("\(p).\(key): \(JSONValue.number(n).shown) is not allowed; seconds, > 0 and ≤ 86400")
            }
            return n
        }
        func positive(_ key: String, _ n: Double) throws(OperatorSpecError) -> Double {
            guard n.isFinite, n > 0 else { throw OperatorSpecError("\(p).\(key): \(JSONValue.number(n).shown) is not allowed; must be > 0") }
            return n
        }
        func whole(_ key: String, _ n: Double, _ range: ClosedRange<Int>) throws(OperatorSpecError) -> Int {
            guard n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound) else {
                throw OperatorSpecError("\(p).\(key): \(JSONValue.number(n).shown) is not allowed; a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return Int(n)
        }
        switch op {
        case "min_mode":
            try allow(["mode"])
            let n = try required("mode")
            guard let mode = FixMode(rawValue: Int(exactly: n) ?? -1), mode >= .noFix else {
                throw OperatorSpecError("\(p).mode: \(JSONValue.number(n).shown) is not allowed; allowed: 1 (no fix), 2 (2D), 3 (3D)")
            }
            self = .minMode(mode)
        case "max_error":
            try allow(["meters"])
            self = .maxError(meters: try positive("meters", try required("meters")))
        case "dedupe":
            try allow(["key"])
            switch value["key"] {
            case nil: self = .dedupe(.all)
            case .string(let s)?:
                guard let key = DedupeKey(rawValue: s) else {
                    throw OperatorSpecError("\(p).key: \"\(s.shownInMessage(limit: 40))\" is not allowed; allowed: \(DedupeKey.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                self = .dedupe(key)
            case let other?: throw OperatorSpecError("\(p).key: expected a string, got \(other.shown)")
            }
        case "throttle":
            try allow(["interval", "latest"])
            let interval = try seconds("interval", try required("interval"))
            var latest = true
            switch value["latest"] {
            case nil: break
            case .bool(let b)?: latest = b
            case let other?: throw OperatorSpecError("\(p).latest: expected true or false, got \(other.shown)")
            }
            self = .throttle(interval: interval, latest: latest)
        case "sample":
            try allow(["every"])
            self = .sample(every: try whole("every", try required("every"), 1...1_000_000))
        case "debounce":
            try allow(["interval"])
            self = .debounce(interval: try seconds("interval", try required("interval")))
        case "deadband":
            try allow(["meters", "degrees", "field", "change", "heartbeat"])
            let heartbeat = try number("heartbeat").map { n throws(OperatorSpecError) in try seconds("heartbeat", n) }
            let meters = try number("meters"), degrees = try number("degrees")
            let field: String?
            switch value["field"] {
            case nil: field = nil
            case .string(let s)?: field = s
            case let other?: throw OperatorSpecError("\(p).field: expected a field name, got \(other.shown)")
            }
            let given = [meters != nil, degrees != nil, field != nil].filter { $0 }.count
            guard given == 1 else {
                throw OperatorSpecError("\(p): give exactly one of meters, degrees or field (with change); got \(given)")
            }
            if field == nil, value["change"] != nil { throw OperatorSpecError("\(p).change: only with field") }
            if let meters {
                self = .deadband(Deadband(.meters(try positive("meters", meters)), heartbeat: heartbeat))
            } else if let degrees {
                guard degrees.isFinite, degrees > 0, degrees < 180 else {
                    throw OperatorSpecError("\(p).degrees: \(JSONValue.number(degrees).shown) is not allowed; > 0 and < 180")
                }
                self = .deadband(Deadband(.degrees(degrees), heartbeat: heartbeat))
            } else {
                self = .deadband(Deadband(.field(field!, change: try positive("change", try required("change"))), heartbeat: heartbeat))
            }
        case "fields":
            try allow(["keep"])
            guard case .list(let items)? = value["keep"], !items.isEmpty else {
                throw OperatorSpecError("\(p).keep: required, a non-empty list of field names such as [\"time\",\"lat\",\"lon\"]")
            }
            var names: [String] = []
            for (i, item) in items.enumerated() {
                guard case .string(let s) = item, !s.isEmpty else {
                    throw OperatorSpecError("\(p).keep[\(i)]: expected a field name, got \(item.shown)")
                }
                names.append(s)
            }
            self = .fields(names)
        case "smooth":
            try allow(["samples"])
            self = .smooth(samples: try whole("samples", try required("samples"), 1...1000))
        default:
            throw OperatorSpecError("\(path).op: \(JSONValue.string(op).shown) is not an operator; allowed: \(OperatorSpec.names.joined(separator: ", "))")
        }
    }

    /// Reads a chain from a list; `null` is the empty chain.
    public static func chain(_ value: JSONValue, path: String) throws(OperatorSpecError) -> [OperatorSpec] {
        switch value {
        case .null: return []
        case .list(let items):
            guard items.count <= 32 else { throw OperatorSpecError("\(path): \(items.count) operators; at most 32") }
            var out: [OperatorSpec] = []
            for (i, item) in items.enumerated() { out.append(try OperatorSpec(item, path: "\(path)[\(i)]")) }
            return out
        default:
            throw OperatorSpecError("\(path): expected a list of operators, got \(value.shown)")
        }
    }

    /// The spec as data, the inverse of `init(_:path:)`.
    public var value: JSONValue {
        var e: [(String, JSONValue)] = [("op", .string(name))]
        switch self {
        case .minMode(let m): e.append(("mode", .number(Double(m.rawValue))))
        case .maxError(let m): e.append(("meters", .number(m)))
        case .dedupe(let k): e.append(("key", .string(k.rawValue)))
        case .throttle(let i, let l): e += [("interval", .number(i)), ("latest", .bool(l))]
        case .sample(let n): e.append(("every", .number(Double(n))))
        case .debounce(let i): e.append(("interval", .number(i)))
        case .deadband(let d):
            switch d.measure {
            case .meters(let m): e.append(("meters", .number(m)))
            case .degrees(let g): e.append(("degrees", .number(g)))
            case .field(let f, let c): e += [("field", .string(f)), ("change", .number(c))]
            }
            if let h = d.heartbeat { e.append(("heartbeat", .number(h))) }
        case .fields(let names): e.append(("keep", .list(names.map(JSONValue.string))))
        case .smooth(let n): e.append(("samples", .number(Double(n))))
        }
        return .map(e)
    }

    /// The spec's JSON form.
    public var json: String { value.json }

    /// A chain's JSON form.
    public static func json(_ chain: [OperatorSpec]) -> String { JSONValue.list(chain.map(\.value)).json }
}

extension OperatorSpec: Codable {
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        let path = decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        do {
            self = try OperatorSpec(value, path: path.isEmpty ? "operator" : String(path.drop(while: { $0 == "." })))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

extension OperatorSpec {
    /// The operator table as Markdown: docs/operators.md's table is this text (a test keeps them equal).
    public static var markdownTable: String {
        var lines = ["| operator | parameters | applies to | effect |", "|---|---|---|---|"]
        for info in table {
            lines.append("| `\(info.name)` | \(info.parameters) | \(StreamClass.list(info.classes)) | \(info.summary) |")
        }
        return lines.joined(separator: "\n")
    }
}
