import BearingModel
/// Rate of turn for each attitude, °/min, positive turning to starboard (the heading growing, clockwise
/// seen from above), as NMEA's ROT, gpsd's ATT `rot` and Signal K's `navigation.rateOfTurn` (rad/s) count it.
///
/// - With a gyroscope (a fused attitude with a quaternion and an angular rate): the yaw rate in the level
///   frame, the board's angular rate turned into ENU by the attitude and taken about the vertical. A boat
///   heeled 20° in a steady turn reads the true rate, where the board's own z axis would see cos 20° of it
///   (6 % short).
/// - Otherwise (a magnetometer alone, or an accelerometer without a gyroscope): the slope of a least-squares
///   line through the (unwrapped) magnetic heading over the last `window` seconds; nil until half a window
///   of headings has come, and again after a gap longer than the window. Magnetic, not true: a declination
///   that changes (fallback position → fix) is not a turn.
public struct RateOfTurn: Sendable {
    /// Seconds of heading the derivative is fitted over.
    public let window: Double
    /// Recent (time, unwrapped heading) pairs, oldest first.
    private var recent: [(t: Double, h: Double)] = []

    public init(window: Double = 2) { self.window = window }

    /// `a` with `rateOfTurn` set (or nil when not yet known).
    public mutating func add(_ a: Attitude) -> Attitude {
        var out = a
        if let q = a.quaternion, let rate = a.angularRate {
            // °/s about the board's axes → ENU; about up is anticlockwise seen from above.
            out.rateOfTurn = -q.rotate(rate).z * 60
            recent.removeAll()
            return out
        }
        out.rateOfTurn = derivative(time: a.time.unixTime, heading: a.magneticHeading)
        return out
    }

    private mutating func derivative(time t: Double, heading: Double) -> Double? {
        if let last = recent.last {
            let dt = t - last.t
            guard dt > 0 else { return nil }
            if dt > window { recent.removeAll() }
        }
        var h = heading
        if let last = recent.last {
            var d = (heading - last.h).truncatingRemainder(dividingBy: 360)
            if d > 180 { d -= 360 } else if d <= -180 { d += 360 }
            h = last.h + d
        }
        recent.append((t, h))
        while let first = recent.first, t - first.t > window { recent.removeFirst() }
        guard recent.count >= 3, let first = recent.first, t - first.t >= window / 2 else { return nil }
        let n = Double(recent.count)
        var st = 0.0, sh = 0.0
        for p in recent { st += p.t - first.t; sh += p.h }
        let mt = st / n, mh = sh / n
        var num = 0.0, den = 0.0
        for p in recent {
            let dt = p.t - first.t - mt
            num += dt * (p.h - mh)
            den += dt * dt
        }
        return den > 0 ? num / den * 60 : nil
    }
}
