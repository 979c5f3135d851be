import BearingModel
/// A JSON (or YAML) tree with object keys in their written order: what requests, operator specs and
/// relayed gpsd objects are read from.
public enum JSONValue: Equatable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case list([JSONValue])
    case map([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
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

    /// The value of `key` in an object (the last one when a key repeats); nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.last { $0.0 == key }?.1
    }

    public var string: String? { if case .string(let s) = self { return s }; return nil }
    public var number: Double? { if case .number(let n) = self { return n }; return nil }
    public var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var list: [JSONValue]? { if case .list(let l) = self { return l }; return nil }
    public var entries: [(String, JSONValue)]? { if case .map(let m) = self { return m }; return nil }
    /// A number that is a whole number representable as `Int`.
    public var int: Int? {
        guard case .number(let n) = self, n == n.rounded(), abs(n) < 9.0e15 else { return nil }
        return Int(n)
    }

    /// How the value is named in an error message: short, and never the whole of a large value.
    public var shown: String {
        switch self {
        case .string(let s): return JSONObjectWriter.escaped(s.count > 40 ? String(s.prefix(40)) + "…" : s)
        case .number(let n): return JSONObjectWriter.shortest(n)
        case .bool(let b): return String(b)
        case .null: return "null"
        case .list: return "a list"
        case .map: return "an object"
        }
    }

    /// Why the value is refused when an object in it, at any depth, names a key twice (JSON leaves the
    /// meaning of that open; Bearing takes neither): `"enable" appears twice`, or with the path to it,
    /// `"pipelines.TPV[0].interval" appears twice`. The first in document order; nil when no key repeats.
    /// The one rule for requests on the socket and fleet messages.
    public var repeatedKey: String? {
        guard let steps = repeatedKeySteps() else { return nil }
        let path = steps.reversed().map { $0.shownInMessage(limit: 41) }.joined()
        return "\"\(path.dropFirst(path.hasPrefix(".") ? 1 : 0).shownInMessage(limit: 128))\" appears twice"
    }

    /// The path to the first repeated key, innermost step first (`[".interval", "[0]", ".TPV", ".pipelines"]`);
    /// built only when there is one.
    private func repeatedKeySteps() -> [String]? {
        switch self {
        case .map(let entries):
            var seen = Set<String>()
            for (k, v) in entries {
                if !seen.insert(k).inserted { return ["." + k] }
                if let inner = v.repeatedKeySteps() { return inner + ["." + k] }
            }
            return nil
        case .list(let items):
            for (i, v) in items.enumerated() {
                if let inner = v.repeatedKeySteps() { return inner + ["[\(i)]"] }
            }
            return nil
        default:
            return nil
        }
    }

    /// Compact JSON text.
    public var json: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case .string(let s): out += JSONObjectWriter.escaped(s)
        case .number(let n): out += JSONObjectWriter.shortest(n)
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .list(let items):
            out += "["
            for (i, v) in items.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .map(let entries):
            out += "{"
            for (i, (k, v)) in entries.enumerated() {
                if i > 0 { out += "," }
                out += JSONObjectWriter.escaped(k)
                out += ":"
                v.write(to: &out)
            }
            out += "}"
        }
    }
}

/// Why a text is not the JSON it should be, with the byte offset where reading stopped.
public struct JSONParseError: Error, Equatable, CustomStringConvertible {
    public var message: String
    /// Byte offset in the input.
    public var offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

extension JSONValue {
    /// Parses one JSON value (RFC 8259) that fills `text` but for surrounding whitespace.
    /// Depth is limited (`maxDepth`) so hostile input cannot exhaust the stack; numbers that do not fit a
    /// Double are named as too large rather than turned into infinity.
    public static func parse(_ text: some StringProtocol, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try parse(bytes: Array(text.utf8), maxDepth: maxDepth)
    }

    public static func parse(bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        // A Result out of the closure: Swift 6.0 does not carry a typed throw through `withUnsafeBufferPointer`.
        let outcome: Result<JSONValue, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            var p = JSONParser(buffer, maxDepth: maxDepth)
            do throws(JSONParseError) { return .success(try p.document()) } catch { return .failure(error) }
        }
        return try outcome.get()
    }
}

struct JSONParser {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    let maxDepth: Int

    init(_ b: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.b = b
        self.maxDepth = maxDepth
    }

    func fail(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(message: message, offset: offset ?? i)
    }

    mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func document() throws(JSONParseError) -> JSONValue {
        skipSpace()
        let v = try value(depth: 0)
        skipSpace()
        guard i == b.count else { throw fail("unexpected text after the JSON value") }
        return v
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < maxDepth else { throw fail("nested more than \(maxDepth) deep") }
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected character \(Self.describe(b[i]))")
        }
    }

    static func describe(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16))"
    }

    mutating func literal(_ word: String) throws(JSONParseError) {
        let w = Array(word.utf8)
        let n = w.count
        let start = i
        guard i + n <= b.count else { throw fail("unexpected end of input") }
        for k in 0..<n where b[i + k] != w[k] {
            throw fail("unexpected character \(Self.describe(b[i + k]))", at: start + k)
        }
        i += n
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var entries: [(String, JSONValue)] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .map(entries) }
        while true {
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input inside an object") }
            guard b[i] == UInt8(ascii: "\"") else { throw fail("expected a quoted key, got \(Self.describe(b[i]))") }
            let key = try string()
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':' after key \"\(key.shownInMessage(limit: 40))\"") }
            i += 1
            skipSpace()
            entries.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input inside an object") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return .map(entries) }
            throw fail("expected ',' or '}' in an object, got \(Self.describe(b[i]))")
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .list(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input inside a list") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; return .list(items) }
            throw fail("expected ',' or ']' in a list, got \(Self.describe(b[i]))")
        }
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= b.count else { throw fail("unexpected end of input in a \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw fail("bad hex digit \(Self.describe(c)) in a \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    mutating func string() throws(JSONParseError) -> String {
        let open = i
        i += 1
        var bytes: [UInt8] = []
        var runStart = i
        while true {
            guard i < b.count else { throw fail("unterminated string", at: open) }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: b[runStart..<i]))
                i += 1
                break
            }
            if c < 0x20 { throw fail("control character \(Self.describe(c)) inside a string") }
            if c != UInt8(ascii: "\\") { i += 1; continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: b[runStart..<i]))
            i += 1
            guard i < b.count else { throw fail("unterminated string", at: open) }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): bytes.append(0x22)
            case UInt8(ascii: "\\"): bytes.append(0x5C)
            case UInt8(ascii: "/"): bytes.append(0x2F)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate in a \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("unpaired surrogate in a \\u escape")
                }
                bytes.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
            default:
                throw fail("bad escape \\\(Self.describe(e))", at: i - 2)
            }
            runStart = i
        }
        guard let s = String(validating: bytes, as: UTF8.self) else { throw fail("string is not valid UTF-8", at: open) }
        return s
    }

    mutating func number() throws(JSONParseError) -> Double {
        let start = i
        if b[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.i
            while p.i < p.b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.b[p.i]) { p.i += 1 }
            return p.i - s
        }
        guard i < b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { throw fail("a number needs digits", at: start) }
        if b[i] == UInt8(ascii: "0") { i += 1 } else { _ = digits(&self) }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard digits(&self) > 0 else { throw fail("a number needs digits after '.'", at: start) }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&self) > 0 else { throw fail("a number needs digits in its exponent", at: start) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        guard let v = Double(text) else { throw fail("number \(text.prefix(40)) cannot be read", at: start) }
        guard v.isFinite else { throw fail("number \(text.prefix(40)) is too large to represent", at: start) }
        return v
    }
}

extension JSONValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var entries: [(String, JSONValue)] = []
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                entries.append((key.stringValue, try keyed.decode(JSONValue.self, forKey: key)))
            }
            self = .map(entries)
        } else if var list = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !list.isAtEnd { items.append(try list.decode(JSONValue.self)) }
            self = .list(items)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { self = .null }
            else if let b = try? single.decode(Bool.self) { self = .bool(b) }
            else if let n = try? single.decode(Double.self) { self = .number(n) }
            else { self = .string(try single.decode(String.self)) }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .map(let entries):
            var c = encoder.container(keyedBy: Key.self)
            for (k, v) in entries { try c.encode(v, forKey: Key(stringValue: k)) }
        case .list(let items):
            var c = encoder.unkeyedContainer()
            for v in items { try c.encode(v) }
        case .string(let s): var c = encoder.singleValueContainer(); try c.encode(s)
        case .number(let n): var c = encoder.singleValueContainer(); try c.encode(n)
        case .bool(let b): var c = encoder.singleValueContainer(); try c.encode(b)
        case .null: var c = encoder.singleValueContainer(); try c.encodeNil()
        }
    }
}
