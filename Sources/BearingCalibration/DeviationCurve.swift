import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A compass's deviation as a function of its own heading, the classic five-term curve of compass
/// adjusters: dev(ψ) = A + B sin ψ + C cos ψ + D sin 2ψ + E cos 2ψ, degrees, east positive, with ψ the
/// compass (sensor) heading. NMEA's sense: magnetic = compass + deviation; true = magnetic + variation.
/// A is a constant misalignment, B and C the hard iron's horizontal part (semicircular deviation), D and E
/// the soft iron's (quadrantal deviation).
public struct DeviationCurve: Codable, Equatable, Sendable {
    /// A, B, C, D, E in degrees.
    public var coefficients: [Double]
    /// One standard deviation of each coefficient, degrees (nil: not known, e.g. written by hand).
    public var uncertainties: [Double]?

    public static let names = ["A", "B", "C", "D", "E"]
    public static let zero = DeviationCurve(coefficients: [0, 0, 0, 0, 0])

    public init(coefficients: [Double], uncertainties: [Double]? = nil) {
        self.coefficients = coefficients
        self.uncertainties = uncertainties
    }

    /// The curve's terms at compass heading `degrees`: 1, sin ψ, cos ψ, sin 2ψ, cos 2ψ.
    public static func terms(_ degrees: Double) -> [Double] {
        let r = degrees * .pi / 180
        return [1, sin(r), cos(r), sin(2 * r), cos(2 * r)]
    }

    /// The deviation at compass heading `degrees`, degrees east.
    public func deviation(atCompassHeading degrees: Double) -> Double {
        zip(Self.terms(degrees), coefficients).reduce(0) { $0 + $1.0 * $1.1 }
    }

    /// The magnetic heading for compass heading `degrees`, in [0, 360).
    public func magneticHeading(compass degrees: Double) -> Double {
        AttitudeAngles.normalizedDegrees(degrees + deviation(atCompassHeading: degrees))
    }

    /// The largest deviation over a turn, degrees (sampled every degree).
    public var largest: Double {
        (0..<360).map { abs(deviation(atCompassHeading: Double($0))) }.max() ?? 0
    }

    /// Why this curve cannot be used (five finite coefficients, each within ±45°), or nil.
    public var problem: String? {
        guard coefficients.count == 5 else { return "a deviation curve has five coefficients (A, B, C, D, E), not \(coefficients.count)" }
        for (name, c) in zip(Self.names, coefficients) where !c.isFinite || abs(c) > 45 {
            return "deviation coefficient \(name) = \(c)°: not a deviation a compass can be corrected for (|\(name)| ≤ 45°)"
        }
        if let u = uncertainties, u.count != 5 || u.contains(where: { !$0.isFinite || $0 < 0 }) {
            return "deviation uncertainties must be five finite values ≥ 0"
        }
        return nil
    }
}
