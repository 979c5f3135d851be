extension StringProtocol {
    /// Whether it has a control character (C0, DEL or C1; NUL among them): what MQTT's strings should not
    /// hold (MQTT 3.1.1 §1.5.3), a C string cannot carry whole (NUL), and a log line should not show.
    public var hasControlCharacter: Bool {
        unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// In double quotes, `"` and `\` escaped and every control character as `\u00XX`: a value as an error
    /// or a log line may quote it.
    public var quoted: String {
        var out = "\""
        for c in unicodeScalars {
            switch c {
            case "\"", "\\": out += "\\\(c)"
            case _ where c.value < 0x20 || (0x7F...0x9F).contains(c.value):
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
