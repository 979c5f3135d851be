#if canImport(Glibc)
import Glibc
#endif

/// Distances on the Earth: for operators that measure movement, and for whether a fix could have been reached from the
/// last (`DeclinationState`).
public enum Geodesy {
    /// Mean Earth radius (IUGG), metres.
    public static let earthRadius = 6_371_008.8

    /// Great-circle (haversine) distance in metres between two latitude/longitude pairs in degrees.
    public static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let r = Double.pi / 180
        let dlat = (lat2 - lat1) * r, dlon = (lon2 - lon1) * r
        let h = sin(dlat / 2) * sin(dlat / 2) + cos(lat1 * r) * cos(lat2 * r) * sin(dlon / 2) * sin(dlon / 2)
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }
}
