#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds one JSON object in gpsd's style: keys in a fixed order, absent values left out,
/// numbers with gpsd's fixed decimals (printf semantics, so values match gpsd digit for digit).
public struct JSONObjectWriter {
    public private(set) var text: String
    private var first = true

    public init(class className: String) {
        text = "{\"class\":\""
        text.reserveCapacity(256)
        JSONObjectWriter.appendEscaped(className, to: &text)
        text += "\""
        first = false
    }

    public init() { text = "{" }

    private mutating func key(_ k: String) {
        if first { first = false } else { text += "," }
        text += "\""
        text += k
        text += "\":"
    }

    public mutating func string(_ k: String, _ v: String?) {
        guard let v else { return }
        key(k)
        text += "\""
        JSONObjectWriter.appendEscaped(v, to: &text)
        text += "\""
    }

    public mutating func int(_ k: String, _ v: Int?) {
        guard let v else { return }
        key(k)
        text += String(v)
    }

    public mutating func bool(_ k: String, _ v: Bool?) {
        guard let v else { return }
        key(k)
        text += v ? "true" : "false"
    }

    /// A number with `decimals` places; non-finite values are left out (JSON has no NaN).
    public mutating func fixed(_ k: String, _ v: Double?, _ decimals: Int) {
        guard let v, v.isFinite else { return }
        key(k)
        JSONObjectWriter.appendFixed(v, decimals: decimals, to: &text)
    }

    /// A number in the shortest form that round-trips.
    public mutating func number(_ k: String, _ v: Double?) {
        guard let v, v.isFinite else { return }
        key(k)
        text += v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    /// Already-encoded JSON (an array or object).
    public mutating func raw(_ k: String, _ json: String) {
        key(k)
        text += json
    }

    public func finished() -> String { text + "}" }

    public static func appendFixed(_ v: Double, decimals: Int, to out: inout String) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 48) { buf in
            let n = withVaList([Int32(decimals), v]) { vsnprintf(buf.baseAddress!, 48, "%.*f", $0) }
            if n > 0 && n < 48 {
                out += String(decoding: UnsafeRawBufferPointer(start: buf.baseAddress!, count: Int(n)), as: UTF8.self)
            } else {
                out += String(v)
            }
        }
    }

    public static func appendEscaped(_ s: String, to out: inout String) {
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
    }

    public static func escaped(_ s: String) -> String {
        var out = "\""
        appendEscaped(s, to: &out)
        return out + "\""
    }
}
