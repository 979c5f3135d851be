/// How a drive's headings are judged, as the held-out real drives are: the heading's errors (degrees, each at its
/// second of the drive) on the straights, their RMS, and the worst two-minute window. One rule for every judge of a
/// `RoadDrive` (the fusion in-process, `bearing attitude`'s printed headings). Pure.
public enum RoadDriveJudging {
    /// The RMS of the errors (0 for none).
    public static func rootMeanSquare(_ errors: [(time: Double, error: Double)]) -> Double {
        (errors.reduce(0) { $0 + $1.error * $1.error } / Double(max(errors.count, 1))).squareRoot()
    }

    /// The largest RMS over windows of two minutes starting every 30 s from `start` and ending by `duration`, each with
    /// at least 30 s of samples at `rate` Hz (0 when none has).
    public static func worstWindow(_ errors: [(time: Double, error: Double)], from start: Double, duration: Double, rate: Double) -> Double {
        var worst = 0.0, begin = start
        while begin + 120 <= duration {
            let inside = errors.filter { $0.time >= begin && $0.time < begin + 120 }
            if Double(inside.count) >= 30 * rate { worst = max(worst, rootMeanSquare(inside)) }
            begin += 30
        }
        return worst
    }
}
