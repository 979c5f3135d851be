/// A UTC instant as gpsd reports it: whole seconds since the Unix epoch plus nanoseconds.
public struct GPSTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var seconds: Int64
    public var nanoseconds: Int32

    @inlinable public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    @inlinable public init(unixTime: Double) {
        let whole = unixTime.rounded(.down)
        self.seconds = Int64(whole)
        self.nanoseconds = Int32(((unixTime - whole) * 1e9).rounded())
        if nanoseconds >= 1_000_000_000 { seconds += 1; nanoseconds -= 1_000_000_000 }
    }

    @inlinable public var unixTime: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

    /// This instant moved by `offset` nanoseconds (either way), exactly: no detour through a `Double` of the whole time.
    @inlinable public func adding(nanoseconds offset: Int64) -> GPSTimestamp {
        let ns = Int64(nanoseconds) + offset
        let carry = ns >= 0 ? ns / 1_000_000_000 : (ns - 999_999_999) / 1_000_000_000
        return GPSTimestamp(seconds: seconds + carry, nanoseconds: Int32(ns - carry * 1_000_000_000))
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }

    /// ISO 8601 in UTC with milliseconds, as gpsd writes it: `2024-05-01T12:00:00.000Z`.
    public var iso8601: String {
        var b: [UInt8] = []
        appendISO8601(to: &b)
        return String(decoding: b, as: UTF8.self)
    }

    /// `iso8601`'s bytes, appended (this runs for every TPV, SKY and ATT). Years outside 0…9999 are
    /// written with as many digits as they need.
    @inlinable public func appendISO8601<Sink: ByteSink & ~Copyable>(to b: inout Sink) {
        let (year, month, day, hour, minute, second) = CivilTime.fields(unixSeconds: seconds)
        let millis = Int(nanoseconds / 1_000_000)
        if (0...9999).contains(year) {
            // The usual case: 24 bytes in fixed places, built on the stack and appended at once.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { p in
                func two(_ v: Int, _ i: Int) {
                    p[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v / 10)
                    p[i + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                }
                two(year / 100, 0); two(year % 100, 2); p[4] = UInt8(ascii: "-"); two(month, 5); p[7] = UInt8(ascii: "-")
                two(day, 8); p[10] = UInt8(ascii: "T"); two(hour, 11); p[13] = UInt8(ascii: ":"); two(minute, 14)
                p[16] = UInt8(ascii: ":"); two(second, 17); p[19] = UInt8(ascii: ".")
                p[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis / 100); two(millis % 100, 21); p[23] = UInt8(ascii: "Z")
                b.append(UnsafeBufferPointer(p))
            }
            return
        }
        func put(_ v: Int, _ width: Int) {
            if v < 0 { b.append(UInt8(ascii: "-")) }
            let m = UInt(v.magnitude)
            var w = width
            var limit: UInt = 1
            for _ in 0..<width { limit &*= 10 }
            while m >= limit && w < 20 { w += 1; limit &*= 10 }
            b.appendDigits(m, width: w)
        }
        put(year, 4); b.append(UInt8(ascii: "-")); put(month, 2); b.append(UInt8(ascii: "-")); put(day, 2)
        b.append(UInt8(ascii: "T")); put(hour, 2); b.append(UInt8(ascii: ":")); put(minute, 2)
        b.append(UInt8(ascii: ":")); put(second, 2); b.append(UInt8(ascii: "."))
        put(millis, 3); b.append(UInt8(ascii: "Z"))
    }

    /// Parses gpsd's `YYYY-MM-DDTHH:MM:SS[.fff…]Z`.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20, b.last == UInt8(ascii: "Z"), b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":") else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r { let d = Int(b[i]) - 48; guard (0...9).contains(d) else { return nil }; v = v * 10 + d }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
              let mi = num(14..<16), let s = num(17..<19), (1...12).contains(mo), (1...31).contains(d),
              h < 24, mi < 60, s <= 60 else { return nil }
        var nanos = 0
        if b.count > 20 {
            guard b[19] == UInt8(ascii: "."), b.count - 21 <= 9, b.count - 21 >= 1,
                  let frac = num(20..<(b.count - 1)) else { return nil }
            nanos = frac
            for _ in 0..<(9 - (b.count - 21)) { nanos *= 10 }
        } else if b[19] != UInt8(ascii: "Z") {
            return nil
        }
        let days = CivilTime.daysFromCivil(year: y, month: mo, day: d)
        self.seconds = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s)
        self.nanoseconds = Int32(nanos)
    }

    public var description: String { iso8601 }
}

/// Proleptic Gregorian calendar arithmetic (Howard Hinnant's days_from_civil / civil_from_days).
public enum CivilTime {
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    @inlinable public static func fields(unixSeconds: Int64) -> (Int, Int, Int, Int, Int, Int) {
        var days = Int(unixSeconds / 86_400)
        var rem = Int(unixSeconds % 86_400)
        if rem < 0 { rem += 86_400; days -= 1 }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, rem / 3600, (rem % 3600) / 60, rem % 60)
    }
}

/// gpsd's fix mode (`mode` in a TPV).
public enum FixMode: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case notSeen = 0, noFix = 1, twoD = 2, threeD = 3

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .notSeen: return "not seen"
        case .noFix: return "no fix"
        case .twoD: return "2D"
        case .threeD: return "3D"
        }
    }
}

/// One time-position-velocity report (gpsd's `TPV`). Every measured field is optional:
/// gpsd leaves out what the receiver did not send, and so do we.
public struct GPSFix: Equatable, Sendable {
    public var device: String?
    public var mode: FixMode
    /// gpsd's `status` (1 fix, 2 DGPS, 3 RTK fixed, …); nil when gpsd does not say.
    public var status: Int?
    public var time: GPSTimestamp?
    public var ept: Double?
    public var latitude: Double?
    public var longitude: Double?
    /// Height above the WGS84 ellipsoid, metres.
    public var altHAE: Double?
    /// Height above mean sea level, metres.
    public var altMSL: Double?
    public var epx: Double?
    public var epy: Double?
    public var epv: Double?
    /// Course over ground, degrees from true north.
    public var track: Double?
    public var magneticTrack: Double?
    public var magneticVariation: Double?
    /// Speed over ground, m/s.
    public var speed: Double?
    public var climb: Double?
    public var eps: Double?
    public var epd: Double?
    public var epc: Double?
    public var geoidSeparation: Double?
    /// Estimated horizontal position error, metres (gpsd's `eph`).
    public var eph: Double?
    public var sep: Double?

    public init(mode: FixMode, time: GPSTimestamp? = nil, latitude: Double? = nil, longitude: Double? = nil) {
        self.mode = mode
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The horizontal error used by the `maxError` filter: `eph`, else the larger of `epx`/`epy` scaled
    /// to a circle, else nil (unknown).
    public var horizontalError: Double? {
        if let eph { return eph }
        if let epx, let epy { return (epx * epx + epy * epy).squareRoot() }
        return nil
    }

    /// True when the fix carries a usable position.
    public var hasPosition: Bool { mode >= .twoD && latitude != nil && longitude != nil }
}
