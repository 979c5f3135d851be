/// One step of a publisher chain, as data. A chain (`[OperatorSpec]`) comes from the config file or,
/// later, from a client's WATCH request, and `FixPipeline`/`SkyPipeline` turn it into Combine operators.
///
/// JSON/YAML form: an object with `op` and the operator's parameters, e.g.
/// `{"op":"throttle","interval":1,"latest":true}`.
public enum OperatorSpec: Equatable, Sendable {
    /// Drop fixes whose mode is below `mode` (TPV only).
    case minMode(FixMode)
    /// Drop fixes whose horizontal error exceeds `meters` (TPV only). Fixes without an error estimate pass.
    case maxError(meters: Double)
    /// Drop a value equal to the one before it, compared by `key`.
    case dedupe(DedupeKey)
    /// At most one value per `interval` seconds; `latest` picks the newest value of a window, else the first.
    case throttle(interval: Double, latest: Bool)
    /// Average the last `samples` compass readings (ATT only): headings as unit vectors, so 359° and 1°
    /// average to 0°, never 180°.
    case smooth(samples: Int)

    public enum DedupeKey: String, Sendable, CaseIterable {
        /// The whole value.
        case all
        /// The timestamp only: one value per epoch.
        case time
        /// Mode and position only (TPV): a stationary receiver publishes once until it moves.
        case position
    }

    public var name: String {
        switch self {
        case .minMode: return "min_mode"
        case .maxError: return "max_error"
        case .dedupe: return "dedupe"
        case .throttle: return "throttle"
        case .smooth: return "smooth"
        }
    }

    public static let names = ["min_mode", "max_error", "dedupe", "throttle", "smooth"]

    /// Whether the operator applies to SKY streams (filters on fix quality do not).
    public var appliesToSky: Bool {
        switch self {
        case .minMode, .maxError, .smooth: return false
        case .dedupe(let key): return key != .position
        case .throttle: return true
        }
    }

    /// Whether the operator applies to TPV streams.
    public var appliesToTPV: Bool {
        if case .smooth = self { return false }
        return true
    }

    /// Whether the operator applies to ATT (compass) streams.
    public var appliesToATT: Bool {
        switch self {
        case .minMode, .maxError: return false
        case .dedupe(let key): return key == .time
        case .throttle, .smooth: return true
        }
    }
}

/// A parse error naming the operator, the field, the value and what is allowed.
public struct OperatorSpecError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A loosely typed tree (from JSON or YAML) that operator specs are read from.
public enum SpecValue: Equatable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case list([SpecValue])
    case map([(String, SpecValue)])

    public static func == (a: SpecValue, b: SpecValue) -> Bool {
        switch (a, b) {
        case let (.string(x), .string(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.bool(x), .bool(y)): return x == y
        case (.null, .null): return true
        case let (.list(x), .list(y)): return x == y
        case let (.map(x), .map(y)): return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    var shown: String {
        switch self {
        case .string(let s): return "\"\(s)\""
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .bool(let b): return String(b)
        case .null: return "null"
        case .list: return "a list"
        case .map: return "a mapping"
        }
    }
}

extension OperatorSpec {
    /// Reads one spec; `path` names where it stands (e.g. `gps.fix_pipeline[2]`) in error messages.
    public init(_ value: SpecValue, path: String) throws(OperatorSpecError) {
        guard case .map(let entries) = value else {
            throw OperatorSpecError("\(path): expected a mapping like {op: throttle, interval: 1}, got \(value.shown)")
        }
        var fields: [String: SpecValue] = [:]
        for (k, v) in entries { fields[k] = v }
        guard case .string(let op)? = fields["op"] else {
            throw OperatorSpecError("\(path): missing \"op\"; allowed: \(OperatorSpec.names.joined(separator: ", "))")
        }
        func allow(_ keys: Set<String>) throws(OperatorSpecError) {
            for (k, _) in entries where k != "op" && !keys.contains(k) {
                let allowed = keys.isEmpty ? "none" : keys.sorted().joined(separator: ", ")
                throw OperatorSpecError("\(path).\(k): unknown parameter for \(op); allowed: \(allowed)")
            }
        }
        func number(_ key: String, default def: Double? = nil) throws(OperatorSpecError) -> Double {
            switch fields[key] {
            case .number(let n)?: return n
            case nil: if let def { return def }
                throw OperatorSpecError("\(path).\(key): required for \(op)")
            case let other?: throw OperatorSpecError("\(path).\(key): expected a number, got \(other.shown)")
            }
        }
        switch op {
        case "min_mode":
            try allow(["mode"])
            let n = try number("mode")
            guard let mode = FixMode(rawValue: Int(n)), Double(mode.rawValue) == n, mode >= .noFix else {
                throw OperatorSpecError("\(path).mode: \(SpecValue.number(n).shown) is not allowed; allowed: 1 (no fix), 2 (2D), 3 (3D)")
            }
            self = .minMode(mode)
        case "max_error":
            try allow(["meters"])
            let m = try number("meters")
            guard m.isFinite, m > 0 else { throw OperatorSpecError("\(path).meters: \(SpecValue.number(m).shown) is not allowed; must be > 0") }
            self = .maxError(meters: m)
        case "dedupe":
            try allow(["key"])
            switch fields["key"] {
            case nil: self = .dedupe(.all)
            case .string(let s)?:
                guard let key = DedupeKey(rawValue: s) else {
                    throw OperatorSpecError("\(path).key: \"\(s)\" is not allowed; allowed: \(DedupeKey.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                self = .dedupe(key)
            case let other?: throw OperatorSpecError("\(path).key: expected a string, got \(other.shown)")
            }
        case "throttle":
            try allow(["interval", "latest"])
            let interval = try number("interval")
            guard interval.isFinite, interval > 0, interval <= 86_400 else {
                throw OperatorSpecError("\(path).interval: \(SpecValue.number(interval).shown) is not allowed; seconds, > 0 and ≤ 86400")
            }
            var latest = true
            switch fields["latest"] {
            case nil: break
            case .bool(let b)?: latest = b
            case let other?: throw OperatorSpecError("\(path).latest: expected true or false, got \(other.shown)")
            }
            self = .throttle(interval: interval, latest: latest)
        case "smooth":
            try allow(["samples"])
            let n = try number("samples")
            guard n == n.rounded(), n >= 1, n <= 1000 else {
                throw OperatorSpecError("\(path).samples: \(SpecValue.number(n).shown) is not allowed; a whole number from 1 to 1000")
            }
            self = .smooth(samples: Int(n))
        default:
            throw OperatorSpecError("\(path).op: \"\(op)\" is not an operator; allowed: \(OperatorSpec.names.joined(separator: ", "))")
        }
    }

    /// Reads a chain from a list.
    public static func chain(_ value: SpecValue, path: String) throws(OperatorSpecError) -> [OperatorSpec] {
        switch value {
        case .null: return []
        case .list(let items):
            var out: [OperatorSpec] = []
            for (i, item) in items.enumerated() { out.append(try OperatorSpec(item, path: "\(path)[\(i)]")) }
            return out
        default:
            throw OperatorSpecError("\(path): expected a list of operators, got \(value.shown)")
        }
    }

    /// The spec's JSON form, the inverse of `init(_:path:)`.
    public var json: String {
        var w = JSONObjectWriter()
        w.string("op", name)
        switch self {
        case .minMode(let m): w.int("mode", m.rawValue)
        case .maxError(let m): w.number("meters", m)
        case .dedupe(let k): w.string("key", k.rawValue)
        case .throttle(let i, let l): w.number("interval", i); w.bool("latest", l)
        case .smooth(let n): w.int("samples", n)
        }
        return w.finished()
    }
}
