import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A plausible receiver track as NMEA 0183, generated from a seed: a boat on a slow turn at ~3 m/s,
/// with a stretch of lost fix and a recovery through 2D back to 3D. Each epoch keeps the exact values
/// its sentences encode, so tests can compare what comes out of gpsd and Bearing epoch by epoch.
public struct NMEATrack: Sendable {
    public struct Epoch: Equatable, Sendable {
        public var time: GPSTimestamp
        public var mode: FixMode
        /// Rounded to what the sentences carry (1e-5 arc-minutes).
        public var latitude: Double
        public var longitude: Double
        public var altMSL: Double
        public var geoidSeparation: Double
        /// m/s, as gpsd converts the RMC knots.
        public var speedKnots: Double
        public var track: Double
        public var hdop: Double
        public var sentences: [String]

        public var speed: Double { speedKnots * 0.514444 }
        public var altHAE: Double { altMSL + geoidSeparation }
    }

    public struct Options: Sendable {
        public var epochs = 60
        public var seed: UInt64 = 1
        public var start = GPSTimestamp(seconds: 1_748_772_000) // 2025-06-01T10:00:00Z
        public var latitude = 50.80          // the Solent, off Portsmouth
        public var longitude = -1.10
        /// Epochs without a fix (quality 0, RMC status V), as a fraction range of the track.
        public var lossStart = 0.40
        public var lossEnd = 0.55
        /// Epochs in 2D after the fix comes back.
        public var twoDEpochs = 3
        /// Epochs whose fix is somewhere else (a receiver's glitch, a spoofer's jump): latitude and longitude in degrees.
        /// The track goes on from where it was.
        public var jumps: [Int: (latitude: Double, longitude: Double)] = [:]
        public init() {}
    }

    public let epochs: [Epoch]

    public init(_ options: Options = Options()) {
        var rng = SplitMix64(seed: options.seed)
        var lat = options.latitude
        var lon = options.longitude
        var heading = 45.0
        var out: [Epoch] = []
        let lossStart = Int(Double(options.epochs) * options.lossStart)
        let lossEnd = Int(Double(options.epochs) * options.lossEnd)
        for i in 0..<options.epochs {
            let t = GPSTimestamp(seconds: options.start.seconds + Int64(i))
            let knots = Self.round(5.8 + rng.uniform(-0.4, 0.4), 3)
            heading = (heading + 2.0 + rng.uniform(-0.5, 0.5)).truncatingRemainder(dividingBy: 360)
            let metres = knots * 0.514444
            lat += metres * cos(heading * .pi / 180) / 111_320
            lon += metres * sin(heading * .pi / 180) / (111_320 * cos(lat * .pi / 180))
            let mode: FixMode
            if i >= lossStart && i < lossEnd { mode = .noFix }
            else if i >= lossEnd && i < lossEnd + options.twoDEpochs { mode = .twoD }
            else { mode = .threeD }
            let jump = options.jumps[i]
            var e = Epoch(time: t, mode: mode,
                          latitude: Self.quantize(jump?.latitude ?? lat), longitude: Self.quantize(jump?.longitude ?? lon),
                          altMSL: Self.round(12.0 + rng.uniform(-0.5, 0.5), 1), geoidSeparation: 47.3,
                          speedKnots: knots, track: Self.round(heading, 1),
                          hdop: Self.round(0.9 + rng.uniform(0, 0.4), 1), sentences: [])
            e.sentences = Self.sentences(e)
            out.append(e)
        }
        epochs = out
    }

    /// The whole log, one sentence per line (CRLF, as receivers send it).
    public var text: String { epochs.flatMap(\.sentences).map { $0 + "\r\n" }.joined() }

    static func round(_ v: Double, _ places: Int) -> Double {
        let f = pow(10, Double(places))
        return (v * f).rounded() / f
    }

    /// Degrees rounded to 1e-5 arc-minutes, the precision of `ddmm.mmmmm`.
    static func quantize(_ deg: Double) -> Double {
        let sign: Double = deg < 0 ? -1 : 1
        let a = abs(deg)
        let d = a.rounded(.down)
        let minutes = round((a - d) * 60, 5)
        return sign * (d + minutes / 60)
    }

    static func coordinate(_ deg: Double, degreeDigits: Int, positive: String, negative: String) -> (String, String) {
        let a = abs(deg)
        var d = Int(a)
        var minutes = round((a - Double(d)) * 60, 5)
        if minutes >= 60 { d += 1; minutes -= 60 }
        let text = String(printf: "%0\(degreeDigits)d%08.5f", d, minutes)
        return (text, deg < 0 ? negative : positive)
    }

    public static func checksum(_ body: String) -> String {
        String(printf: "%02X", body.utf8.reduce(UInt8(0), ^))
    }

    static func sentence(_ body: String) -> String { "$\(body)*\(checksum(body))" }

    static let satellites: [(prn: Int, el: Int, az: Int, snr: Int)] = [
        (2, 71, 211, 44), (5, 43, 62, 41), (12, 55, 287, 45), (15, 22, 140, 36),
        (18, 9, 318, 28), (24, 34, 101, 39), (25, 61, 12, 43), (29, 14, 255, 31),
    ]

    static func sentences(_ e: Epoch) -> [String] {
        let (y, mo, d, h, mi, s) = CivilTime.fields(unixSeconds: e.time.seconds)
        let hms = String(printf: "%02d%02d%02d.00", h, mi, s)
        let dmy = String(printf: "%02d%02d%02d", d, mo, y % 100)
        let fix = e.mode >= .twoD
        let (lat, ns) = coordinate(e.latitude, degreeDigits: 2, positive: "N", negative: "S")
        let (lon, ew) = coordinate(e.longitude, degreeDigits: 3, positive: "E", negative: "W")
        let used = fix ? (e.mode == .threeD ? 7 : 3) : 0
        var out: [String] = []
        if fix {
            // 2D: the receiver has no usable altitude, so GGA leaves it empty.
            let alt = e.mode == .threeD ? String(printf: "%.1f,M,%.1f,M", e.altMSL, e.geoidSeparation) : ",M,,M"
            out.append(sentence("GPGGA,\(hms),\(lat),\(ns),\(lon),\(ew),1,\(String(printf: "%02d", used)),\(String(printf: "%.1f", e.hdop)),\(alt),,"))
        } else {
            out.append(sentence("GPGGA,\(hms),,,,,0,00,99.9,,M,,M,,"))
        }
        let prns = satellites.prefix(used).map { String(printf: "%02d", $0.prn) }
        let slots = (prns + Array(repeating: "", count: 12 - prns.count)).joined(separator: ",")
        let gsaMode = e.mode == .threeD ? 3 : (e.mode == .twoD ? 2 : 1)
        let pdop = fix ? String(printf: "%.1f", e.hdop * 1.6) : ""
        let hdop = fix ? String(printf: "%.1f", e.hdop) : ""
        let vdop = fix ? String(printf: "%.1f", e.hdop * 1.2) : ""
        out.append(sentence("GPGSA,A,\(gsaMode),\(slots),\(pdop),\(hdop),\(vdop)"))
        for page in 0..<2 {
            let sats = satellites[(page * 4)..<(page * 4 + 4)].map { s in
                String(printf: "%02d,%02d,%03d,%02d", s.prn, s.el, s.az, fix ? s.snr : s.snr / 3)
            }.joined(separator: ",")
            out.append(sentence("GPGSV,2,\(page + 1),\(satellites.count),\(sats)"))
        }
        if fix {
            out.append(sentence("GPRMC,\(hms),A,\(lat),\(ns),\(lon),\(ew),\(String(printf: "%.3f", e.speedKnots)),\(String(printf: "%.1f", e.track)),\(dmy),,,A"))
        } else {
            out.append(sentence("GPRMC,\(hms),V,,,,,,,\(dmy),,,N"))
        }
        return out
    }
}

/// A small, seedable generator, so every run of the demo and the tests sees the same track.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double {
        lo + (hi - lo) * Double(next() >> 11) / Double(1 << 53)
    }
}
