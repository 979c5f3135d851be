import BearingModel

/// A land vehicle's own acceleration, from its GNSS speed and the gyroscope, to take out of the accelerometer
/// before the attitude filter sees it. An accelerometer in a car measures gravity plus the car's acceleration:
/// 1.5 m/s² of it pulling away tilts the filter's "up" by up to 9° (less its 3 s low-pass), and that tilt, at
/// a dip of 66°, turns the heading by twice as much, and makes online calibration fit the tilt as iron.
/// A vehicle that moves along its forward axis x at speed v accelerates by v̇ x̂ + ω × v x̂ (ω the body's rate):
/// v̇ along the axis and the centripetal v ω_z across it (the frame's own signs: x forward in `flu` and `frd`
/// alike). This is the acceleration compensation of fixed-wing attitude filters (Euston et al., IROS 2008,
/// §A; iNav's centripetal term, iNavFlight/inav#11312; ArduPilot's DCM with GPS velocity), with GNSS speed.
///
/// v̇ is the difference of the last two epochs' speeds (the receiver's Doppler speed at about 1 Hz: half an
/// epoch late, within the filter's 3 s low-pass), and v runs on from the last epoch with it. Nothing is taken
/// out more than `staleAfter` seconds after the last epoch (a fix repeated with the same time is not one); v̇
/// is zero across a gap in the epochs and for a change of speed no car makes (a GNSS jump). Reversing is taken
/// as forward: slow, and brief. Pure.
public struct VehicleAcceleration: Sendable {
    /// Seconds after an epoch (on the samples' clock) that its speed is still used.
    public var staleAfter = 2.5
    /// The fastest change of speed taken as the vehicle's, m/s² (about 1 g: hard braking).
    public var maximumAcceleration = 10.0

    /// The last epoch: its speed (m/s), its time on the GNSS clock and when it reached the samples' clock.
    private var last: (speed: Double, fixTime: Double, arrival: Double)?
    /// The change of speed between the last two epochs, m/s².
    private var change = 0.0
    /// The vehicle's forward axis in the samples' frame (unit).
    public private(set) var forward = Vector3(1, 0, 0)

    public init() {}

    /// A GNSS epoch's speed over ground (m/s), at `fixTime` on the receiver's clock, reaching the samples'
    /// clock at `arrival`. A speed that is not one (negative, not finite) forgets what was known.
    public mutating func epoch(speed: Double, fixTime: Double, arrival: Double) {
        guard speed.isFinite, speed >= 0, fixTime.isFinite, arrival.isFinite else {
            last = nil
            change = 0
            return
        }
        // A fix repeated with the same time (gpsd repeating a frozen TPV) is no new epoch: its speed is stale.
        // One from before the last (the receiver's clock stepped back) starts again from itself.
        if let last, fixTime == last.fixTime { return }
        change = 0
        if let last, fixTime > last.fixTime, fixTime - last.fixTime <= staleAfter {
            let a = (speed - last.speed) / (fixTime - last.fixTime)
            if abs(a) <= maximumAcceleration { change = a }
        }
        last = (speed, fixTime, arrival)
    }

    /// Whether a recent epoch's speed is known at `time` (samples' clock): what `acceleration` takes out then.
    public func knowsSpeed(at time: Double) -> Bool {
        guard let last else { return false }
        return time >= last.arrival - 0.5 && time - last.arrival <= staleAfter
    }

    /// The speed over ground at `time` (samples' clock), m/s, from the last epoch and the change since; nil when
    /// nothing recent is known.
    public func speed(at time: Double) -> Double? {
        guard let last, knowsSpeed(at: time) else { return nil }
        return max(0, last.speed + change * max(0, time - last.arrival))
    }

    /// The vehicle's acceleration at `time` (samples' clock), m/s², in the frame of `angularRate` (rad/s), whose
    /// x is the vehicle's forward axis; zero when nothing recent is known.
    public func acceleration(at time: Double, angularRate ω: Vector3) -> Vector3 {
        guard let v = speed(at: time) else { return .zero }
        // v̇ x̂ + ω × (v x̂) = (v̇, v ω_z, −v ω_y).
        return Vector3(change, v * ω.z, -v * ω.y)
    }
}
