/// String helpers that Foundation would give, kept here so the binary needs only FoundationEssentials.
extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns, and without a leading byte-order mark.
    public func trimmingWhitespace() -> SubSequence {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\r" || f == "\u{FEFF}" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}

extension Unicode.Scalar {
    /// A control character as messages treat it: C0, DEL, C1, U+2028 and U+2029 (NUL among them). A C string
    /// cannot carry it whole (NUL), MQTT's strings should not hold it (MQTT 3.1.1 §1.5.3), and a log line or
    /// terminal must not show it raw.
    public var isMessageControl: Bool {
        value < 0x20 || (0x7F..<0xA0).contains(value) || value == 0x2028 || value == 0x2029
    }
}

extension StringProtocol {
    /// Whether every byte is printable ASCII other than the space (`!` to `~`): what stands in a log line, a
    /// topic, a client id and a file as it is.
    public var isVisibleASCII: Bool { utf8.allSatisfy { (0x21...0x7E).contains($0) } }

    /// Whether it has a control character (`isMessageControl`).
    public var hasControlCharacter: Bool { unicodeScalars.contains { $0.isMessageControl } }

    /// In double quotes, `"` and `\` escaped and every control character as JSON escapes it: a value as an
    /// error or a log line may quote it.
    public var quoted: String {
        var out = String.UnicodeScalarView()
        out.append("\"")
        for s in unicodeScalars { out.append(contentsOf: Self.escaped(s, quotes: true)) }
        out.append("\"")
        return String(out)
    }

    /// The string as a message quotes it (an error, a log line, a status topic): control characters
    /// escaped as JSON escapes them (`\n`, `\u001b`), and at most `limit` characters, the last of them `…`
    /// when it is cut. Input quoted so puts neither raw control bytes nor an unbounded length into what it
    /// is quoted in; a string already shown so is unchanged.
    public func shownInMessage(limit: Int = 64) -> String {
        var out = String.UnicodeScalarView()
        var count = 0
        // Where to cut if the whole does not fit: the last point with room left for the `…`.
        var cut: String.UnicodeScalarView.Index? = nil
        for s in unicodeScalars {
            let escaped = Self.escaped(s, quotes: false)
            if cut == nil, count + escaped.count > limit - 1 { cut = out.endIndex }
            count += escaped.count
            if count > limit {
                var shown = String.UnicodeScalarView(out[..<(cut ?? out.endIndex)])
                shown.append("…")
                return String(shown)
            }
            out.append(contentsOf: escaped)
        }
        return String(out)
    }

    /// One scalar as JSON writes it inside a string: controls escaped, and with `quotes` `"` and `\` too.
    private static func escaped(_ s: Unicode.Scalar, quotes: Bool) -> [Unicode.Scalar] {
        switch s.value {
        case 0x0A: return ["\\", "n"]
        case 0x0D: return ["\\", "r"]
        case 0x09: return ["\\", "t"]
        case 0x22 where quotes: return ["\\", "\""]
        case 0x5C where quotes: return ["\\", "\\"]
        case _ where s.isMessageControl:
            let hex = Array("0123456789abcdef".unicodeScalars)
            return ["\\", "u"] + [12, 8, 4, 0].map { hex[Int(s.value >> UInt32($0) & 0xF)] }
        default: return [s]
        }
    }
}
