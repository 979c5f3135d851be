import CBearingSys
#if canImport(Glibc)
import Glibc
#endif

/// A value that `String(printf:)` formats.
public protocol PrintfArgument {
    var printfValue: PrintfValue { get }
}

public enum PrintfValue: Sendable {
    case signed(Int64), unsigned(UInt64), real(Double), text(String)

    var signed: Int64 {
        switch self {
        case .signed(let v): return v
        case .unsigned(let v): return Int64(truncatingIfNeeded: v)
        case .real(let v): return v.isFinite ? Int64(v) : 0
        case .text: return 0
        }
    }
    var unsigned: UInt64 { UInt64(truncatingIfNeeded: signed) }
    var real: Double {
        switch self {
        case .signed(let v): return Double(v)
        case .unsigned(let v): return Double(v)
        case .real(let v): return v
        case .text: return .nan
        }
    }
    var text: String {
        switch self {
        case .signed(let v): return String(v)
        case .unsigned(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let s): return s
        }
    }
}

extension Int: PrintfArgument { public var printfValue: PrintfValue { .signed(Int64(self)) } }
extension Int8: PrintfArgument { public var printfValue: PrintfValue { .signed(Int64(self)) } }
extension Int16: PrintfArgument { public var printfValue: PrintfValue { .signed(Int64(self)) } }
extension Int32: PrintfArgument { public var printfValue: PrintfValue { .signed(Int64(self)) } }
extension Int64: PrintfArgument { public var printfValue: PrintfValue { .signed(self) } }
extension UInt: PrintfArgument { public var printfValue: PrintfValue { .unsigned(UInt64(self)) } }
extension UInt8: PrintfArgument { public var printfValue: PrintfValue { .unsigned(UInt64(self)) } }
extension UInt16: PrintfArgument { public var printfValue: PrintfValue { .unsigned(UInt64(self)) } }
extension UInt32: PrintfArgument { public var printfValue: PrintfValue { .unsigned(UInt64(self)) } }
extension UInt64: PrintfArgument { public var printfValue: PrintfValue { .unsigned(self) } }
extension Double: PrintfArgument { public var printfValue: PrintfValue { .real(self) } }
extension Float: PrintfArgument { public var printfValue: PrintfValue { .real(Double(self)) } }
extension String: PrintfArgument { public var printfValue: PrintfValue { .text(self) } }
extension Substring: PrintfArgument { public var printfValue: PrintfValue { .text(String(self)) } }

extension String {
    /// `format` with C's printf conversions (`d i u x X o f F e E g G a A c s %`, flags, width, precision) and
    /// `%@` for text, as Foundation's `String(format:)` did, in the C locale. Numbers go through the C
    /// library's `snprintf`, so digits and rounding are printf's; text is padded to the width in characters.
    /// Bearing's own, so the binary needs no Foundation (and so no ICU: 34 MB of its 66.7 MB).
    public init(printf format: String, _ arguments: any PrintfArgument...) {
        self = Printf.format(format, arguments)
    }
}

enum Printf {
    static func format(_ format: String, _ arguments: [any PrintfArgument]) -> String {
        var out = ""
        var next = 0
        let s = Array(format.unicodeScalars)
        var i = 0
        while i < s.count {
            guard s[i] == "%" else {
                out.unicodeScalars.append(s[i])
                i += 1
                continue
            }
            var spec = "%"
            var flags = ""
            var j = i + 1
            while j < s.count, "-+ 0#".unicodeScalars.contains(s[j]) { flags.unicodeScalars.append(s[j]); j += 1 }
            var width = ""
            while j < s.count, ("0"..."9").contains(s[j]) { width.unicodeScalars.append(s[j]); j += 1 }
            var precision: String?
            if j < s.count, s[j] == "." {
                j += 1
                var p = ""
                while j < s.count, ("0"..."9").contains(s[j]) { p.unicodeScalars.append(s[j]); j += 1 }
                precision = p
            }
            // Length modifiers say nothing here: the argument carries its own width.
            while j < s.count, "hlqLjzt".unicodeScalars.contains(s[j]) { j += 1 }
            guard j < s.count else {
                out.unicodeScalars.append(contentsOf: s[i...])
                break
            }
            let conversion = s[j]
            i = j + 1
            if conversion == "%" {
                out += "%"
                continue
            }
            let value: PrintfValue = next < arguments.count ? arguments[next].printfValue : .text("")
            next += 1
            spec += flags + width + (precision.map { "." + $0 } ?? "")
            switch conversion {
            case "d", "i":
                let v = value.signed
                out += c { bearing_format_signed($0, $1, spec + "lld", v) }
            case "u", "x", "X", "o":
                let v = value.unsigned
                out += c { bearing_format_unsigned($0, $1, spec + "ll" + String(conversion), v) }
            case "f", "F", "e", "E", "g", "G", "a", "A":
                let v = value.real
                out += c { bearing_format_double($0, $1, spec + String(conversion), v) }
            case "c":
                let v = Int32(truncatingIfNeeded: value.signed)
                out += c { bearing_format_char($0, $1, spec + "c", v) }
            default: // "@", "s"
                var text = value.text
                if let precision, let n = Int(precision), text.count > n { text = String(text.prefix(n)) }
                let pad = String(repeating: " ", count: max(0, (Int(width) ?? 0) - text.count))
                out += flags.contains("-") ? text + pad : pad + text
            }
        }
        return out
    }

    /// One conversion of one number through the C library: `format(buffer, size)` is an snprintf.
    private static func c(_ format: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String {
        var capacity = 64
        while true {
            let (n, text) = withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buf -> (Int, String) in
                let n = Int(format(buf.baseAddress!, capacity))
                guard n >= 0, n < capacity else { return (n, "") }
                return (n, UnsafeRawBufferPointer(start: buf.baseAddress, count: n).withMemoryRebound(to: UInt8.self) {
                    String(decoding: $0, as: UTF8.self)
                })
            }
            if n < 0 { return "" }
            if n < capacity { return text }
            capacity = n + 1
        }
    }
}
