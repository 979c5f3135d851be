import BearingWire
import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// NMEA 0183 sentence framing: `$`, address, comma-separated fields, `*` and the checksum in hex.
public enum NMEA0183 {
    /// NMEA 0183: at most 82 characters including `$` and CRLF.
    public static let maximumLength = 82

    /// XOR of the bytes between `$` and `*`.
    public static func checksum<S: StringProtocol>(_ body: S) -> UInt8 {
        var sum: UInt8 = 0
        for byte in body.utf8 { sum ^= byte }
        return sum
    }

    /// `$` + address + `,` + fields joined by `,` + `*` + two upper-case hex digits (no CRLF).
    public static func sentence(_ address: String, _ fields: [String]) -> String {
        var body = address
        for field in fields {
            body += ","
            body += field
        }
        let sum = checksum(body)
        let hex: StaticString = "0123456789ABCDEF"
        let digits = [hex.utf8Start[Int(sum >> 4)], hex.utf8Start[Int(sum & 0xF)]]
        return "$" + body + "*" + String(decoding: digits, as: UTF8.self)
    }

    /// `v` with `decimals` places as printf's `%.*f` writes it, except that a value rounding to zero is
    /// written without a minus sign ("0.0", never "-0.0"). Callers keep `v` finite and bounded.
    static func fixed(_ v: Double, _ decimals: Int) -> String {
        var bytes: [UInt8] = []
        JSONObjectWriter.appendFixed(v, decimals: decimals, to: &bytes)
        if bytes.first == UInt8(ascii: "-"),
           bytes.dropFirst().allSatisfy({ $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") }) {
            bytes.removeFirst()
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `v` zero-padded to `width` digits (`v` ≥ 0 and below 10^width).
    static func digits(_ v: Int, _ width: Int) -> String {
        var bytes: [UInt8] = []
        bytes.appendDigits(UInt(v), width: width)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A direction in degrees as 0.0…359.9 (one decimal, in [0, 360) after rounding); "" when not finite.
    static func direction(_ degrees: Double?) -> String {
        guard let degrees, degrees.isFinite else { return "" }
        let text = fixed(Compass.normalize(degrees), 1)
        return text == "360.0" ? "0.0" : text
    }

    /// An angle in degrees wrapped to −180…180 (an equivalent angle, not a clip), one decimal.
    static func signedAngle(_ degrees: Double) -> String {
        fixed(remainder(degrees, 360), 1)
    }

    /// A variation (degrees east +) as magnitude and E/W; both empty when unknown or not finite.
    static func variation(_ degrees: Double?) -> (String, String) {
        guard let degrees, degrees.isFinite else { return ("", "") }
        let wrapped = remainder(degrees, 360)
        let text = fixed(wrapped.magnitude, 1)
        return (text, wrapped < 0 && text != "0.0" ? "W" : "E")
    }
}

/// Which sentences a door sends; raw values are the config names.
public enum NMEA0183SentenceType: String, CaseIterable, Sendable, Codable {
    case hdt = "HDT", hdm = "HDM", hdg = "HDG", rot = "ROT", xdr = "XDR", rmc = "RMC"
}

/// Bearing's attitudes and fixes as NMEA 0183 sentences, without CRLF. Pure: no I/O.
///
/// Every field has a bounded width (angles are wrapped, out-of-range rates and speeds written as unknown),
/// so with a valid talker every sentence fits `NMEA0183.maximumLength` with its CRLF; RMC is the longest,
/// at most 78 characters + CRLF.
public struct NMEA0183Encoder: Sendable, Equatable {
    /// Two upper-case letters. The default `HC` is NMEA's talker for a magnetic compass, which is what
    /// Bearing is. Written as given: configuration checks it with `validTalker`.
    public var talker: String

    public init(talker: String = "HC") { self.talker = talker }

    /// Exactly two characters A–Z.
    public static func validTalker(_ t: String) -> Bool {
        t.utf8.count == 2 && t.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    private func sentence(_ type: String, _ fields: [String]) -> String {
        NMEA0183.sentence(talker + type, fields)
    }

    /// HDT, true heading: `$HCHDT,123.4,T*hh`; nil without a (finite) true heading.
    public func hdt(_ a: Attitude) -> String? {
        guard let heading = a.heading, heading.isFinite else { return nil }
        return sentence("HDT", [NMEA0183.direction(heading), "T"])
    }

    /// HDM, magnetic heading: `$HCHDM,110.5,M*hh`.
    public func hdm(_ a: Attitude) -> String {
        sentence("HDM", [NMEA0183.direction(a.magneticHeading), "M"])
    }

    /// HDG: the sensor (compass) heading, the deviation in force as magnitude and E/W (magnetic = sensor +
    /// deviation east), the variation from the declination likewise: `$HCHDG,106.5,4.0,E,12.3,W*hh`. Without a
    /// deviation curve the deviation fields are empty and the heading is the calibrated magnetic one; without a
    /// declination the variation fields are empty, never "0.0" (OpenCPN takes 0.0 as unknown).
    public func hdg(_ a: Attitude) -> String {
        let (variation, side) = NMEA0183.variation(a.declination)
        let (deviation, deviationSide) = NMEA0183.variation(a.deviation)
        return sentence("HDG", [NMEA0183.direction(a.compassHeading), deviation, deviationSide, variation, side])
    }

    /// ROT in °/min, negative bow to port: `$HCROT,-3.2,A*hh`. Unknown, not finite, or beyond ±99999.9
    /// °/min (not a rate a vessel turns at): `$HCROT,,V*hh`.
    public func rot(_ a: Attitude) -> String {
        guard let rate = a.rateOfTurn, rate.isFinite, rate.magnitude < 99_999.95 else {
            return sentence("ROT", ["", "V"])
        }
        return sentence("ROT", [NMEA0183.fixed(rate, 1), "A"])
    }

    /// XDR, pitch and roll in degrees: `$HCXDR,A,<pitch>,D,PTCH,A,<roll>,D,ROLL*hh`; nil unless both are
    /// known and finite. Angles wrapped to −180…180.
    ///
    /// Signs are Bearing's (`Attitude`): pitch positive bow up, roll positive starboard side down — the
    /// readers' too. gpsd 3.25's processXDR (drivers/driver_nmea0183.c, release-3.25 lines 4570–4670) takes
    /// type A in unit D named PTCH or PITCH into ATT `pitch` and ROLL into `roll`, unchanged; gpsd 3.22
    /// ignores XDR. OpenCPN's dashboard (plugins/dashboard_pi/src/dashboard_pi.cpp 1836–1872) shows pitch
    /// > 0 as "Up" and roll > 0 as "Stbd". pypilot sends the same names (`$APXDR,A,x,D,PTCH`).
    public func xdr(_ a: Attitude) -> String? {
        guard let pitch = a.pitch, let roll = a.roll, pitch.isFinite, roll.isFinite else { return nil }
        return sentence("XDR", ["A", NMEA0183.signedAngle(pitch), "D", "PTCH",
                                "A", NMEA0183.signedAngle(roll), "D", "ROLL"])
    }

    /// RMC (NMEA 2.3, 12 fields); nil when the fix has no time.
    ///
    /// Time `hhmmss.ss` (hundredths truncated), status A with a position (mode ≥ 2D, latitude within ±90,
    /// longitude within ±180) else V, latitude `ddmm.mmmmm` N/S, longitude `dddmm.mmmmm` E/W, SOG in knots
    /// with two decimals (empty unless 0.00…999.99), COG true with one decimal, date `ddmmyy`, `variation`
    /// (degrees east +) as magnitude and E/W (both empty when nil), mode indicator A (fix) or N (no fix).
    /// With status V the position, speed and course fields are empty.
    public func rmc(_ f: GPSFix, variation: Double?) -> String? {
        guard let time = f.time else { return nil }
        let (year, month, day, hour, minute, second) = CivilTime.fields(unixSeconds: time.seconds)
        let centiseconds = min(max(Int(time.nanoseconds) / 10_000_000, 0), 99)
        let clock = NMEA0183.digits(hour, 2) + NMEA0183.digits(minute, 2) + NMEA0183.digits(second, 2)
            + "." + NMEA0183.digits(centiseconds, 2)
        let date = NMEA0183.digits(day, 2) + NMEA0183.digits(month, 2) + NMEA0183.digits((year % 100 + 100) % 100, 2)
        let (magnetic, side) = NMEA0183.variation(variation)

        var position = ["", "", "", ""]
        var valid = false
        if f.hasPosition, let lat = f.latitude, let lon = f.longitude, lat.isFinite, lon.isFinite,
           lat.magnitude <= 90, lon.magnitude <= 180 {
            let (latText, ns) = Self.coordinate(lat, degreeDigits: 2, positive: "N", negative: "S")
            let (lonText, ew) = Self.coordinate(lon, degreeDigits: 3, positive: "E", negative: "W")
            position = [latText, ns, lonText, ew]
            valid = true
        }
        var speed = ""
        var course = ""
        if valid {
            if let mps = f.speed, mps.isFinite, mps.magnitude < 1000 {
                let knots = NMEA0183.fixed(mps * 3600 / 1852, 2)
                if knots.first != "-" && knots.utf8.count <= 6 { speed = knots }
            }
            course = NMEA0183.direction(f.track)
        }
        return sentence("RMC", [clock, valid ? "A" : "V"] + position
                        + [speed, course, date, magnetic, side, valid ? "A" : "N"])
    }

    /// `|degrees|` as degrees and minutes with five decimals (`ddmm.mmmmm`, `dddmm.mmmmm`), rounded to the
    /// nearest 0.00001′ in whole units so that 59.999995′ carries into the degrees; the hemisphere letter is
    /// `positive` for values that round to zero.
    static func coordinate(_ degrees: Double, degreeDigits: Int, positive: String, negative: String) -> (String, String) {
        let units = Int((degrees.magnitude * 6_000_000).rounded())  // 1e-5 minute; ≤ 1.08e9
        let whole = units / 6_000_000
        let minutes = units % 6_000_000
        let text = NMEA0183.digits(whole, degreeDigits) + NMEA0183.digits(minutes / 100_000, 2) + "."
            + NMEA0183.digits(minutes % 100_000, 5)
        return (text, degrees < 0 && units > 0 ? negative : positive)
    }
}
