import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The main field at one place and time: declination, inclination and intensities, in the WMM's terms.
public struct GeomagneticField: Equatable, Sendable {
    /// North, east and down components, nT.
    public var north: Double
    public var east: Double
    public var down: Double

    /// Declination (D), degrees east of true north: true heading = magnetic heading + declination.
    public var declination: Double { atan2(east, north) * 180 / .pi }
    /// Inclination (I, dip), degrees below the horizontal.
    public var inclination: Double { atan2(down, horizontalIntensity) * 180 / .pi }
    public var horizontalIntensity: Double { (north * north + east * east).squareRoot() }
    /// Total intensity (F), nT.
    public var totalIntensity: Double { (north * north + east * east + down * down).squareRoot() }
}

/// A spherical-harmonic main-field model read from a `.COF` file (the WMM's format), and its synthesis
/// at a geodetic position: the method of the WMM2025 Technical Report (NOAA NCEI, section 1.2), with
/// Schmidt semi-normalised associated Legendre functions, computed here from their recurrences.
public struct WorldMagneticModel: Sendable {
    public var name: String
    public var epoch: Double
    public var releaseDate: String
    public let maxDegree: Int
    /// g, h and their secular variation, indexed by `index(n, m)`, nT and nT/year.
    private var g: [Double], h: [Double], gDot: [Double], hDot: [Double]

    /// The embedded WMM2025.
    public static let wmm2025: WorldMagneticModel = {
        // The embedded text is checked by the tests; a failure here would be a build defect.
        try! WorldMagneticModel(cof: wmm2025COF, source: "WMM_2025.COF (embedded)")
    }()

    /// The validity interval in decimal years (five years from the epoch, as for every WMM).
    public var validity: ClosedRange<Double> { epoch...(epoch + 5) }

    /// The date what runs unattended takes the field at (the daemon's fallback position and fixes, a calibration's target,
    /// the selftest, a recording replayed): `year` itself within `plausible` years of the epoch (extrapolated outside
    /// `validity`, as the model's secular variation allows, with an error that grows: a recording from 2021 is better
    /// taken at 2021 than at 2025), else held at the nearest end of `validity`. A date farther off is a clock that is
    /// wrong: a Pi without a real-time clock starts in 1970 until it syncs, and a receiver whose week number rolled over
    /// reports a date 1,024 weeks (19.6 years) early. Extrapolated to 1970, the secular variation put the Solent's
    /// declination at -8.84° for 0.64°. `bearing declination` asked for a date extrapolates any, and says so.
    public func heldYear(_ year: Double) -> Double {
        abs(year - epoch) <= Self.plausible ? year : min(max(year, validity.lowerBound), validity.upperBound)
    }

    /// Years from the epoch within which a date is taken as it is (`heldYear`).
    public static let plausible = 10.0

    static func index(_ n: Int, _ m: Int) -> Int { n * (n + 1) / 2 + m }

    /// Parses a COF file; errors name the line.
    public init(cof text: String, source: String) throws(WMMError) {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let header = lines.first else { throw WMMError("\(source): empty file") }
        let head = header.split(separator: " ")
        guard head.count >= 2, let epoch = Double(head[0]) else {
            throw WMMError("\(source):1: expected a header \"EPOCH MODEL DATE\", got \"\(header)\"")
        }
        self.epoch = epoch
        name = String(head[1])
        releaseDate = head.count > 2 ? String(head[2]) : ""
        var entries: [(Int, Int, Double, Double, Double, Double)] = []
        for (i, line) in lines.enumerated().dropFirst() {
            if line.isEmpty { continue }
            if line.allSatisfy({ $0 == "9" }) { break }
            let f = line.split(separator: " ")
            guard f.count == 6, let n = Int(f[0]), let m = Int(f[1]), (1...30).contains(n), (0...n).contains(m),
                  let gv = Double(f[2]), let hv = Double(f[3]), let gd = Double(f[4]), let hd = Double(f[5]) else {
                throw WMMError("\(source):\(i + 1): expected \"n m g h g_dot h_dot\" with 1 ≤ n ≤ 30, 0 ≤ m ≤ n, got \"\(line)\"")
            }
            entries.append((n, m, gv, hv, gd, hd))
        }
        guard let maxN = entries.map(\.0).max() else { throw WMMError("\(source): no coefficients") }
        maxDegree = maxN
        let size = Self.index(maxN, maxN) + 1
        g = Array(repeating: 0, count: size); h = g; gDot = g; hDot = g
        var seen = Set<Int>()
        for (n, m, gv, hv, gd, hd) in entries {
            let k = Self.index(n, m)
            seen.insert(k)
            g[k] = gv; h[k] = hv; gDot[k] = gd; hDot[k] = hd
        }
        guard seen.count == size - 1 else {
            throw WMMError("\(source): \(size - 1 - seen.count) coefficients missing for degree \(maxN)")
        }
    }

    /// The field at a geodetic latitude/longitude (degrees), height above the WGS84 ellipsoid (km) and
    /// decimal year. Dates outside `validity` are extrapolated; callers say so.
    public func field(latitude: Double, longitude: Double, heightKm: Double, year: Double) -> GeomagneticField {
        // WGS84 and the model's reference radius (WMM2025 report, table 1).
        let a = 6378.137, f = 1 / 298.257223563, re = 6371.2
        let e2 = f * (2 - f)
        let lat = latitude * .pi / 180, lon = longitude * .pi / 180
        let sinLat = sin(lat), cosLat = cos(lat)
        // Geodetic → geocentric spherical (report, eq. 7).
        let rc = a / (1 - e2 * sinLat * sinLat).squareRoot()
        let p = (rc + heightKm) * cosLat
        let zc = (rc * (1 - e2) + heightKm) * sinLat
        let r = (p * p + zc * zc).squareRoot()
        let latC = asin(zc / r)
        // Colatitude θ: cosθ = sin φ', sinθ = cos φ' (kept away from 0 at the geographic poles).
        let cosT = sin(latC)
        let sinT = max(cos(latC), 1e-10)
        let dt = year - epoch

        let N = maxDegree
        let size = Self.index(N, N) + 1
        var P = [Double](repeating: 0, count: size), dP = P
        P[0] = 1
        for n in 1...N {
            for m in 0...n {
                let k = Self.index(n, m)
                if n == m {
                    let prev = Self.index(n - 1, n - 1)
                    let s = n == 1 ? 1.0 : (Double(2 * n - 1) / Double(2 * n)).squareRoot()
                    P[k] = s * sinT * P[prev]
                    dP[k] = s * (cosT * P[prev] + sinT * dP[prev])
                } else {
                    let k1 = Self.index(n - 1, m)
                    let a1 = Double(2 * n - 1)
                    let b = n >= 2 && m <= n - 2 ? Double((n - 1) * (n - 1) - m * m).squareRoot() : 0
                    let pk2 = b > 0 ? P[Self.index(n - 2, m)] : 0
                    let dpk2 = b > 0 ? dP[Self.index(n - 2, m)] : 0
                    let d = Double(n * n - m * m).squareRoot()
                    P[k] = (a1 * cosT * P[k1] - b * pk2) / d
                    dP[k] = (a1 * (cosT * dP[k1] - sinT * P[k1]) - b * dpk2) / d
                }
            }
        }
        var xs = 0.0, ys = 0.0, zs = 0.0
        let ratio = re / r
        var power = ratio * ratio
        for n in 1...N {
            power *= ratio // (a/r)^(n+2)
            for m in 0...n {
                let k = Self.index(n, m)
                let gt = g[k] + dt * gDot[k], ht = h[k] + dt * hDot[k]
                let cm = cos(Double(m) * lon), sm = sin(Double(m) * lon)
                let t = gt * cm + ht * sm
                xs += power * t * dP[k]
                ys += power * Double(m) * (gt * sm - ht * cm) * P[k]
                zs -= power * Double(n + 1) * t * P[k]
            }
        }
        ys /= sinT
        // Spherical → geodetic frame (report, eq. 17).
        let psi = latC - lat
        return GeomagneticField(north: xs * cos(psi) - zs * sin(psi), east: ys, down: xs * sin(psi) + zs * cos(psi))
    }

    /// Decimal year of a civil date (UTC), as the WMM takes it.
    public static func decimalYear(year: Int, month: Int, day: Int, secondsOfDay: Double = 0) -> Double {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let dayOfYear = days.prefix(max(0, min(12, month) - 1)).reduce(0, +) + day - 1
        return Double(year) + (Double(dayOfYear) + secondsOfDay / 86_400) / (leap ? 366 : 365)
    }

    /// Decimal year of a Unix time.
    public static func decimalYear(unixSeconds: Double) -> Double {
        let whole = unixSeconds.rounded(.down)
        let (y, m, d, hh, mm, ss) = CivilTime.fields(unixSeconds: Int64(whole))
        let secondsOfDay = Double(hh * 3600 + mm * 60 + ss) + (unixSeconds - whole)
        return decimalYear(year: y, month: m, day: d, secondsOfDay: secondsOfDay)
    }
}

public struct WMMError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
