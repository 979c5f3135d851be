import BearingModel

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

extension RoadDrive {
    /// The drive as a recording gives it: one sample per inertial sample that has a field sample after it, the two
    /// paired as a samples file's row pairs them (accelerometer, gyroscope, magnetometer), its time from the start.
    public var recordedSamples: [IMUSample] {
        var samples: [IMUSample] = [], pending: InertialSample?
        for event in events {
            switch event {
            case .inertial(let i): pending = i
            case .magnetic(let m):
                guard let i = pending, let g = i.angularRate else { continue }
                samples.append(IMUSample(time: i.time.unixTime - configuration.start, accelerometer: i.acceleration, gyroscope: g, magnetometer: m.field))
                pending = nil
            case .fix: break
            }
        }
        return samples
    }

    /// The fixes' positions as a track of positions only gives them, each time from the start.
    public var recordedPositions: [(time: Double, latitude: Double, longitude: Double)] {
        events.compactMap { event in
            guard case .fix(let f) = event, let t = f.time?.unixTime, let lat = f.latitude, let lon = f.longitude else { return nil }
            return (t - configuration.start, lat, lon)
        }
    }
}
