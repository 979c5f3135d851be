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
    /// When set, only these keys are written (a `fields` operator); `class` always is.
    public var keep: Set<String>? = nil

    @inline(__always) private func wanted(_ k: String) -> Bool { keep?.contains(k) ?? true }

    public init(class className: String, keep: Set<String>? = nil) {
        self.keep = keep
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
        guard let v, wanted(k) else { return }
        key(k)
        text += "\""
        JSONObjectWriter.appendEscaped(v, to: &text)
        text += "\""
    }

    public mutating func int(_ k: String, _ v: Int?) {
        guard let v, wanted(k) else { return }
        key(k)
        text += String(v)
    }

    public mutating func bool(_ k: String, _ v: Bool?) {
        guard let v, wanted(k) else { return }
        key(k)
        text += v ? "true" : "false"
    }

    /// A number with `decimals` places; non-finite values are left out (JSON has no NaN).
    public mutating func fixed(_ k: String, _ v: Double?, _ decimals: Int) {
        guard let v, v.isFinite, wanted(k) else { return }
        key(k)
        JSONObjectWriter.appendFixed(v, decimals: decimals, to: &text)
    }

    /// An array of numbers with `decimals` places each; non-finite elements are written as `null`.
    public mutating func fixedArray(_ k: String, _ values: [Double], _ decimals: Int) {
        guard wanted(k) else { return }
        key(k)
        text += "["
        for (i, v) in values.enumerated() {
            if i > 0 { text += "," }
            if v.isFinite { JSONObjectWriter.appendFixed(v, decimals: decimals, to: &text) } else { text += "null" }
        }
        text += "]"
    }

    /// A number in the shortest form that round-trips.
    public mutating func number(_ k: String, _ v: Double?) {
        guard let v, v.isFinite, wanted(k) else { return }
        key(k)
        text += Self.shortest(v)
    }

    /// `v` in the shortest form that round-trips (integers without a fraction); `null` when not finite.
    public static func shortest(_ v: Double) -> String {
        guard v.isFinite else { return "null" }
        return v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    /// Already-encoded JSON (an array or object).
    public mutating func raw(_ k: String, _ json: String) {
        guard wanted(k) else { return }
        key(k)
        text += json
    }

    public func finished() -> String { text + "}" }

    /// `v` with `decimals` places, digit for digit what printf's `%.*f` writes (glibc rounds the exact
    /// binary value to nearest, ties to even). Values below 1e9 with up to 9 places — every field gpsd
    /// writes — are formatted here with exact integer arithmetic; the rest go through `vsnprintf`.
    /// (Going through `withVaList` for every number cost most of an ATT or TPV line's instructions.)
    public static func appendFixed(_ v: Double, decimals: Int, to out: inout String) {
        let a = v.magnitude
        guard v.isFinite, a < 1e9, (0...9).contains(decimals) else { return appendFixedPrintf(v, decimals: decimals, to: &out) }
        var p: UInt64 = 1
        for _ in 0..<decimals { p *= 10 }
        // a = m · 2^-s exactly (a < 1e9 < 2^52 makes the exponent negative).
        let subnormal = a.exponentBitPattern == 0
        let m = subnormal ? a.significandBitPattern : a.significandBitPattern | (1 << 52)
        let s = subnormal ? 1074 : 1075 - Int(a.exponentBitPattern)
        var q: UInt64 = 0
        if m != 0 && s < 128 {
            let n = UInt128(m) * UInt128(p)
            let r = n & ((UInt128(1) << s) - 1)
            let half = UInt128(1) << (s - 1)
            q = UInt64(n >> s)
            if r > half || (r == half && q & 1 == 1) { q += 1 }
        }
        if v.sign == .minus { out += "-" }
        out += String(q / p)
        if decimals > 0 {
            let frac = String(q % p)
            out += "."
            for _ in frac.count..<decimals { out += "0" }
            out += frac
        }
    }

    static func appendFixedPrintf(_ v: Double, decimals: Int, to out: inout String) {
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
        // Most strings (times, device paths, class names) need no escaping: append them whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += s
            return
        }
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
