import BearingCalibration
import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A land vehicle's straight epochs at speed, kept as a check on the fits online calibration makes: the course
/// over ground is a heading the magnetometer never saw. Each epoch holds the mean raw field since the fix before
/// (only when no sample between was disturbed), the "up" and forward axis in the sensor's frame, and the magnetic
/// course. A calibration's `spread` is how much the heading it gives departs from the course, epoch to epoch,
/// after their mean difference is taken out (the mounting's yaw, the local declination's departure from WMM's,
/// neither of which a calibration changes): a hard iron off by a few µT turns the heading by a few degrees one way
/// on one course and the other way on the opposite one, and shows there; the course's own noise is the same for
/// every calibration judged on the same epochs. Andel et al. (Sensors 22(21):8447, 2022) calibrate a car's
/// magnetometer from the GNSS motion vector on the same idea; here the course judges fits that the field alone
/// made. Epochs are kept `maximumAge` seconds (a car's iron changes with its loads), at most `perSector` per 30°
/// of course (the newest), and a spread is given only when they cover `minimumSectors` of the 12. Pure.
public struct CourseChecks: Sendable {
    public var maximumAge = 900.0
    public var perSector = 10
    public var minimumSectors = 4
    /// Longest an epoch's field may gather over (s): a fix missed makes the mean straddle a turn.
    public var longestEpoch = 1.6

    struct Epoch {
        var raw: Vector3
        var axes: VehicleAxes
        /// Magnetic course, radians.
        var course: Double
        var time: Double
    }
    private var sectors: [[Epoch]] = Array(repeating: [], count: 12)
    private var sum = Vector3.zero
    private var count = 0
    private var since = Double.nan
    private var disturbed = false
    /// Whether any epoch was ever offered: until then `sample` does nothing (no GNSS, or not on land).
    public private(set) var active = false

    public init() {}

    /// One raw field sample (chip axes) at `time`.
    public mutating func sample(_ raw: Vector3, time: Double) {
        guard active else { return }
        if count == 0 { since = time }
        sum = sum + raw
        count += 1
    }

    /// The samples since the last epoch include a disturbed one: the epoch is no check.
    public mutating func disturb() { disturbed = true }

    /// One GNSS epoch at `time`: `course` the magnetic course (degrees) when the vehicle went straight at speed,
    /// nil when not; `up` and `forward` in the sensor's frame. Starts the next epoch's field.
    public mutating func epoch(course: Double?, up: Vector3, forward: Vector3, time: Double) {
        defer {
            sum = .zero
            count = 0
            disturbed = false
            active = true
        }
        guard let course, course.isFinite, count >= 5, !disturbed, time - since <= longestEpoch,
              let axes = VehicleAxes(up: up, forward: forward) else { return }
        let s = SwingSolver.sector(course, sectors.count)
        sectors[s].append(Epoch(raw: sum * (1 / Double(count)), axes: axes,
                                course: AttitudeAngles.normalizedDegrees(course) * .pi / 180, time: time))
        if sectors[s].count > perSector { sectors[s].removeFirst() }
    }

    /// Everything kept no longer holds (a step of the hard iron).
    public mutating func clear() {
        for i in sectors.indices { sectors[i].removeAll() }
        sum = .zero
        count = 0
    }

    /// Sectors of course holding an epoch younger than `maximumAge` at `time`.
    public func sectorsCovered(at time: Double) -> Int {
        sectors.reduce(0) { $0 + ($1.contains { time - $0.time <= maximumAge } ? 1 : 0) }
    }

    /// The RMS (degrees) of the heading `calibration` gives against the course, about their mean difference, over
    /// the epochs younger than `maximumAge` at `time`; nil while they cover fewer than `minimumSectors` sectors.
    public func spread(_ calibration: MagneticCalibration, at time: Double) -> Double? {
        guard sectorsCovered(at: time) >= minimumSectors else { return nil }
        var errors: [Double] = []
        var s = 0.0, c = 0.0
        for sector in sectors {
            for e in sector where time - e.time <= maximumAge {
                let error = e.course - e.axes.heading(field: calibration.apply(e.raw))
                errors.append(error)
                s += sin(error)
                c += cos(error)
            }
        }
        let mean = atan2(s, c)
        let sumSquares = errors.reduce(0.0) { acc, e in
            let d = remainder(e - mean, 2 * .pi)
            return acc + d * d
        }
        return (sumSquares / Double(errors.count)).squareRoot() * 180 / .pi
    }
}
