import BearingCalibration
import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// On land, going straight at speed, the course over ground is the vehicle's heading: a reference of its own,
/// independent of the magnetometer. The compass heading (calibrated, with the deviation learnt from driving, which
/// carries the mounting's offset) still errs by what changes with time and place: a hard iron that moves with the
/// loads switched on, the street's own field, the local field's departure from WMM's. `CourseTrim` learns that
/// error from the straight epochs (`PassiveDeviation.straight`: fast enough, turning slowly enough, the speed known
/// well enough) as a trim added to the heading: their mean over the first epochs of a straight, then an
/// exponential mean with `timeConstant`. It holds only near the heading it was learnt at, and only for a while: it
/// fades linearly to nothing `headingSpan` degrees away (the error of a heading is not another's), and with time
/// constant `holdTime` after the last straight epoch. A course that disagrees with the heading by more than
/// `outlier` degrees (a GNSS jump, a car reversing) is not taken. Pure: times are the fixes' and samples'.
public struct CourseTrim: Sendable {
    public var timeConstant = 5.0
    public var holdTime = 120.0
    public var headingSpan = 30.0
    public var outlier = 15.0
    /// The trim (degrees, added to the heading) and the heading and time it was last learnt at.
    public private(set) var trim = 0.0
    public private(set) var learnt: (heading: Double, time: Double)?
    /// Straight epochs taken since the trim last faded to nothing.
    private var epochs = 0

    public init() {}

    /// One straight epoch at `time`: the course (degrees, the heading's north: magnetic when `heading` is) and the
    /// heading given then without the trim. Returns whether it was taken.
    @discardableResult
    public mutating func straightEpoch(course: Double, heading: Double, time: Double) -> Bool {
        guard course.isFinite, heading.isFinite, time.isFinite else { return false }
        let now = weight(at: heading, time: time)
        let current = trim * now
        let error = SwingSolver.wrap180(course - heading)
        guard abs(error - current) <= outlier else { return false }
        if now < 0.5 { epochs = 0 }
        epochs += 1
        let dt = learnt.map { max(0, time - $0.time) } ?? 1
        let k = max(1 / Double(epochs), min(1, dt / timeConstant))
        trim = current + k * (error - current)
        learnt = (heading, time)
        return true
    }

    /// The trim to add to `heading` (degrees, without the trim) at `time`.
    public func trim(at heading: Double, time: Double) -> Double {
        trim == 0 ? 0 : trim * weight(at: heading, time: time)
    }

    private func weight(at heading: Double, time: Double) -> Double {
        guard let learnt else { return 0 }
        let away = abs(SwingSolver.wrap180(heading - learnt.heading))
        let near = max(0, 1 - away / headingSpan)
        return near * exp(-max(0, time - learnt.time) / holdTime)
    }
}
