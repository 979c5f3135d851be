import BearingYAML
import BearingWire

/// One key of a config section, written once: its name as in YAML, what it allows and what it does (for
/// the reference), its default as shown from the section's default value, and how it is read. `read` gets
/// the key's full path (`socket.max_clients`), built from the section's path and the name, for its errors.
/// A section's table is an array of these, in the order the reference lists them.
public struct ConfigKey<Value>: Sendable {
    public typealias Read = @Sendable (ConfigReader, YAMLNode, _ path: String, inout Value) throws -> Void
    /// The sections under a key that is a section itself, for the reference: from the defaults, its path and doc.
    public typealias Subsections = @Sendable (Value, _ path: String, _ doc: String) -> [ConfigSection]

    public let name: String
    /// What the key takes, in words (Markdown: `code` in backticks).
    public let allowed: String
    /// What the key does, one line (Markdown).
    public let doc: String
    /// The default, from the section's default value (Markdown).
    public let shown: @Sendable (Value) -> String
    public let subsections: Subsections
    public let read: Read

    public init(_ name: String, _ allowed: String, _ doc: String, default shown: @escaping @Sendable (Value) -> String,
                subsections: @escaping Subsections = { _, _, _ in [] }, read: @escaping Read) {
        self.name = name
        self.allowed = allowed
        self.doc = doc
        self.shown = shown
        self.subsections = subsections
        self.read = read
    }
}

/// A section as the config reference shows it: its path (`mqtt.tls`; empty for the file's top level), what it
/// is, and its keys.
public struct ConfigSection: Sendable, Equatable {
    public struct Row: Sendable, Equatable {
        /// The key's full path, e.g. `mqtt.tls.ca`.
        public var key: String
        public var allowed: String
        public var shownDefault: String
        public var doc: String
        /// The key is a section of its own, listed after this one.
        public var isSection: Bool
    }

    public var path: String
    public var doc: String
    public var rows: [Row]
}

extension Array {
    /// The reference of a section read at `path` with these keys: its rows, then the sections under them.
    public func reference<Value>(_ path: String, _ doc: String, defaults: Value) -> [ConfigSection] where Element == ConfigKey<Value> {
        var section = ConfigSection(path: path, doc: doc, rows: [])
        var below: [ConfigSection] = []
        for key in self {
            let full = ConfigReader.join(path, key.name)
            let subsections = key.subsections(defaults, full, key.doc)
            section.rows.append(.init(key: full, allowed: key.allowed, shownDefault: key.shown(defaults), doc: key.doc,
                                      isSection: subsections.first?.path == full))
            below += subsections
        }
        return [section] + below
    }
}

extension ConfigKey {
    /// A key that is a section of its own, read with `keys` into the part of the value at `part`.
    public static func section<Part>(_ name: String, _ part: WritableKeyPath<Value, Part> & Sendable, _ keys: [ConfigKey<Part>],
                                     _ doc: String) -> Self {
        section(name, part, keys, doc, begin: { $0 }, end: { $3 })
    }

    /// A section read through a value of its own (`Reading`, e.g. with the nodes its checks name): `begin`
    /// makes that from the part, `end` checks it and gives the part back.
    public static func section<Part, Reading>(_ name: String, _ part: WritableKeyPath<Value, Part> & Sendable, _ keys: [ConfigKey<Reading>],
                                              default shown: String = "", _ doc: String,
                                              begin: @escaping @Sendable (Part) -> Reading,
                                              end: @escaping @Sendable (ConfigReader, YAMLNode, _ path: String, Reading) throws -> Part) -> Self {
        .init(name, "a mapping", doc, default: { _ in shown },
              subsections: { v, path, doc in keys.reference(path, doc, defaults: begin(v[keyPath: part])) }) { r, node, path, v in
            var reading = begin(v[keyPath: part])
            try r.section(node, path, keys, into: &reading)
            v[keyPath: part] = try end(r, node, path, reading)
        }
    }

    /// This key, noting where it stood in the file (for a check made after the whole file is read).
    public func noting(_ at: WritableKeyPath<Value, YAMLNode?> & Sendable) -> Self {
        let read = self.read
        return .init(name, allowed, doc, default: shown, subsections: subsections) { r, node, path, v in
            v[keyPath: at] = node
            try read(r, node, path, &v)
        }
    }

    public static func string(_ name: String, _ part: WritableKeyPath<Value, String> & Sendable, _ doc: String) -> Self {
        .init(name, "non-empty", doc, default: { ConfigShow.code($0[keyPath: part]) }) { r, node, path, v in
            v[keyPath: part] = try r.string(node, path, nonEmpty: true)
        }
    }

    public static func int(_ name: String, _ part: WritableKeyPath<Value, Int> & Sendable, _ range: ClosedRange<Int>, unit: String = "",
                           _ doc: String) -> Self {
        .init(name, "\(range.lowerBound)–\(range.upperBound)\(unit)", doc, default: { ConfigShow.code("\($0[keyPath: part])") }) { r, node, path, v in
            v[keyPath: part] = try r.int(node, path, range)
        }
    }

    /// Seconds within `range`; `allowed` adds to the range in words.
    public static func seconds(_ name: String, _ part: WritableKeyPath<Value, Double> & Sendable, _ range: ClosedRange<Double>,
                               allowed more: String = "", _ doc: String) -> Self {
        .init(name, "\(ConfigShow.range(range)) s\(more)", doc, default: { ConfigShow.code(ConfigShow.number($0[keyPath: part])) }) { r, node, path, v in
            v[keyPath: part] = try r.seconds(node, path, range)
        }
    }

    /// A number within `range`, shown with `unit`; its error names `unitInWords`.
    public static func number(_ name: String, _ part: WritableKeyPath<Value, Double> & Sendable, _ range: ClosedRange<Double>, _ unit: String,
                              _ unitInWords: String, _ doc: String) -> Self {
        .init(name, "\(ConfigShow.range(range)) \(unit)", doc, default: { ConfigShow.code(ConfigShow.number($0[keyPath: part])) }) { r, node, path, v in
            v[keyPath: part] = try r.number(node, path, range, unitInWords)
        }
    }

    public static func number(_ name: String, _ part: WritableKeyPath<Value, Double?> & Sendable, _ range: ClosedRange<Double>, _ unit: String,
                              _ unitInWords: String, default shown: String, _ doc: String) -> Self {
        .init(name, "\(ConfigShow.range(range)) \(unit)", doc, default: { $0[keyPath: part].map { ConfigShow.code(ConfigShow.number($0)) } ?? shown }) {
            r, node, path, v in v[keyPath: part] = try r.number(node, path, range, unitInWords)
        }
    }

    public static func bool(_ name: String, _ part: WritableKeyPath<Value, Bool> & Sendable, allowed: String = "`true`, `false`",
                            _ doc: String) -> Self {
        .init(name, allowed, doc, default: { ConfigShow.code("\($0[keyPath: part])") }) { r, node, path, v in
            v[keyPath: part] = try r.bool(node, path)
        }
    }

    /// A file's path; the default is in words (it follows the environment).
    public static func path(_ name: String, _ part: WritableKeyPath<Value, String> & Sendable, default shown: String, _ doc: String) -> Self {
        .init(name, "a path", doc, default: { _ in shown }) { r, node, path, v in v[keyPath: part] = try r.path(node, path) }
    }

    public static func path(_ name: String, _ part: WritableKeyPath<Value, String?> & Sendable, default shown: String, _ doc: String) -> Self {
        .init(name, "a path", doc, default: { _ in shown }) { r, node, path, v in v[keyPath: part] = try r.path(node, path) }
    }

    /// An operator chain over `stream`.
    public static func chain(_ name: String, _ part: WritableKeyPath<Value, [OperatorSpec]> & Sendable, _ stream: StreamClass,
                             _ doc: String) -> Self {
        .init(name, "operator list over \(stream.rawValue)", doc, default: { ConfigShow.chain($0[keyPath: part]) }) { r, node, path, v in
            v[keyPath: part] = try r.chain(node, path, stream: stream)
        }
    }

    /// An output that is `true` (on: its chain, else `onChain`), `false` (off) or a chain over `stream`.
    public static func switchedChain(_ name: String, _ part: WritableKeyPath<Value, [OperatorSpec]?> & Sendable, _ stream: StreamClass,
                                     default onChain: @escaping @Sendable () -> [OperatorSpec]?, _ doc: String) -> Self {
        .init(name, "`true` (on), `false` (off) or an operator list over \(stream.rawValue)", doc,
              default: { $0[keyPath: part].map(ConfigShow.chain) ?? "off (`true`: \(onChain().map(ConfigShow.chain) ?? "none"))" }) { r, node, path, v in
            v[keyPath: part] = try r.switchedChain(node, path, stream: stream, current: v[keyPath: part], default: onChain())
        }
    }
}

extension ConfigReader {
    /// Reads a section with its table: each key it holds is read into `value`; unknown keys are refused,
    /// naming the ones allowed here.
    public func section<Value>(_ node: YAMLNode, _ path: String, _ keys: [ConfigKey<Value>], into value: inout Value) throws {
        if case .scalar(let s, _) = node, s.string.isEmpty || node.isNull { return }
        guard case .mapping(let mapping, _) = node else {
            throw ConfigError("\(at(node)): \(path.isEmpty ? "the file" : path) must be a mapping of keys, got \(shown(node))")
        }
        for (keyNode, item) in mapping {
            let name = keyNode.string ?? ""
            guard let key = keys.first(where: { $0.name == name }) else {
                throw ConfigError("\(at(keyNode)): unknown key \"\(Self.join(path, name))\"; allowed here: \(keys.map(\.name).sorted().joined(separator: ", "))")
            }
            try key.read(self, item, Self.join(path, name), &value)
        }
    }

    /// A key's full path: `section.name`, or `name` at the top level.
    public static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }
}

/// Values as the config reference shows them (Markdown).
public enum ConfigShow {
    public static func code(_ s: String) -> String { "`\(s)`" }

    /// `5`, `0.5`: a number as it is written in YAML.
    public static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : "\(v)"
    }

    public static func range(_ r: ClosedRange<Double>) -> String { "\(number(r.lowerBound))–\(number(r.upperBound))" }

    /// A chain in YAML's flow form, as it is written in the config: `[{op: throttle, interval: 1, latest: true}]`.
    public static func chain(_ chain: [OperatorSpec]) -> String { code(flow(.list(chain.map(\.value)))) }

    static func flow(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): return s
        case .number(let d): return number(d)
        case .bool(let b): return "\(b)"
        case .null: return "~"
        case .list(let items): return "[\(items.map(flow).joined(separator: ", "))]"
        case .map(let entries): return "{\(entries.map { "\($0.0): \(flow($0.1))" }.joined(separator: ", "))}"
        }
    }
}
