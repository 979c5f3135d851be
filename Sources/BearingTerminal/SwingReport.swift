import BearingCalibration
import BearingModel

/// A GNSS swing's result, as `bearing swing` and `bearing attitude --gnss` print it.
public enum SwingReport {
    public static func text(_ r: SwingResult) -> String {
        var lines: [String] = []
        let c = r.curve
        let sigmas = c.uncertainties ?? [Double](repeating: .nan, count: 5)
        lines.append("deviation curve (degrees, east positive; magnetic = compass + deviation):")
        for (name, (value, sigma)) in zip(DeviationCurve.names, zip(c.coefficients, sigmas)) {
            lines.append(String(printf: "  %@ %+7.2f ± %.2f", name, value, sigma))
        }
        lines.append("  compass  " + stride(from: 0, to: 360, by: 30).map { String(printf: "%5d", $0) }.joined())
        lines.append("  dev      " + stride(from: 0, to: 360, by: 30).map { String(printf: "%5.1f", c.deviation(atCompassHeading: Double($0))) }.joined())
        if r.currentSolved {
            lines.append(String(printf: "current %.2f m/s setting %.0f° (east %.2f ± %.2f, north %.2f ± %.2f)", r.currentSpeed, r.currentSet,
                                r.current.east, r.currentSigma.east, r.current.north, r.currentSigma.north))
        } else {
            lines.append("current not solved (--no-current)")
        }
        lines.append(String(printf: "speed through the water %.2f ± %.2f m/s; gyroscope drift %.4f °/s", r.speed, r.speedSigma, r.gyroDrift))
        lines.append(String(printf: "residuals: velocity %.2f m/s RMS, curve %.2f° RMS; %d of %d epochs used, %d of 12 sectors",
                            r.velocityResidual, r.deviationResidual, r.used, r.epochs, r.sectorsCovered))
        if !r.rejected.isEmpty {
            lines.append("set aside: " + r.rejected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

}
