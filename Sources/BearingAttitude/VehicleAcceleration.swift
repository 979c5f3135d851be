import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
///
/// **The forward axis, learnt.** Nobody tells Bearing how the board sits in the vehicle: a Pi on the side of a
/// console has its x across the car, a module under a seat may face aft. Taken out along the board's x, a car's
/// acceleration then tilts "up" in every corner and change of speed, by up to twice itself when the board faces
/// aft (`RoadDriveTests.testABoardMountedAnyWayRoundInTheCar`: 2.24° median on the straights, worst window 20°,
/// against 0.5° mounted straight). So the forward axis f is learnt from the drive, as receivers with dead
/// reckoning learn their IMU's mounting from the turns of a normal drive (u-blox, *ZED-F9R Integration manual*,
/// UBX-20039643, §3.2.4.1 "Automatic IMU-mount alignment"): the acceleration is v̇ f + ω × (v f) =
/// (v̇ I + [v ω]×) f, linear in f, so f is the least-squares fit of the accelerometer to it. Both sides are
/// high-passed alike (`highPassTime`): what is left of the specific force is the car's acceleration, not gravity
/// (a hill's grade changes over a minute; a corner's 3 m/s² lasts seconds), and no estimate of "up" (which the
/// compensation itself tilts) enters the fit. Its normal equations are summed over time while the speed is known,
/// with a prior of weight `priorWeight` on the board's x; f is the solution, normalised, once per epoch. The
/// centripetal term, at the gyroscope's instant, sets the axis across the turn (and so f in the plane); v̇, an
/// epoch late, confirms the sense along it.
///
/// **Without a speed** (no GNSS, or none yet) the corners alone give the axis's direction. In a turn at rate ω the
/// car's acceleration across it is ω × (v f), so (ω × v f) × ω = v |ω|² f for ω across f: the cross product of the
/// (high-passed) specific force with the rate points along f, scaled by v |ω|², whatever v is as long as the car
/// goes forward, and left and right turns alike. What else the force holds cancels over the turns both ways: a
/// change of speed (v̇ f × ω changes sign with the turn's), a lever arm's centripetal term (odd in ω). It cancels only
/// where the drive turned as much each way, which no drive does, so the left turns and the right ones are summed apart
/// and weighed alike (`balancedTurning`). Σ (a × ω) dt
/// is summed while no speed is known; once it is `speedlessWeight` long and points one way (`speedlessAgreement` of
/// Σ |a × ω| dt), its direction (the two sides' weighed alike, once both have turns) is the forward axis
/// (`forwardWithoutSpeed`), and the prior of the fit with speed
/// when that comes. It is what the IMU-mount alignment of dead-reckoning receivers does from the turns; here without
/// the wheel speed. Pure.
public struct VehicleAcceleration: Sendable {
    /// Seconds after a GNSS epoch (on the samples' clock) that its speed still tells the vehicle's: fixes come at
    /// 1 Hz, and one missed is allowed. What else reads a speed from the epochs (online calibration's
    /// `standingHold`) takes this too.
    public static let epochSpeedLifetime = 2.5
    /// Seconds after an epoch (on the samples' clock) that its speed is still used.
    public var staleAfter = VehicleAcceleration.epochSpeedLifetime
    /// The fastest change of speed taken as the vehicle's, m/s² (about 1 g: hard braking).
    public var maximumAcceleration = 10.0

    /// The last epoch: its speed (m/s), its time on the GNSS clock and when it reached the samples' clock.
    private var last: (speed: Double, fixTime: Double, arrival: Double)?
    /// The change of speed between the last two epochs, m/s²; nil where it is not known (the first epoch after none
    /// or a gap, a jump of speed), and then taken as none where the speed runs on and the acceleration is taken out.
    private var change: Double?
    /// The vehicle's forward axis in the samples' frame (unit): the board's x until the drive shows another.
    public private(set) var forward = Vector3(1, 0, 0)
    /// The high-pass's time constant, s: longer than a corner or a stop, shorter than a hill.
    public var highPassTime = 8.0
    /// The prior's weight on the board's x, (m/s²)²·s: a second of 2 m/s² of acceleration.
    public var priorWeight = 4.0
    /// The prior's weight on an axis kept from earlier drives (`restore`): ten seconds of 2 m/s², so that the first
    /// corners refine it and a board since turned in the car is found again within a few.
    public var keptWeight = 40.0
    /// How much the fit must have seen, (m/s²)²·s, before its axis is worth keeping: about five corners.
    public var learntWeight = 150.0
    /// The axis kept from earlier drives, which the prior pulls towards in place of the board's x.
    private var kept: Vector3?
    /// The fit's normal equations, Σ MᵀM dt (symmetric: xx, xy, xz, yy, yz, zz) and Σ Mᵀa dt, M = v̇ I + [v ω]×.
    private var normal = (xx: 0.0, xy: 0.0, xz: 0.0, yy: 0.0, yz: 0.0, zz: 0.0)
    private var moment = Vector3.zero
    /// The low-passed specific force, v̇ and v ω, and the sample they were last updated at (nil: start again).
    private var low: (force: Vector3, change: Double, turn: Vector3, time: Double)?
    /// Without a speed: the low-passed specific force and rate (nil: start again), and Σ (a × ω) dt and Σ |a × ω| dt
    /// of what is left of them.
    private var lowWithoutSpeed: (force: Vector3, rate: Vector3, time: Double)?
    /// Σ (a × ω) dt and Σ |a × ω| dt over one side's turns.
    private struct TurnSum {
        var sum = Vector3.zero
        var length = 0.0
        mutating func add(_ c: Vector3) {
            sum = sum + c
            length += c.length
        }
    }
    /// The left turns' sums and the right ones' apart (`balancedTurning`); both sides' together are the drive's.
    private var leftTurns = TurnSum(), rightTurns = TurnSum()
    /// How long Σ (a × ω) dt must be before its direction is taken, (m/s²)·(rad/s)·s: about five right-angle corners at
    /// town speeds (3 m/s² at 0.3 rad/s for 5 s each).
    public var speedlessWeight = 20.0
    /// The share of Σ |a × ω| dt that Σ (a × ω) dt must keep: the corners agree on a direction, noise does not.
    public var speedlessAgreement = 0.3
    /// The least yaw rate of a turn that counts, rad/s (2°/s), and the most rate about the horizontal, a share of it.
    public var turnRate = 2 * Double.pi / 180
    public var turnTilt = 0.25
    /// The least speed (m/s) the force across a turn must imply (|a × ω| / |ω|²): 2 m/s, a walking pace.
    public var turnSpeed = 2.0
    /// How far from the horizontal (degrees) the direction found may lie.
    public var speedlessElevation = 20.0
    /// The forward axis from the corners alone, once `speedlessWeight` and `speedlessAgreement` are met and it lies
    /// within `speedlessElevation` of the horizontal (nil before).
    public private(set) var forwardWithoutSpeed: Vector3?
    /// Σ up dt over the same turns: the vehicle's "up" from them (a body's roll outwards, one way in left turns and the
    /// other in right ones, cancels).
    private var upInTurns = Vector3.zero
    /// The vehicle's "up" (unit, the samples' frame) from the turns that found `forwardWithoutSpeed`; nil before.
    public var upWithoutSpeed: Vector3? { forwardWithoutSpeed == nil || upInTurns.length == 0 ? nil : upInTurns.normalized }

    public init() {}

    /// A GNSS epoch's speed over ground (m/s), at `fixTime` on the receiver's clock, reaching the samples'
    /// clock at `arrival`. A speed that is not one (negative, not finite) forgets what was known.
    public mutating func epoch(speed: Double, fixTime: Double, arrival: Double) {
        guard speed.isFinite, speed >= 0, fixTime.isFinite, arrival.isFinite else {
            last = nil
            change = nil
            return
        }
        // A fix repeated with the same time (gpsd repeating a frozen TPV) is no new epoch: its speed is stale.
        // One from before the last (the receiver's clock stepped back) starts again from itself.
        if let last, fixTime == last.fixTime { return }
        change = nil
        if let last, fixTime > last.fixTime, fixTime - last.fixTime <= staleAfter {
            let a = (speed - last.speed) / (fixTime - last.fixTime)
            if abs(a) <= maximumAcceleration { change = a }
        }
        last = (speed, fixTime, arrival)
        solveForward()
    }

    /// One inertial sample into the forward axis's fit: the specific force (m/s²) and angular rate (rad/s, bias
    /// out) in the samples' frame, at `time` (samples' clock). Nothing is learnt while the speed is not known.
    public mutating func observe(specificForce: Vector3, angularRate ω: Vector3, at time: Double) {
        guard let v = speed(at: time), let change else {
            low = nil
            return
        }
        let turn = ω * v
        guard let before = low, time > before.time, time - before.time <= 0.5 else {
            low = (specificForce, change, turn, time)
            return
        }
        let dt = time - before.time, k = min(1, dt / highPassTime)
        let force = before.force + (specificForce - before.force) * k
        let lowChange = before.change + (change - before.change) * k, lowTurn = before.turn + (turn - before.turn) * k
        low = (force, lowChange, lowTurn, time)
        // M = s I + [w]×: MᵀM = (s² + |w|²) I − w wᵀ, Mᵀa = s a − w × a.
        let a = specificForce - force, s = change - lowChange, w = turn - lowTurn
        let n = s * s + w.dot(w)
        normal.xx += (n - w.x * w.x) * dt
        normal.xy -= w.x * w.y * dt
        normal.xz -= w.x * w.z * dt
        normal.yy += (n - w.y * w.y) * dt
        normal.yz -= w.y * w.z * dt
        normal.zz += (n - w.z * w.z) * dt
        moment = moment + (a * s - w.cross(a)) * dt
    }

    /// One sample into Σ (a × ω) dt, for a vehicle without a speed known (the caller's to judge, with whether it tilts
    /// as a vehicle does): the specific force (m/s²) and angular rate (rad/s, bias out) in the samples' frame, and "up"
    /// there, at `time` (samples' clock). Only a turn about the vertical counts (a yaw rate of at least `turnRate`,
    /// the rate about the horizontal under `turnTilt` of it, and a force across it that implies at least `turnSpeed`):
    /// the derivation holds for ω across f, and a board in a hand, which turns every way, gives a cross product that
    /// means nothing. The direction is taken only when it lies within `speedlessElevation` degrees of the horizontal,
    /// as a vehicle's forward axis does; then it is `forward` while neither the fit with speed nor a kept axis has one.
    public mutating func observeTurn(specificForce: Vector3, angularRate ω: Vector3, up: Vector3, at time: Double) {
        guard let before = lowWithoutSpeed, time > before.time, time - before.time <= 0.5 else {
            lowWithoutSpeed = (specificForce, ω, time)
            return
        }
        let dt = time - before.time, k = min(1, dt / highPassTime)
        let force = before.force + (specificForce - before.force) * k, rate = before.rate + (ω - before.rate) * k
        lowWithoutSpeed = (force, rate, time)
        let yaw = ω.dot(up)
        guard abs(yaw) >= turnRate, (ω - up * yaw).length <= turnTilt * abs(yaw) else { return }
        // The speed the force across the turn implies (v = a / ω): a vehicle's, not a hand's turning on the spot.
        let a = specificForce - force, w = ω - rate
        guard a.cross(w).length >= turnSpeed * w.dot(w) else { return }
        let c = a.cross(w) * dt
        upInTurns = upInTurns + up * dt
        if yaw > 0 { leftTurns.add(c) } else { rightTurns.add(c) }
        let turning = leftTurns.sum + rightTurns.sum, n = turning.length
        guard n >= speedlessWeight, n >= speedlessAgreement * (leftTurns.length + rightTurns.length) else { return }
        let balanced = balancedTurning
        let f = balanced.length > 0 ? balanced.normalized : turning / n
        guard abs(f.dot(up)) <= sin(speedlessElevation * .pi / 180) else { return }
        forwardWithoutSpeed = f
        if kept == nil, !hasSeenSpeed { forward = f }
    }

    /// Σ (a × ω) dt with the left turns and the right ones weighed alike: each side's sum over its own Σ |a × ω| dt.
    /// What the force holds that is odd in the turn's rate (a change of speed through the turn, v̇ f × ω; a lever arm's
    /// centripetal term) cancels between a left turn and a right one, and so between the sums only where the drive
    /// turned as much each way. Zero until both sides have turns.
    var balancedTurning: Vector3 {
        guard leftTurns.length > 0, rightTurns.length > 0 else { return .zero }
        return leftTurns.sum / leftTurns.length + rightTurns.sum / rightTurns.length
    }

    /// Whether the axis known is the corners' alone (`forwardWithoutSpeed`): no speed has come on this drive, and no
    /// axis was kept from an earlier one.
    public var forwardFromCornersAlone: Bool { kept == nil && !hasSeenSpeed && forwardWithoutSpeed != nil }

    /// Whether the fit with speed has anything in it.
    private var hasSeenSpeed: Bool { normal.xx + normal.yy + normal.zz > 0 }

    /// Whether the fit has seen enough of the drive (`learntWeight`) for its axis to be kept.
    public var forwardLearnt: Bool { normal.xx + normal.yy + normal.zz >= learntWeight }
    /// Whether the axis is known: learnt on this drive, kept from earlier ones, or found from the corners alone before
    /// any speed came (the fit with speed, once it has some, is the one `forward` follows).
    public var forwardKnown: Bool { kept != nil || forwardLearnt || (forwardWithoutSpeed != nil && !hasSeenSpeed) }

    /// An axis kept from earlier drives (`DrivingDeviationRecord.forward`): in force at once, and the prior the
    /// fit starts from, at `keptWeight`.
    public mutating func restore(forward axis: Vector3) {
        guard axis.isFinite, axis.length > 0 else { return }
        kept = axis.normalized
        solveForward()
    }

    /// The samples' frame turned by `r` (new = r · old: a new mounting level): what was learnt in the old frame is
    /// put into the new one, not learnt again. Vectors turn with `r`; the fit's normal matrix N becomes r N rᵀ (its
    /// rows are the axes' weights, each a quadratic form in the frame's vectors).
    public mutating func changeFrame(by r: Matrix3) {
        func turn(_ v: Vector3) -> Vector3 { r * v }
        let n = Matrix3([normal.xx, normal.xy, normal.xz], [normal.xy, normal.yy, normal.yz], [normal.xz, normal.yz, normal.zz])
        let t = r * n * r.transposed
        normal = (t.rows[0].x, t.rows[0].y, t.rows[0].z, t.rows[1].y, t.rows[1].z, t.rows[2].z)
        moment = turn(moment)
        forward = turn(forward)
        kept = kept.map(turn)
        forwardWithoutSpeed = forwardWithoutSpeed.map(turn)
        leftTurns.sum = turn(leftTurns.sum)
        rightTurns.sum = turn(rightTurns.sum)
        upInTurns = turn(upInTurns)
        low = low.map { (turn($0.force), $0.change, turn($0.turn), $0.time) }
        lowWithoutSpeed = lowWithoutSpeed.map { (turn($0.force), turn($0.rate), $0.time) }
    }

    /// The forward axis from the fit and the prior; kept as it was where they give no direction.
    private mutating func solveForward() {
        let (axis, p) = kept.map { ($0, keptWeight) } ?? (forwardWithoutSpeed ?? Vector3(1, 0, 0), priorWeight)
        let m = Matrix3([normal.xx + p, normal.xy, normal.xz], [normal.xy, normal.yy + p, normal.yz],
                        [normal.xz, normal.yz, normal.zz + p])
        guard let inverse = m.inverse else { return }
        let f = inverse * (moment + axis * p)
        if f.isFinite, f.length > 0.1 { forward = f.normalized }
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
        return max(0, last.speed + (change ?? 0) * max(0, time - last.arrival))
    }

    /// The vehicle's acceleration at `time` (samples' clock), m/s², in the frame of `angularRate` (rad/s), along
    /// and about `forward`; zero when nothing recent is known.
    public func acceleration(at time: Double, angularRate ω: Vector3) -> Vector3 {
        guard let v = speed(at: time) else { return .zero }
        // v̇ f + ω × (v f): along x, (v̇, v ω_z, −v ω_y).
        return forward * (change ?? 0) + ω.cross(forward) * v
    }
}
