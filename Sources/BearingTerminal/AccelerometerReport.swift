import BearingCalibrationWorkflow
import BearingCalibration
import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The result of `calibrate --accel`: a readable summary with every pose, or (`--json`) one JSON object.
public struct AccelerometerReport: FitReport {
    public var fit: AccelerometerFit
    public var collected: PoseCollection.Result
    public var orientation: Orientation
    public var saved: String?
    public var notSaved: String?
    /// The daemon's answer to the reload request.
    public var daemon: String?

    public init(fit: AccelerometerFit, collected: PoseCollection.Result, orientation: Orientation, saved: String?, notSaved: String?, daemon: String?) {
        self.fit = fit
        self.collected = collected
        self.orientation = orientation
        self.saved = saved
        self.notSaved = notSaved
        self.daemon = daemon
    }


    public static let milliG = 1000 / AccelerometerCalibrator.standardGravity

    public var summary: String {
        let c = fit.correction, f = fit.figures
        func mark(_ ok: Bool) -> String { ok ? "✓" : "✗" }
        var lines = ["accelerometer calibration: \(fit.model.rawValue) fit to \(f.poses) still poses of \(collected.samples) samples"
            + (collected.chip.map { ", chip \($0)" } ?? "")]
        lines.append(String(printf: "  offset  (%.4f, %.4f, %.4f) m/s² = (%.2f, %.2f, %.2f) mg", c.offset.x, c.offset.y, c.offset.z,
                            f.offsetMilliG[0], f.offsetMilliG[1], f.offsetMilliG[2]))
        for (i, r) in c.matrix.rows.enumerated() {
            lines.append(String(printf: "  %@  [%9.6f %9.6f %9.6f]", i == 0 ? "matrix" : "      ", r.x, r.y, r.z))
        }
        lines.append(String(printf: "  gain error %+.2f%% %+.2f%% %+.2f%%   misalignment %.2f°   spread %.3f",
                            f.scaleErrorPercent[0], f.scaleErrorPercent[1], f.scaleErrorPercent[2], f.misalignment, f.spread))
        let held = Set(f.directions)
        let directions = AxisDirection.allCases.map { "\($0.rawValue) \(held.contains($0) ? "✓" : "✗")" }.joined(separator: " ")
        lines.append(String(printf: "  directions %@   residual %.2f mg RMS %@   worst pose %d: %.2f mg %@", directions, f.residualMilliG,
                            mark(f.residualMilliG <= AccelerometerFigures.maximumResidualMilliG), f.worstPose, f.worstMilliG,
                            mark(f.worstMilliG <= AccelerometerFigures.maximumWorstMilliG)))
        for (i, p) in fit.poses.enumerated() {
            let d = fit.poseDirections[i]
            lines.append(String(printf: "  pose %2d %-6@ held %4.1f s  |a| %.4f → %.4f m/s² (%+.2f mg)", i + 1, d?.rawValue ?? "tilted",
                                p.duration, p.specificForce.length, c.apply(p.specificForce).length, fit.residuals[i] * Self.milliG))
        }
        for w in fit.warnings { lines.append("  warning: \(w)") }
        for failure in fit.failures { lines.append("  ✗ \(failure)") }
        return lines.joined(separator: "\n")
    }

    /// The `--json` object; every key is present (null when it does not apply).
    struct Result: Encodable {
        struct Pose: Encodable {
            var start, duration: Double
            var samples: Int
            var mean: [Double]
            var residual_mg: Double
            var direction: String?
            var rate: [Double]?
        }
        var `class` = "ACCELEROMETER_CALIBRATION_RESULT"
        var model: String
        var offset: [Double]
        var matrix: [[Double]]
        var gravity: Double
        var units: String
        @WrittenAsNull var chip: String?
        @WrittenAsNull var device: String?
        var source: String
        var samples: Int
        var poses: [Pose]
        var figures: AccelerometerFigures
        var passes: Bool
        var failures, warnings: [String]
        @WrittenAsNull var saved: String?
        @WrittenAsNull var not_saved: String?
        @WrittenAsNull var daemon: String?
    }

    var result: Result {
        let c = fit.correction
        let poses = fit.poses.enumerated().map { i, p in
            Result.Pose(start: p.start, duration: p.duration, samples: p.samples, mean: [p.specificForce.x, p.specificForce.y, p.specificForce.z],
                        residual_mg: fit.residuals[i] * Self.milliG, direction: fit.poseDirections[i]?.rawValue,
                        rate: p.angularRate.map { [$0.x, $0.y, $0.z] })
        }
        return Result(model: fit.model.rawValue, offset: [c.offset.x, c.offset.y, c.offset.z], matrix: c.matrix.rows.map { [$0.x, $0.y, $0.z] },
                      gravity: fit.gravity, units: AccelerometerCalibrationRecord.metresPerSecondSquared, chip: collected.chip,
                      device: collected.device, source: collected.source, samples: collected.samples, poses: poses, figures: fit.figures,
                      passes: fit.passes, failures: fit.failures, warnings: fit.warnings, saved: saved, not_saved: notSaved, daemon: daemon)
    }

    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(result)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
