import BearingCore
import BearingIO
import Foundation
import Logging
import Yams

/// Everything `bearing run` can be told, with defaults. See the README's config reference.
public struct AgentConfig: Equatable, Sendable {
    public struct Socket: Equatable, Sendable {
        public var path: String = AgentConfig.defaultSocketPath()
        public var mode: UInt32 = 0o660
        public var maxClients: Int = 64
        /// Messages queued per client before messages for that client are dropped.
        public var clientQueue: Int = 256
    }

    public struct Log: Equatable, Sendable {
        public var level: Logger.Level = .info
        /// NDJSON file receiving every published object; nil for none.
        public var dataLog: String? = nil
    }

    public var gpsd = GPSDClient.Configuration()
    public var socket = Socket()
    public var tpvPipeline: [OperatorSpec] = AgentConfig.defaultTPVPipeline
    public var skyPipeline: [OperatorSpec] = AgentConfig.defaultSKYPipeline
    public var log = Log()

    public init() {}

    public static let defaultTPVPipeline: [OperatorSpec] = [
        .minMode(.twoD), .maxError(meters: 500), .dedupe(.all), .throttle(interval: 1, latest: true),
    ]
    public static let defaultSKYPipeline: [OperatorSpec] = [.dedupe(.all), .throttle(interval: 5, latest: true)]

    /// `$RUNTIME_DIRECTORY/bearing.sock` under systemd, else `/run/bearing/bearing.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty {
            return "\(dir)/bearing.sock"
        }
        return "/run/bearing/bearing.sock"
    }

    /// Switches every filter, de-duplication and throttle off.
    public mutating func makePassthrough() {
        tpvPipeline = []
        skyPipeline = []
    }
}

/// A config error naming the file, line, key, the bad value and what is allowed.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension AgentConfig {
    public static func load(file: String) throws(ConfigError) -> AgentConfig {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ConfigError("\(file): cannot read: \((error as NSError).localizedDescription)")
        }
        return try parse(yaml: text, source: file)
    }

    public static func parse(yaml: String, source: String = "config") throws(ConfigError) -> AgentConfig {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigError("\(source): not valid YAML: \(error)")
        }
        var config = AgentConfig()
        guard let root else { return config }
        let r = ConfigReader(source: source)
        do {
        try r.section(root, "", [
            "gpsd": { node in
                try r.section(node, "gpsd", [
                    "host": { config.gpsd.host = try r.string($0, "gpsd.host", nonEmpty: true) },
                    "port": { config.gpsd.port = try r.int($0, "gpsd.port", 1...65535) },
                    "silence_timeout": { config.gpsd.silenceTimeout = try r.seconds($0, "gpsd.silence_timeout", 0.5...3600) },
                    "retry_initial": { config.gpsd.retryInitial = try r.seconds($0, "gpsd.retry_initial", 0.01...1) },
                    "retry_max": { config.gpsd.retryMax = try r.seconds($0, "gpsd.retry_max", 0.1...60) },
                ])
            },
            "socket": { node in
                try r.section(node, "socket", [
                    "path": { config.socket.path = try r.path($0, "socket.path") },
                    "mode": { config.socket.mode = try r.fileMode($0, "socket.mode") },
                    "max_clients": { config.socket.maxClients = try r.int($0, "socket.max_clients", 1...4096) },
                    "client_queue": { config.socket.clientQueue = try r.int($0, "socket.client_queue", 1...100_000) },
                ])
            },
            "pipeline": { node in
                try r.section(node, "pipeline", [
                    "tpv": { config.tpvPipeline = try r.chain($0, "pipeline.tpv", sky: false) },
                    "sky": { config.skyPipeline = try r.chain($0, "pipeline.sky", sky: true) },
                ])
            },
            "log": { node in
                try r.section(node, "log", [
                    "level": { config.log.level = try r.level($0, "log.level") },
                    "data_log": { config.log.dataLog = try r.optionalPath($0, "log.data_log") },
                ])
            },
        ])
        } catch let e as ConfigError {
            throw e
        } catch {
            throw ConfigError("\(source): \(error)")
        }
        if config.gpsd.retryMax < config.gpsd.retryInitial {
            throw ConfigError("\(source): gpsd.retry_max (\(config.gpsd.retryMax)) must be ≥ gpsd.retry_initial (\(config.gpsd.retryInitial))")
        }
        return config
    }
}

/// Walks a YAML node tree, rejecting unknown keys and bad values with their line.
struct ConfigReader {
    let source: String

    func at(_ node: Node) -> String {
        node.mark.map { "\(source):\($0.line)" } ?? source
    }

    func fail(_ node: Node, _ key: String, _ value: String, _ allowed: String) -> ConfigError {
        ConfigError("\(at(node)): \(key): \(value) is not allowed; \(allowed)")
    }

    func shown(_ node: Node) -> String {
        switch node {
        case .scalar(let s): return "\"\(s.string)\""
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    func section(_ node: Node, _ path: String, _ keys: [String: (Node) throws -> Void]) throws {
        if case .scalar(let s) = node, s.string.isEmpty || node.null != nil { return }
        guard case .mapping(let mapping) = node else {
            throw ConfigError("\(at(node)): \(path.isEmpty ? "the file" : path) must be a mapping of keys, got \(shown(node))")
        }
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            let full = path.isEmpty ? key : "\(path).\(key)"
            guard let handler = keys[key] else {
                throw ConfigError("\(at(keyNode)): unknown key \"\(full)\"; allowed here: \(keys.keys.sorted().joined(separator: ", "))")
            }
            try handler(value)
        }
    }

    func scalar(_ node: Node, _ key: String) throws -> String {
        guard case .scalar(let s) = node else { throw fail(node, key, shown(node), "expected a single value") }
        return s.string
    }

    func string(_ node: Node, _ key: String, nonEmpty: Bool) throws -> String {
        let s = try scalar(node, key)
        if nonEmpty && s.isEmpty { throw fail(node, key, "an empty string", "must not be empty") }
        return s
    }

    func int(_ node: Node, _ key: String, _ range: ClosedRange<Int>) throws -> Int {
        let s = try scalar(node, key)
        guard let v = Int(s), range.contains(v) else {
            throw fail(node, key, "\"\(s)\"", "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    func seconds(_ node: Node, _ key: String, _ range: ClosedRange<Double>) throws -> Double {
        let s = try scalar(node, key)
        guard let v = Double(s), v.isFinite, range.contains(v) else {
            throw fail(node, key, "\"\(s)\"", "seconds from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    func path(_ node: Node, _ key: String) throws -> String {
        let s = try scalar(node, key)
        guard s.hasPrefix("/") || s.hasPrefix("."), !s.contains("\0") else {
            throw fail(node, key, "\"\(s)\"", "an absolute path (or one starting with ./)")
        }
        return s
    }

    func optionalPath(_ node: Node, _ key: String) throws -> String? {
        if node.null != nil { return nil }
        let s = try scalar(node, key)
        if s.isEmpty || s == "none" { return nil }
        return try path(node, key)
    }

    func fileMode(_ node: Node, _ key: String) throws -> UInt32 {
        let s = try scalar(node, key)
        guard s.count >= 3, s.count <= 4, let v = UInt32(s, radix: 8), v <= 0o777, v & 0o600 == 0o600 else {
            throw fail(node, key, "\"\(s)\"", "an octal file mode such as \"0660\", readable and writable by the owner")
        }
        return v
    }

    func level(_ node: Node, _ key: String) throws -> Logger.Level {
        let s = try scalar(node, key)
        guard let level = Logger.Level(rawValue: s.lowercased()) else {
            throw fail(node, key, "\"\(s)\"", "one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }

    func chain(_ node: Node, _ key: String, sky: Bool) throws -> [OperatorSpec] {
        let specs: [OperatorSpec]
        do {
            specs = try OperatorSpec.chain(specValue(node), path: key)
        } catch {
            throw ConfigError("\(at(node)): \(error.message)")
        }
        if sky, let bad = specs.first(where: { !$0.appliesToSky }) {
            throw ConfigError("\(at(node)): \(key): operator \(bad.json) does not apply to SKY; allowed: dedupe (key all or time), throttle")
        }
        return specs
    }

    func specValue(_ node: Node) -> SpecValue {
        switch node {
        case .scalar(let s):
            if node.null != nil { return .null }
            if s.style == .plain {
                if let b = node.bool { return .bool(b) }
                if let d = node.float ?? node.int.map(Double.init) { return .number(d) }
            }
            return .string(s.string)
        case .sequence(let seq): return .list(seq.map(specValue))
        case .mapping(let m): return .map(m.map { ($0.key.string ?? "", specValue($0.value)) })
        case .alias: return .null
        }
    }
}
