import CYAML

/// A composed YAML document: scalars, sequences and mappings with the line each starts on. Aliases are
/// resolved to the node they name (shared, not copied: expanding them is the reader's to bound).
///
/// Read by libyaml's event parser through a C bridge, as libgps and libi2c are. Bearing read its YAML
/// with Yams before; Yams imports all of Foundation, which drags ICU's 34 MB of data into a static binary.
/// The scalar rules below are the ones Yams applied (YAML 1.1: `yes`/`on` are true, `~` is null), so every
/// config and board file reads exactly as it did.
public indirect enum YAMLNode: Sendable {
    case scalar(Scalar, Mark)
    case sequence([YAMLNode], Mark)
    case mapping([(key: YAMLNode, value: YAMLNode)], Mark)

    /// Where a node starts: line and column from 1.
    public struct Mark: Sendable, Equatable {
        public var line: Int
        public var column: Int
        public init(line: Int, column: Int) { self.line = line; self.column = column }
    }

    public struct Scalar: Sendable {
        public enum Style: Sendable { case plain, singleQuoted, doubleQuoted, literal, folded }
        public var string: String
        public var style: Style
        /// An explicit tag (`!!str`, `!custom`), expanded; nil when none was written.
        public var tag: String?
    }

    public var mark: Mark {
        switch self {
        case .scalar(_, let m), .sequence(_, let m), .mapping(_, let m): return m
        }
    }

    public var scalar: Scalar? {
        if case .scalar(let s, _) = self { return s }
        return nil
    }

    /// A scalar's text (nil for a sequence or mapping).
    public var string: String? { scalar?.string }

    /// A plain `""`, `~`, `null`, `Null` or `NULL` (a quoted 'null' is text).
    public var isNull: Bool {
        guard let s = scalar, s.style == .plain, s.tag == nil else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(s.string)
    }

    /// YAML 1.1 booleans: true/yes/on and false/no/off in any case, unless tagged `!!str`.
    public var bool: Bool? {
        guard let s = scalar, s.tag != YAMLNode.stringTag else { return nil }
        switch s.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }

    /// A plain number: decimal, `1_000`, `1e3`, `.inf`, `-.inf`, `.nan`, or sexagesimal `1:30`.
    public var float: Double? {
        guard let s = scalar, s.style == .plain else { return nil }
        switch s.string.lowercased() {
        case ".inf", "+.inf": return .infinity
        case "-.inf": return -.infinity
        case ".nan": return .nan
        default:
            let text = s.string.filter { $0 != "_" }
            if text.contains(":") { return YAMLNode.sexagesimal(text) }
            return Double(text)
        }
    }

    /// A plain integer: decimal, `0x…`, `0o…`, `0b…`, `1_000`, or sexagesimal.
    public var int: Int? {
        guard let s = scalar, s.style == .plain else { return nil }
        var text = s.string.filter { $0 != "_" }
        var sign = 1
        if text.hasPrefix("-") { sign = -1; text.removeFirst() } else if text.hasPrefix("+") { text.removeFirst() }
        let value: Int?
        if text.hasPrefix("0x") { value = Int(text.dropFirst(2), radix: 16) }
        else if text.hasPrefix("0o") { value = Int(text.dropFirst(2), radix: 8) }
        else if text.hasPrefix("0b") { value = Int(text.dropFirst(2), radix: 2) }
        else if text.contains(":") { value = YAMLNode.sexagesimal(text).flatMap { $0 == $0.rounded() ? Int(exactly: $0) : nil } }
        else { value = Int(text) }
        return value.map { $0 * sign }
    }

    static let stringTag = "tag:yaml.org,2002:str"

    private static func sexagesimal(_ text: String) -> Double? {
        var sign = 1.0
        var t = Substring(text)
        if t.hasPrefix("-") { sign = -1; t = t.dropFirst() } else if t.hasPrefix("+") { t = t.dropFirst() }
        var total = 0.0
        for part in t.split(separator: ":", omittingEmptySubsequences: false) {
            guard let v = Double(part) else { return nil }
            total = total * 60 + v
        }
        return sign * total
    }
}

/// Text that is not YAML: what libyaml found wrong and where.
public struct YAMLError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var problem: String

    public var description: String { "line \(line), column \(column): \(problem)" }
}

extension YAMLNode {
    /// The one document in `text`; nil when it holds none (empty, or only comments). More than one
    /// document, an unknown alias or bad syntax is a `YAMLError`.
    public static func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        var composer = Composer()
        return try composer.compose(text)
    }
}

/// libyaml's events folded into nodes.
private struct Composer {
    /// Open collections, innermost last.
    enum Open {
        case sequence([YAMLNode], YAMLNode.Mark, anchor: String?)
        case mapping([(key: YAMLNode, value: YAMLNode)], pendingKey: YAMLNode?, YAMLNode.Mark, anchor: String?)
    }
    var stack: [Open] = []
    var anchors: [String: YAMLNode] = [:]
    var documents: [YAMLNode?] = []

    mutating func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw YAMLError(line: 0, column: 0, problem: "libyaml could not start a parser (out of memory)")
        }
        defer { yaml_parser_delete(&parser) }
        // libyaml reads from this buffer until the parser is deleted (a closure over the array's own buffer
        // would lose the typed throws on Swift 6.0).
        let input = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, text.utf8.count))
        defer { input.deallocate() }
        let count = input.initialize(fromContentsOf: text.utf8)
        yaml_parser_set_input_string(&parser, input.baseAddress, count)
        var current: YAMLNode?
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { throw Composer.failure(parser) }
            defer { yaml_event_delete(&event) }
            let mark = YAMLNode.Mark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return current
            case YAML_DOCUMENT_START_EVENT:
                if !documents.isEmpty {
                    throw YAMLError(line: mark.line, column: mark.column, problem: "a second document; the file must hold one")
                }
            case YAML_DOCUMENT_END_EVENT:
                documents.append(current)
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let value = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length), as: UTF8.self)
                let style: YAMLNode.Scalar.Style
                switch s.style {
                case YAML_SINGLE_QUOTED_SCALAR_STYLE: style = .singleQuoted
                case YAML_DOUBLE_QUOTED_SCALAR_STYLE: style = .doubleQuoted
                case YAML_LITERAL_SCALAR_STYLE: style = .literal
                case YAML_FOLDED_SCALAR_STYLE: style = .folded
                default: style = .plain
                }
                let node = YAMLNode.scalar(.init(string: value, style: style, tag: Composer.text(s.tag)), mark)
                if let anchor = Composer.text(s.anchor) { anchors[anchor] = node }
                try add(node, &current)
            case YAML_ALIAS_EVENT:
                let name = Composer.text(event.data.alias.anchor) ?? ""
                guard let node = anchors[name] else {
                    throw YAMLError(line: mark.line, column: mark.column, problem: "unknown alias *\(name)")
                }
                try add(node, &current)
            case YAML_SEQUENCE_START_EVENT:
                stack.append(.sequence([], mark, anchor: Composer.text(event.data.sequence_start.anchor)))
            case YAML_MAPPING_START_EVENT:
                stack.append(.mapping([], pendingKey: nil, mark, anchor: Composer.text(event.data.mapping_start.anchor)))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let node: YAMLNode
                let anchor: String?
                switch stack.removeLast() {
                case .sequence(let items, let m, let a): (node, anchor) = (.sequence(items, m), a)
                case .mapping(let pairs, _, let m, let a): (node, anchor) = (.mapping(pairs, m), a)
                }
                if let anchor { anchors[anchor] = node }
                try add(node, &current)
            default: // stream start, and the parser's own bookkeeping
                break
            }
        }
    }

    /// Puts a finished node into the innermost open collection, or makes it the document's root.
    mutating func add(_ node: YAMLNode, _ root: inout YAMLNode?) throws(YAMLError) {
        guard let open = stack.popLast() else {
            root = node
            return
        }
        switch open {
        case .sequence(var items, let m, let a):
            items.append(node)
            stack.append(.sequence(items, m, anchor: a))
        case .mapping(var pairs, let key, let m, let a):
            if let key {
                pairs.append((key, node))
                stack.append(.mapping(pairs, pendingKey: nil, m, anchor: a))
            } else {
                stack.append(.mapping(pairs, pendingKey: node, m, anchor: a))
            }
        }
    }

    static func text(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        p.map { String(cString: $0) }
    }

    static func failure(_ parser: yaml_parser_t) -> YAMLError {
        let problem = parser.problem.map { String(cString: $0) } ?? "not YAML"
        let context = parser.context.map { " \(String(cString: $0))" } ?? ""
        return YAMLError(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1,
                         problem: problem + context)
    }
}
