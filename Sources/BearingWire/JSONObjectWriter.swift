import BearingModel
import CBearingSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer whose appends are a bounds check and a store: the JSON writer's storage.
/// (`[UInt8].append` also checks uniqueness on every byte, which cost a third of an ATT line.)
struct JSONBytes: ~Copyable, ByteSink {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if count == capacity { grow(to: count + 1) }
        base[count] = byte
        count += 1
    }

    /// Written from the last digit back, straight into the buffer.
    mutating func appendDigits(_ v: UInt, width: Int) {
        let width = min(max(width, 1), 20)
        if count + width > capacity { grow(to: count + width) }
        var v = v
        var i = count + width
        while i > count {
            i -= 1
            base[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
            v /= 10
        }
        count += width
    }

    /// Digits written from the last back, two at a time from a table, the point placed on the way.
    mutating func appendDecimal(_ q: UInt64, decimals: Int) {
        var digits = decimals + 1
        while digits < 20 && q >= Self.powerOf10(digits) { digits += 1 }
        let width = digits + 1
        if count + width > capacity { grow(to: count + width) }
        let pairs = Self.digitPairs.utf8Start
        var q = q
        var p = base + count + width
        var fraction = decimals
        while fraction >= 2 {
            let r = Int(q % 100) &* 2
            q /= 100
            p -= 2
            p[0] = pairs[r]; p[1] = pairs[r &+ 1]
            fraction -= 2
        }
        if fraction == 1 {
            p -= 1
            p[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: q % 10)
            q /= 10
        }
        p -= 1
        p[0] = UInt8(ascii: ".")
        let start = base + count
        while p - start >= 2 {
            let r = Int(q % 100) &* 2
            q /= 100
            p -= 2
            p[0] = pairs[r]; p[1] = pairs[r &+ 1]
        }
        if p > start { p[-1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: q % 10) }
        count += width
    }

    /// "00" to "99", for writing two digits per division.
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// 10ⁿ for n in 0...19 (a table the compiler builds from the switch, not a loop per call).
    static func powerOf10(_ n: Int) -> UInt64 {
        switch n {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        case 18: 1_000_000_000_000_000_000
        default: 10_000_000_000_000_000_000
        }
    }

    /// `,"key":` (the comma unless `first`), the key copied byte by byte (a few bytes: cheaper than memcpy's set-up).
    mutating func appendKey(_ k: StaticString, first: Bool) {
        let n = k.utf8CodeUnitCount
        if count + n + 4 > capacity { grow(to: count + n + 4) }
        var p = base + count
        if !first { p.pointee = UInt8(ascii: ","); p += 1 }
        p.pointee = UInt8(ascii: "\"")
        p += 1
        // One block copy: a byte loop costs about five instructions a byte, and ATT writes 25 keys.
        p.initialize(from: k.utf8Start, count: n)
        p += n
        p[0] = UInt8(ascii: "\"")
        p[1] = UInt8(ascii: ":")
        count = p + 2 - base
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    private mutating func grow(to needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// The bytes, with `last` appended, after `out`'s.
    func append(appending last: UInt8, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
        out.append(last)
    }

    /// The bytes as a `String`, with `last` appended.
    func string(appending last: UInt8) -> String {
        String(unsafeUninitializedCapacity: count + 1) { buffer in
            buffer.baseAddress!.initialize(from: base, count: count)
            buffer[count] = last
            return count + 1
        }
    }
}

/// Builds one JSON object in gpsd's style: keys in a fixed order, absent values left out,
/// numbers with gpsd's fixed decimals (printf semantics, so values match gpsd digit for digit).
///
/// The object is built as UTF-8 bytes and becomes a `String` once, in `finished()`: appending to a
/// `String` piece by piece cost most of an ATT line's instructions (`bench/compass-cost`).
public struct JSONObjectWriter: ~Copyable {
    private var bytes: JSONBytes
    private var first = true
    /// When set, only these keys are written (a `fields` operator); `class` always is.
    public var keep: Set<String>? = nil

    @inline(__always) private func wanted(_ k: StaticString) -> Bool {
        guard let keep else { return true }
        return keep.contains(k.description)
    }

    /// An object of `className`; `seq` (an MQTT message's number) comes right after the class, kept
    /// whatever `keep` says.
    public init(class className: String, keep: Set<String>? = nil, seq: UInt64? = nil) {
        self.keep = keep
        bytes = JSONBytes(capacity: 320)
        bytes.append(#"{"class":""#)
        JSONObjectWriter.appendEscaped(className, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        if let seq {
            bytes.append(#","seq":"#)
            JSONObjectWriter.appendDigits(UInt(seq), to: &bytes)
        }
        first = false
    }

    public init() {
        bytes = JSONBytes(capacity: 64)
        bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ k: StaticString) {
        bytes.appendKey(k, first: first)
        first = false
    }

    public mutating func string(_ k: StaticString, _ v: String?) {
        guard let v, wanted(k) else { return }
        key(k)
        bytes.append(UInt8(ascii: "\""))
        JSONObjectWriter.appendEscaped(v, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func int(_ k: StaticString, _ v: Int?) {
        guard let v, wanted(k) else { return }
        key(k)
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        JSONObjectWriter.appendDigits(v.magnitude, to: &bytes)
    }

    public mutating func bool(_ k: StaticString, _ v: Bool?) {
        guard let v, wanted(k) else { return }
        key(k)
        bytes.append(v ? "true" : "false")
    }

    /// A time as gpsd writes it (`GPSTimestamp.iso8601`), formatted straight into the object.
    public mutating func time(_ k: StaticString, _ v: GPSTimestamp?) {
        guard let v, wanted(k) else { return }
        key(k)
        bytes.append(UInt8(ascii: "\""))
        v.appendISO8601(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A number with `decimals` places; non-finite values are left out (JSON has no NaN).
    public mutating func fixed(_ k: StaticString, _ v: Double?, _ decimals: Int) {
        guard let v, v.isFinite, wanted(k) else { return }
        key(k)
        JSONObjectWriter.appendFixed(v, decimals: decimals, to: &bytes)
    }

    /// An array of four numbers (a quaternion) with `decimals` places each; non-finite elements are written
    /// as `null`. Four parameters, not an array: no heap array per line. (An `InlineArray` would say it
    /// better, but that is Swift 6.2 and Debian 13 has 6.0.3.)
    public mutating func fixedArray(_ k: StaticString, _ a: Double, _ b: Double, _ c: Double, _ d: Double, _ decimals: Int) {
        guard wanted(k) else { return }
        key(k)
        func element(_ v: Double, then separator: Unicode.Scalar) {
            if v.isFinite { JSONObjectWriter.appendFixed(v, decimals: decimals, to: &bytes) } else { bytes.append("null") }
            bytes.append(UInt8(ascii: separator))
        }
        bytes.append(UInt8(ascii: "["))
        element(a, then: ",")
        element(b, then: ",")
        element(c, then: ",")
        element(d, then: "]")
    }

    /// A number in the shortest form that round-trips.
    public mutating func number(_ k: StaticString, _ v: Double?) {
        guard let v, v.isFinite, wanted(k) else { return }
        key(k)
        bytes.append(Self.shortest(v))
    }

    /// `v` in the shortest form that round-trips (integers without a fraction); `null` when not finite.
    public static func shortest(_ v: Double) -> String {
        guard v.isFinite else { return "null" }
        return v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    /// Already-encoded JSON (an array or object).
    public mutating func raw(_ k: StaticString, _ json: String) {
        guard wanted(k) else { return }
        key(k)
        bytes.append(json)
    }

    public consuming func finished() -> String { bytes.string(appending: UInt8(ascii: "}")) }

    /// The object's bytes appended to `out`: for a door that sends bytes (the MQTT spool's line), no `String` between.
    public consuming func finished(appendingTo out: inout [UInt8]) { bytes.append(appending: UInt8(ascii: "}"), to: &out) }

    /// The decimal digits of `v`, most significant first.
    static func appendDigits<Sink: ByteSink & ~Copyable>(_ v: UInt, to out: inout Sink) {
        out.appendDigits(v)
    }

    /// The last `width` (at most 20) decimal digits of `v`, zero-padded on the left.
    static func appendDigits<Sink: ByteSink & ~Copyable>(_ v: UInt, width: Int, to out: inout Sink) {
        out.appendDigits(v, width: width)
    }

    /// `v` with `decimals` places, digit for digit what printf's `%.*f` writes (glibc rounds the exact
    /// binary value to nearest, ties to even). Values below 1e9 with up to 9 places — every field gpsd
    /// writes — are formatted here with exact integer arithmetic; the rest go through libc's `snprintf`.
    /// (Going through `withVaList` for every number cost most of an ATT or TPV line's instructions.)
    public static func appendFixed<Sink: ByteSink & ~Copyable>(_ v: Double, decimals: Int, to out: inout Sink) {
        let a = v.magnitude
        guard v.isFinite, a < 1e9, (0...9).contains(decimals) else { return appendFixedPrintf(v, decimals: decimals, to: &out) }
        let p = JSONBytes.powerOf10(decimals)
        // a = m · 2^-s exactly (a < 1e9 < 2^52 makes the exponent negative).
        let subnormal = a.exponentBitPattern == 0
        let m = subnormal ? a.significandBitPattern : a.significandBitPattern | (1 << 52)
        let s = subnormal ? 1074 : 1075 - Int(a.exponentBitPattern)
        var q: UInt64 = 0
        if decimals <= 3 {
            // m · p < 2^53 · 2^10 fits in 64 bits (most of gpsd's fields have 1–3 places).
            let n = m * p
            if m != 0 && s < 64 {
                let r = n & ((1 << s) - 1)
                let half: UInt64 = 1 << (s - 1)
                q = n >> s
                if r > half || (r == half && q & 1 == 1) { q += 1 }
            }
        } else if m != 0 && s < 128 {
            let n = UInt128(m) * UInt128(p)
            let r = n & ((UInt128(1) << s) - 1)
            let half = UInt128(1) << (s - 1)
            q = UInt64(n >> s)
            if r > half || (r == half && q & 1 == 1) { q += 1 }
        }
        if v.sign == .minus { out.append(UInt8(ascii: "-")) }
        if decimals > 0 { out.appendDecimal(q, decimals: decimals) } else { appendDigits(UInt(q), to: &out) }
    }

    static func appendFixedPrintf<Sink: ByteSink & ~Copyable>(_ v: Double, decimals: Int, to out: inout Sink) {
        var buffer = [CChar](repeating: 0, count: 48)
        let n = bearing_format_fixed(&buffer, 48, Int32(decimals), v)
        let text = n > 0 && n < 48 ? buffer[0..<Int(n)].map { UInt8(bitPattern: $0) } : Array(String(v).utf8)
        for byte in text { out.append(byte) }
    }

    public static func appendEscaped<Sink: ByteSink & ~Copyable>(_ s: String, to out: inout Sink) {
        // Most strings (device paths, status letters) need no escape: one copy then.
        let plain: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        }
        if plain == true {
            var s = s
            s.withUTF8 { out.append($0) }
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "\n"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex: StaticString = "0123456789abcdef"
                for c in "\\u00".utf8 { out.append(c) }
                out.append(hex.utf8Start[Int(byte >> 4)])
                out.append(hex.utf8Start[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
    }

    public static func escaped(_ s: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        appendEscaped(s, to: &out)
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
