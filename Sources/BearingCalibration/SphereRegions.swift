import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// The unit sphere in 100 regions of equal area, divided as MotionCal divides it: per hemisphere a polar
/// cap (1 region), a band of 15 and a band of 34 down to the equator. A cap holding the fraction f of the
/// sphere ends where sin(latitude) = 1 − 2f, so the band edges sit at sin(latitude) = ±0.98 and ±0.68.
/// The z axis is the pole.
public enum SphereRegions {
    public static let count = 100

    /// Bands from the north pole: regions in the band, sin(latitude) at the band's southern edge.
    static let bands: [(regions: Int, lowerSin: Double)] = [(1, 0.98), (15, 0.68), (34, 0), (34, -0.68), (15, -0.98), (1, -1)]
    /// The first region number of each band.
    static let bandStarts: [Int] = {
        var starts: [Int] = []
        var n = 0
        for band in bands { starts.append(n); n += band.regions }
        return starts
    }()

    /// The region (0 ..< 100) the direction of `v` falls in; nil for the zero vector.
    public static func region(of v: Vector3) -> Int? {
        let r = v.length
        guard r > 0, r.isFinite else { return nil }
        let s = v.z / r
        var band = bands.count - 1
        for (i, b) in bands.enumerated() where s >= b.lowerSin {
            band = i
            break
        }
        let n = bands[band].regions
        let longitude = atan2(v.y, v.x) + .pi   // 0 … 2π
        let index = min(n - 1, max(0, Int(longitude / (2 * .pi) * Double(n))))
        return bandStarts[band] + index
    }

    /// The unit vector at the middle of `region` (equal-area middle of its band, middle of its longitudes).
    public static func center(of region: Int) -> Vector3 {
        precondition((0..<count).contains(region))
        var band = 0
        while band + 1 < bands.count && bandStarts[band + 1] <= region { band += 1 }
        let upper = band == 0 ? 1.0 : bands[band - 1].lowerSin
        let s = (upper + bands[band].lowerSin) / 2
        let n = bands[band].regions
        if n == 1 { return Vector3(0, 0, band == 0 ? 1 : -1) }
        let longitude = (Double(region - bandStarts[band]) + 0.5) / Double(n) * 2 * .pi - .pi
        let c = (1 - s * s).squareRoot()
        return Vector3(c * cos(longitude), c * sin(longitude), s)
    }

    /// The regions of each band, north to south, for drawing the coverage map.
    public static var rows: [Range<Int>] {
        zip(bandStarts, bands).map { start, band in start..<(start + band.regions) }
    }
}
