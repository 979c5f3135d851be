import BearingI2C
import BearingPOSIX
import BearingYAML
import BearingModel
import BearingWire
import BearingLog
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A config error naming the file, line, key, the bad value and what is allowed.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Walks a YAML node tree, rejecting unknown keys and bad values with their line.
public struct ConfigReader {
    public let source: String
    public init(source: String) { self.source = source }

    public func at(_ node: YAMLNode) -> String {
        "\(source):\(node.mark.line)"
    }

    public func fail(_ node: YAMLNode, _ key: String, _ value: String, _ allowed: String) -> ConfigError {
        ConfigError("\(at(node)): \(key): \(value) is not allowed; \(allowed)")
    }

    public func shown(_ node: YAMLNode) -> String {
        switch node {
        case .scalar(let s, _): return s.string.quoted
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    public func scalar(_ node: YAMLNode, _ key: String) throws -> String {
        guard case .scalar(let s, _) = node else { throw fail(node, key, shown(node), "expected a single value") }
        return s.string
    }

    public func string(_ node: YAMLNode, _ key: String, nonEmpty: Bool) throws -> String {
        let s = try scalar(node, key)
        if nonEmpty && s.isEmpty { throw fail(node, key, "an empty string", "must not be empty") }
        return s
    }

    public func int(_ node: YAMLNode, _ key: String, _ range: ClosedRange<Int>) throws -> Int {
        let s = try scalar(node, key)
        guard let v = Int(s), range.contains(v) else {
            throw fail(node, key, s.quoted, "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    public func seconds(_ node: YAMLNode, _ key: String, _ range: ClosedRange<Double>) throws -> Double {
        try number(node, key, range, "seconds")
    }

    public func path(_ node: YAMLNode, _ key: String) throws -> String {
        let s = try scalar(node, key)
        guard s.hasPrefix("/") || s.hasPrefix("."), !s.hasControlCharacter else {
            throw fail(node, key, s.quoted, "an absolute path (or one starting with ./) without control characters")
        }
        // `./…` is taken from the current directory, as `--socket` is, and kept absolute from here on.
        if s.hasPrefix("/") { return s }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(s).standardized.path
    }

    public func optionalPath(_ node: YAMLNode, _ key: String) throws -> String? {
        if node.isNull { return nil }
        let s = try scalar(node, key)
        if s.isEmpty || s == "none" { return nil }
        return try path(node, key)
    }

    public func fileMode(_ node: YAMLNode, _ key: String) throws -> UInt32 {
        let s = try scalar(node, key)
        guard s.count >= 3, s.count <= 4, let v = UInt32(s, radix: 8), v <= 0o777, v & 0o600 == 0o600 else {
            throw fail(node, key, s.quoted, "an octal file mode such as \"0660\", readable and writable by the owner")
        }
        return v
    }

    public func level(_ node: YAMLNode, _ key: String) throws -> Logger.Level {
        let s = try scalar(node, key)
        guard let level = Logger.Level(rawValue: s.lowercased()) else {
            throw fail(node, key, s.quoted, "one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }

    public func chain(_ node: YAMLNode, _ key: String, stream: StreamClass) throws -> [OperatorSpec] {
        let value = try specValue(node)
        do {
            let specs = try OperatorSpec.chain(value, path: key)
            try OperatorSpec.validate(specs, for: stream, path: key)
            return specs
        } catch {
            throw ConfigError("\(at(node)): \(error.message)")
        }
    }

    /// A door's output that is `true` (on, with `current` or else its default chain), `false` (off: nil) or a
    /// chain of its own; anything else names all three.
    public func switchedChain(_ node: YAMLNode, _ key: String, stream: StreamClass, current: [OperatorSpec]?,
                       default: @autoclosure () -> [OperatorSpec]?) throws -> [OperatorSpec]? {
        guard case .scalar(let s, _) = node, !node.isNull else { return try chain(node, key, stream: stream) }
        guard let on = Self.boolean(s.string) else { throw fail(node, key, shown(node), "true, false or an operator list") }
        return on ? (current ?? `default`()) : nil
    }

    public func namedPipelines(_ node: YAMLNode, _ key: String) throws -> [NamedPipeline] {
        guard case .mapping(let mapping, _) = node else {
            if node.isNull { return [] }
            throw fail(node, key, shown(node), "a mapping of pipeline names to chains by class, e.g. slow: {TPV: [{op: throttle, interval: 5}]}")
        }
        var out: [NamedPipeline] = []
        for (nameNode, value) in mapping {
            let name = nameNode.string ?? ""
            guard NamedPipeline.validName(name) else {
                throw fail(nameNode, key, name.quoted, "pipeline names use a–z, 0–9, _ and -, up to 32 characters")
            }
            let tree = try specValue(value)
            do {
                out.append(NamedPipeline(name: name, chains: try NamedPipeline.chains(tree, path: "\(key).\(name)"), origin: .config))
            } catch {
                throw ConfigError("\(at(value)): \(error.message)")
            }
        }
        return out
    }

    public func hostPort(_ node: YAMLNode, _ key: String) throws -> (host: String, port: Int)? {
        let s = try scalar(node, key)
        if s.isEmpty || s == "none" || node.isNull { return nil }
        guard let hp = HostPort.parse(s) else {
            throw fail(node, key, s.quoted, "HOST:PORT with a numeric address, e.g. 127.0.0.1:2948 or [::1]:2948, or none")
        }
        var probe = in6_addr()
        guard inet_pton(AF_INET, hp.host, &probe) == 1 || inet_pton(AF_INET6, hp.host, &probe) == 1 else {
            throw fail(node, key, s.quoted, "a numeric IPv4 or IPv6 address (no host names), e.g. 127.0.0.1:2948")
        }
        return hp
    }

    public func groupName(_ node: YAMLNode, _ key: String) throws -> String? {
        let s = try scalar(node, key)
        if s.isEmpty || s == "none" || node.isNull { return nil }
        guard s.count <= 32, s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
            throw fail(node, key, s.quoted, "a group name such as bearing")
        }
        return s
    }

    public func users(_ node: YAMLNode, _ key: String) throws -> [String] {
        guard case .sequence(let seq, _) = node else { throw fail(node, key, shown(node), "a list of user names or uids") }
        return try seq.map { n in
            let s = try scalar(n, key)
            guard !s.isEmpty, s.count <= 32, s.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                throw fail(n, key, s.quoted, "a user name or uid")
            }
            return s
        }
    }

    public func bool(_ node: YAMLNode, _ key: String) throws -> Bool {
        guard case .scalar = node, let b = node.bool else { throw fail(node, key, shown(node), "true or false") }
        return b
    }

    public func number(_ node: YAMLNode, _ key: String, _ range: ClosedRange<Double>, _ unit: String) throws -> Double {
        let s = try scalar(node, key)
        guard let v = Double(s), v.isFinite, range.contains(v) else {
            throw fail(node, key, s.quoted, "\(unit) from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }



    /// A mounting orientation from its axes and rotation, the error naming `section` and the node's line.
    public func orientation(_ node: YAMLNode, _ section: String, axes: String, rotation: Vector3 = .zero) throws -> Orientation {
        do { return try Orientation(axes: axes, rollPitchYaw: rotation) } catch {
            throw ConfigError("\(at(node)): \(section).\(error); allowed: three signed axes such as +X-Y-Z forming a rotation")
        }
    }

    public func busPath(_ node: YAMLNode, _ key: String) throws -> String {
        let s = try scalar(node, key)
        guard let path = I2CBusName.path(s) else {
            throw fail(node, key, s.quoted, "a bus device such as /dev/i2c-1, a bus number, simulator, simulator:tumble or simulator:six-position")
        }
        return path
    }

    public func i2cAddress(_ node: YAMLNode, _ key: String) throws -> UInt8? {
        let s = try scalar(node, key).lowercased()
        if s == "auto" { return nil }
        let v = s.hasPrefix("0x") ? Int(s.dropFirst(2), radix: 16) : Int(s)
        guard let v, (0x03...0x77).contains(v) else {
            throw fail(node, key, s.quoted, "a 7-bit address from 0x03 to 0x77 (e.g. 0x1e), or auto")
        }
        return UInt8(v)
    }

    public func numbers(_ node: YAMLNode, _ key: String, count: ClosedRange<Int>) throws -> [Double] {
        guard case .sequence(let seq, _) = node, count.contains(seq.count) else {
            throw fail(node, key, shown(node), "a list of \(count.lowerBound == count.upperBound ? "\(count.lowerBound)" : "\(count.lowerBound) or \(count.upperBound)") numbers")
        }
        return try seq.map { n in
            guard case .scalar(let s, _) = n, let v = Double(s.string), v.isFinite else { throw fail(n, key, shown(n), "a number") }
            return v
        }
    }

    public func rotation(_ node: YAMLNode, _ key: String) throws -> Vector3 {
        let v = try numbers(node, key, count: 3...3)
        return Vector3(v[0], v[1], v[2])
    }

    public func position(_ node: YAMLNode, _ key: String) throws -> Vector3? {
        if node.isNull { return nil }
        if case .scalar(let s, _) = node, s.string == "none" { return nil }
        let v = try numbers(node, key, count: 2...3)
        guard (-90...90).contains(v[0]), (-180...180).contains(v[1]), v.count < 3 || (-1...100).contains(v[2]) else {
            throw fail(node, key, shown(node), "[latitude, longitude] or [latitude, longitude, height km] within -90…90, -180…180, -1…100")
        }
        return Vector3(v[0], v[1], v.count == 3 ? v[2] : 0)
    }

    /// The YAML tree as data for operator specs. At most `budget` nodes are visited: YAML aliases are
    /// shared references, so a few nested ones would otherwise expand to billions of nodes (found by
    /// the config fuzzer: 306 bytes, nine levels of `[*x, *x, …]`).
    public func specValue(_ node: YAMLNode, budget: Int = 10_000) throws -> JSONValue {
        var left = budget
        func convert(_ node: YAMLNode) throws -> JSONValue {
            left -= 1
            if left < 0 {
                throw ConfigError("\(at(node)): more than \(budget) values (YAML aliases expanded); a chain is a short list of operators")
            }
            switch node {
            case .scalar(let s, _):
                if node.isNull { return .null }
                if s.style == .plain {
                    if let b = node.bool { return .bool(b) }
                    if let d = node.float ?? node.int.map(Double.init) { return .number(d) }
                }
                return .string(s.string)
            case .sequence(let seq, _): return .list(try seq.map(convert))
            case .mapping(let m, _): return .map(try m.map { ($0.key.string ?? "", try convert($0.value)) })
            }
        }
        return try convert(node)
    }

    public static func boolean(_ s: String) -> Bool? {
        switch s.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }

    /// Letters, digits, `_` and `-`, 1–64 of them: a name that can stand in topics, ids and labels.
    public static func isName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 64 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) }
    }
}
