extension SpecValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var entries: [(String, SpecValue)] = []
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                entries.append((key.stringValue, try keyed.decode(SpecValue.self, forKey: key)))
            }
            self = .map(entries)
        } else if var list = try? decoder.unkeyedContainer() {
            var items: [SpecValue] = []
            while !list.isAtEnd { items.append(try list.decode(SpecValue.self)) }
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

extension OperatorSpec: Codable {
    public init(from decoder: any Decoder) throws {
        let value = try SpecValue(from: decoder)
        let path = decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        do {
            self = try OperatorSpec(value, path: path.isEmpty ? "operator" : String(path.drop(while: { $0 == "." })))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public var specValue: SpecValue {
        var entries: [(String, SpecValue)] = [("op", .string(name))]
        switch self {
        case .minMode(let m): entries.append(("mode", .number(Double(m.rawValue))))
        case .maxError(let m): entries.append(("meters", .number(m)))
        case .dedupe(let k): entries.append(("key", .string(k.rawValue)))
        case .throttle(let i, let l): entries += [("interval", .number(i)), ("latest", .bool(l))]
        case .smooth(let n): entries.append(("samples", .number(Double(n))))
        }
        return .map(entries)
    }

    public func encode(to encoder: any Encoder) throws {
        try specValue.encode(to: encoder)
    }
}
