import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A rigid board moving through a known attitude history, as its gyroscope, accelerometer and
/// magnetometer would sense it, with the exact truth beside every sample.
///
/// The attitude is given as heading, pitch and roll over time (`AttitudeAngles`, forward-left-up sensor
/// axes), plus an optional angular vibration. The gyroscope reads the rotation from each sample's truth to
/// the next as a constant rate over the interval, so integrating it reproduces the truth exactly; then the
/// bias and white noise are added. The accelerometer reads the specific force (gravity's reaction plus the
/// board's linear acceleration and vibration) in sensor axes; the magnetometer the Earth field of the given
/// norm and dip (plus any disturbance, in ENU) in sensor axes. Sample times are `1/rate` apart, optionally
/// jittered.
public struct VirtualIMU: Sendable {
    public typealias Profile = @Sendable (Double) -> Double

    /// Degrees clockwise from magnetic north, of time in seconds.
    public var heading: Profile
    /// Degrees, nose up positive.
    public var pitch: Profile = { _ in 0 }
    /// Degrees, right side down positive (heel).
    public var roll: Profile = { _ in 0 }
    /// The board's linear acceleration in ENU, m/s², beyond gravity.
    public var acceleration: @Sendable (Double) -> Vector3 = { _ in .zero }
    /// A field added to the Earth's in ENU (a nearby magnet, a steel structure), in the field's units.
    public var disturbance: @Sendable (Double) -> Vector3 = { _ in .zero }
    /// Angular vibration: amplitude in degrees about each axis (different phases) at `vibrationFrequency`.
    public var angularVibration = 0.0
    /// Linear vibration along the sensor axes, m/s² amplitude, at `vibrationFrequency`.
    public var linearVibration = 0.0
    public var vibrationFrequency = 25.0

    /// Earth field magnitude (µT) and dip (degrees, positive down).
    public var fieldNorm = 50.0
    public var dip = 60.0
    public var gravity = 9.81

    /// Constant gyroscope bias, rad/s.
    public var gyroBias = Vector3.zero
    /// White-noise standard deviations per axis: rad/s, m/s², µT.
    public var gyroNoise = 0.0
    public var accNoise = 0.0
    public var magNoise = 0.0

    public var rate = 100.0
    /// Each sample time after the first is moved by up to ± this fraction of the interval (uniformly); below
    /// 0.5 the samples stay in order.
    public var timeJitter = 0.0
    public var seed: UInt64 = 1

    public init(heading: @escaping Profile) {
        self.heading = heading
    }

    /// A sample with the true orientation (sensor → ENU, y magnetic north) at its time.
    public struct Reading: Sendable {
        public var sample: IMUSample
        public var truth: Quaternion
    }

    /// The Earth field in ENU: north and down components from the norm and dip.
    public var earthField: Vector3 {
        let d = dip * .pi / 180
        return Vector3(0, fieldNorm * cos(d), -fieldNorm * sin(d))
    }

    /// The true orientation at time `t`.
    public func truth(at t: Double) -> Quaternion {
        var q = AttitudeAngles(heading: heading(t), pitch: pitch(t), roll: roll(t)).quaternion()
        if angularVibration != 0 {
            let w = 2 * .pi * vibrationFrequency * t
            let a = angularVibration * .pi / 180
            q = q * Quaternion(rotationVector: Vector3(a * sin(w), a * sin(w + 2.1), a * sin(w + 4.2)))
        }
        return q
    }

    /// What the sensors read at time `t`, without noise, bias or vibration, in sensor axes: the specific
    /// force (m/s²), the angular rate (rad/s, from the truth a millisecond either side) and the field. For
    /// register models read at times of their own (the simulator board, the agent tests).
    public func sensed(at t: Double) -> (specificForce: Vector3, angularRate: Vector3, field: Vector3) {
        let h = 1e-3
        let q = truth(at: t)
        let rate = (truth(at: t - h).conjugate * truth(at: t + h)).rotationVector / (2 * h)
        let toSensor = q.conjugate
        return (toSensor.rotate(acceleration(t) + Vector3(0, 0, gravity)), rate, toSensor.rotate(earthField + disturbance(t)))
    }

    /// The field at time `t` in Bearing's board frame (x forward, y right, z down): the sensor's
    /// forward-left-up axes with y and z turned round. For a `VirtualCompass` on the same board.
    public func boardField(at t: Double) -> Vector3 {
        let f = sensed(at: t).field
        return Vector3(f.x, -f.y, -f.z)
    }

    /// The motion an inertial register model senses at time `t`, its chip lying in the sensor's axes.
    public func motion(at t: Double) -> Motion {
        let s = sensed(at: t)
        return Motion(specificForce: s.specificForce, angularRate: s.angularRate)
    }

    /// A board like the demo's: heading, roll and pitch profiles with the Earth field of `earth`
    /// (north, east, down µT; its small east part is left out, as magnetic north is the reference).
    public static func board(earth: Vector3, heading: @escaping Profile, pitch: @escaping Profile, roll: @escaping Profile) -> VirtualIMU {
        var v = VirtualIMU(heading: heading)
        v.pitch = pitch
        v.roll = roll
        let horizontal = (earth.x * earth.x + earth.y * earth.y).squareRoot()
        v.fieldNorm = earth.length
        v.dip = atan2(earth.z, horizontal) * 180 / .pi
        return v
    }

    /// A board held still in each pose for `hold` seconds, moving to the next over `move` seconds (eased in
    /// and out): roll and pitch in degrees, heading fixed; after the last pose it holds that one, or with
    /// `repeating` starts the list again. For accelerometer calibrations and levels.
    public static func heldPoses(_ poses: [(roll: Double, pitch: Double)], hold: Double, move: Double, heading: Double = 0,
                                 repeating: Bool = false) -> VirtualIMU {
        precondition(!poses.isEmpty && hold > 0 && move > 0)
        let period = hold + move
        let list = repeating ? poses + [poses[0]] : poses
        let cycle = Double(poses.count) * period
        let at: @Sendable (Double) -> (roll: Double, pitch: Double) = { time in
            let t = repeating ? time.truncatingRemainder(dividingBy: cycle) : time
            let k = max(0, min(Int(t / period), list.count - 1))
            let phase = t - Double(k) * period
            guard phase > hold, k + 1 < list.count else { return list[k] }
            let x = (phase - hold) / move, s = x * x * (3 - 2 * x)
            return (list[k].roll + (list[k + 1].roll - list[k].roll) * s, list[k].pitch + (list[k + 1].pitch - list[k].pitch) * s)
        }
        var v = VirtualIMU(heading: { _ in heading })
        v.roll = { at($0).roll }
        v.pitch = { at($0).pitch }
        return v
    }

    /// The six faces up in turn (forward-left-up axes: +z, −z, +x, −x, +y, −y), as roll and pitch.
    public static let sixFaces: [(roll: Double, pitch: Double)] = [(0, 0), (180, 0), (0, 90), (0, -90), (90, 0), (-90, 0)]

    /// `duration` seconds of readings, the first at t = 0.
    public func readings(duration: Double) -> [Reading] {
        var rng = SplitMix64(seed: seed)
        let interval = 1 / rate
        let count = Int((duration * rate).rounded()) + 1
        var out: [Reading] = []
        out.reserveCapacity(count)
        var previous: (time: Double, truth: Quaternion)?
        let field = earthField
        for k in 0..<count {
            var t = Double(k) * interval
            if timeJitter > 0, k > 0 { t += rng.uniform(-timeJitter, timeJitter) * interval }
            let q = truth(at: t)
            let angularRate: Vector3
            if let previous {
                angularRate = (previous.truth.conjugate * q).rotationVector / (t - previous.time)
            } else {
                // The first sample reads the rate towards a point one interval ahead.
                angularRate = (q.conjugate * truth(at: t + interval)).rotationVector / interval
            }
            previous = (t, q)
            let toSensor = q.conjugate
            var specificForce = toSensor.rotate(acceleration(t) + Vector3(0, 0, gravity))
            if linearVibration != 0 {
                let w = 2 * .pi * vibrationFrequency * t
                specificForce = specificForce + Vector3(sin(w + 0.7), sin(w + 2.9), sin(w + 5.1)) * linearVibration
            }
            let magnetic = toSensor.rotate(field + disturbance(t))
            let sample = IMUSample(time: t,
                                   accelerometer: specificForce + noise(&rng, accNoise),
                                   gyroscope: angularRate + gyroBias + noise(&rng, gyroNoise),
                                   magnetometer: magnetic + noise(&rng, magNoise))
            out.append(Reading(sample: sample, truth: q))
        }
        return out
    }

    private func noise(_ rng: inout SplitMix64, _ sigma: Double) -> Vector3 {
        guard sigma > 0 else { return .zero }
        return Vector3(gaussian(&rng), gaussian(&rng), gaussian(&rng)) * sigma
    }

    private func gaussian(_ rng: inout SplitMix64) -> Double {
        let u1 = max(rng.uniform(0, 1), 1e-12), u2 = rng.uniform(0, 1)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
