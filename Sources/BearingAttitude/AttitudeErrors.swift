import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The orientation error measures of the BROAD benchmark (D. Laidig, M. Caruso, A. Cereatti, T. Seel,
/// "BROAD—A Benchmark for Robust Inertial Orientation Estimation", Data 6(7):72, 2021), in radians. With
/// estimate and truth both sensor → earth, the error e = q_est ⊗ q_ref* = (w, x, y, z) is expressed in the
/// earth frame; its rotation angle splits into a part about the vertical (heading) and the rest (inclination).
public struct AttitudeError: Equatable, Sendable {
    /// 2·acos|w|: the whole angle between estimate and truth.
    public var total: Double
    /// 2·atan|z / w|: the part about the vertical.
    public var heading: Double
    /// 2·acos√(w² + z²): how far the estimated vertical is tilted from the true one.
    public var inclination: Double

    public init(estimate: Quaternion, reference: Quaternion) {
        let e = estimate.normalized * reference.normalized.conjugate
        let w = abs(e.w), z = abs(e.z)
        total = 2 * acos(min(1, w))
        heading = 2 * atan2(z, w)
        inclination = 2 * acos(min(1, (w * w + z * z).squareRoot()))
    }
}

/// Root-mean-square of `AttitudeError`s, reported in degrees.
public struct AttitudeErrorRMS: Equatable, Sendable {
    public private(set) var count = 0
    private var sumTotal = 0.0
    private var sumHeading = 0.0
    private var sumInclination = 0.0

    public init() {}

    public mutating func add(_ e: AttitudeError) {
        count += 1
        sumTotal += e.total * e.total
        sumHeading += e.heading * e.heading
        sumInclination += e.inclination * e.inclination
    }

    /// Adds the error of `estimate` against `reference`, unless the reference is not finite (the optical
    /// system lost the markers). Returns whether it counted.
    @discardableResult
    public mutating func add(estimate: Quaternion, reference: Quaternion) -> Bool {
        guard reference.isFinite, estimate.isFinite else { return false }
        add(AttitudeError(estimate: estimate, reference: reference))
        return true
    }

    public var totalDegrees: Double { rms(sumTotal) }
    public var headingDegrees: Double { rms(sumHeading) }
    public var inclinationDegrees: Double { rms(sumInclination) }

    private func rms(_ sum: Double) -> Double { count == 0 ? .nan : (sum / Double(count)).squareRoot() * 180 / .pi }
}
