import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The effects a `RoadDrive` models beyond a rigid board in a clean field, each of which can be switched off
/// (for the ablation that tells which of them costs the estimator most). docs/simulation.md gives each one's
/// magnitude and where it comes from.
public struct RoadDriveEffects: Equatable, Sendable {
    /// The car's heading is its course plus a sideslip proportional to the lateral acceleration (2–5° in turns).
    public var sideslip = true
    /// Grades up to 8 % (pitch), and the vertical acceleration over crests and dips.
    public var hills = true
    /// Body roll in turns, pitch when braking and pulling away, the road's crossfall.
    public var bodyMotion = true
    /// Suspension: heave, pitch and roll bounce at about 1.3 Hz from the road's roughness, bumps and potholes.
    public var suspension = true
    /// Gyroscope white noise.
    public var gyroNoise = true
    /// Gyroscope turn-on bias and its random walk.
    public var gyroBias = true
    /// Gyroscope scale factor (sensitivity) off by 0.5–3 % an axis.
    public var gyroScale = true
    /// Accelerometer bias and white noise.
    public var accelerometerErrors = true
    /// Engine and road vibration on both inertial sensors (aliased by the 40 Hz sampling).
    public var vibration = true
    /// The sensor ~1.2 m ahead of and above the centre of rotation: tangential and centripetal acceleration.
    public var leverArm = true
    /// The board mounted 1–2° off the car in roll, pitch and yaw.
    public var misalignment = true
    /// The local field's declination and dip 1–3° off WMM's, its norm ±1.5 %.
    public var fieldOffWMM = true
    /// Parked cars, manhole covers, rails, a steel bridge and vehicles alongside: dipoles along the route.
    public var streetAnomalies = true
    /// The car's own iron, hard and linear soft (what the estimator models); off, the magnetometer reads the
    /// field outside the car.
    public var carIron = true
    /// The hard iron varying: engine start, loads switched on and off, the indicator, a slow thermal drift.
    public var varyingHardIron = true
    /// Soft iron with a Rayleigh (field-squared) term along a steel member's easy axis.
    public var nonlinearSoftIron = true
    /// Magnetometer white noise and quantisation.
    public var magnetometerNoise = true
    /// GNSS speed and course from 0.2–1 s before the fix's time.
    public var gnssLag = true
    /// GNSS position and velocity errors as Gauss–Markov processes.
    public var gnssNoise = true
    /// Multipath jumps of position and velocity in town.
    public var multipath = true

    public init() {}

    /// Every effect off: the route's trajectory sensed exactly, through the car's iron still unless `carIron`
    /// is switched off too.
    public static var none: RoadDriveEffects {
        var e = RoadDriveEffects()
        for (_, path) in switches where path != \.carIron { e[keyPath: path] = false }
        return e
    }

    /// Every effect off, the car's iron too: the trajectory and the local field sensed exactly, so that whatever the
    /// estimator gets wrong is its own.
    public static var exact: RoadDriveEffects {
        var e = none
        e.carIron = false
        return e
    }

    /// Each effect's name and switch, for ablations.
    public static var switches: [(name: String, path: WritableKeyPath<RoadDriveEffects, Bool>)] {
        [("sideslip", \.sideslip), ("hills", \.hills), ("bodyMotion", \.bodyMotion), ("suspension", \.suspension),
         ("gyroNoise", \.gyroNoise), ("gyroBias", \.gyroBias), ("gyroScale", \.gyroScale), ("accelerometerErrors", \.accelerometerErrors),
         ("vibration", \.vibration), ("leverArm", \.leverArm), ("misalignment", \.misalignment),
         ("fieldOffWMM", \.fieldOffWMM), ("streetAnomalies", \.streetAnomalies), ("carIron", \.carIron),
         ("varyingHardIron", \.varyingHardIron), ("nonlinearSoftIron", \.nonlinearSoftIron),
         ("magnetometerNoise", \.magnetometerNoise), ("gnssLag", \.gnssLag), ("gnssNoise", \.gnssNoise),
         ("multipath", \.multipath)]
    }
}

/// The Earth's field at a place as a model gives it (or as it is): declination (° east), dip (° down) and
/// norm (µT).
public struct RoadDriveField: Equatable, Sendable {
    public var declination: Double
    public var dip: Double
    public var norm: Double
    public init(declination: Double, dip: Double, norm: Double) {
        self.declination = declination
        self.dip = dip
        self.norm = norm
    }

    /// North, east, down components, µT.
    public var ned: Vector3 {
        let d = declination * .pi / 180, i = dip * .pi / 180
        return Vector3(norm * cos(i) * cos(d), norm * cos(i) * sin(d), norm * sin(i))
    }
}

/// One input of a drive, in the order a daemon would receive them.
public enum RoadDriveEvent: Sendable {
    case inertial(InertialSample)
    case magnetic(MagneticSample)
    case fix(GPSFix)
}

/// The truth at one inertial sample, computed from the trajectory alone.
public struct RoadDriveTruth: Sendable {
    public var time: Double
    /// The car's heading, pitch and roll (degrees; heading from true north, clockwise; pitch nose up; roll
    /// right side down), of its body, not of the board on it.
    public var heading: Double
    public var pitch: Double
    public var roll: Double
    /// The direction of travel (degrees from true north) and speed (m/s).
    public var course: Double
    public var speed: Double
    /// Yaw rate, °/s, and lateral acceleration, m/s² (positive to the right).
    public var yawRate: Double
    public var lateralAcceleration: Double
    /// Going straight at more than 5 m/s, with no curvature in the route within 3 s either side.
    public var straight: Bool
    public var kind: RoadKind
    /// The street's field at the sensor, µT (0 without anomalies).
    public var anomaly: Double
    /// The car's hard iron in force at the sensor, µT, board axes.
    public var hardIron: Vector3
}

/// A simulated car drive that departs from the estimator's model: a route with corners, bends, a roundabout,
/// lights, hills and bumps; a car that slips sideways in turns, rolls, pitches and bounces; an IMU mounted off
/// its axes, ahead of the centre of rotation, with noise, bias random walk and vibration; a magnetometer in a
/// local field off WMM's, past the street's iron, behind a hard iron that changes and a soft iron that is not
/// linear; GNSS at 1 Hz that lags, wanders and jumps in town. Everything follows from the trajectory through
/// this file's own kinematics (no code of the estimator's), so its truth is independent of what it judges.
///
/// The board's axes are forward-right-down (`Orientation(axes: "+X+Y+Z")`); times start at `start`.
public struct RoadDrive: Sendable {
    public struct Configuration: Sendable {
        public var seed: UInt64
        public var duration = 960.0
        /// Inertial and magnetometer rate, Hz: 40, 50, 100 or 200 (a divisor of the trajectory's 200 Hz).
        public var rate = 40.0
        /// The magnetometer gives every n-th of those samples (1: all; 10 at 100 Hz: the daemon's default rates,
        /// `imu.rate` 100, `magnetometer.rate` 10). The field is drawn at every sample all the same, so the drive is
        /// otherwise the one with all of them.
        public var magnetometerEvery = 1
        public var gnss = true
        public var effects = RoadDriveEffects()
        /// The model's field at the start (the estimator is given the same); the car's local field departs from it.
        public var model: RoadDriveField
        public var latitude = -33.9
        public var longitude = 151.2
        public var start = 1_780_000_000.0
        /// GNSS lag, s; nil draws one in 0.2…1 s.
        public var gnssLag: Double?
        /// GNSS fixes a second: 1, or a car's receiver set to 5 or 10 (its errors the same processes, sampled more often).
        public var gnssRate = 1.0
        /// The car's iron: each hard-iron axis drawn in ± this range, µT (random sign).
        public var hardIron = 10.0...35.0
        /// The car's soft iron: its diagonal drawn in 1 ± this, across ± half of it.
        public var softIron = 0.06
        /// A part of the car's soft iron that is not symmetric: the soft iron turned by this many degrees about the
        /// board's z axis (its "down", the car's vertical as mounted). A steel member beside the sensor, magnetised
        /// along its own length only, adds a field with a component across that length: a matrix of one column, whose
        /// antisymmetric part is such a turn. No magnitude, dip or gyroscope tells it from the heading itself (the
        /// estimator's soft iron is symmetric, as the default drives' is). 0: none, and no number drawn.
        public var softIronTwist = 0.0
        /// The board's mounting on the car (roll, pitch, yaw, degrees); nil draws 1–2° each, of random sign.
        public var mounting: Vector3?
        /// The drive starts in an underground steel-and-concrete car park and leaves it by aisles and a ramp turning
        /// through a whole circle (`RoadRoute.carParkPieces`): the deck's rebar below and above, steel columns and
        /// parked cars on both sides (`RoadAnomalies`, drawn from a stream of their own), and no GNSS fix while inside.
        public var carPark = false
        /// The drive starts nose first in a parking bay beside the street: after the wait at the start the car backs
        /// out, 2–5 m straight and then through a right angle (radius 5–6.5 m, at 1.2–2 m/s), stops for 1–3 s and
        /// drives off along the street (`ParkingBay`, drawn from a stream of its own). GNSS speed is a speed, never
        /// signed: the course while it backs is its tail's way.
        public var reverseStart = false
        public init(seed: UInt64, model: RoadDriveField) {
            self.seed = seed
            self.model = model
        }
    }

    public let configuration: Configuration
    /// Inertial, magnetic and fix events in arrival order.
    public private(set) var events: [RoadDriveEvent] = []
    /// The truth at each inertial sample, in order.
    public private(set) var truth: [RoadDriveTruth] = []
    /// The field where the car drives (before the street's anomalies).
    public let localField: RoadDriveField
    /// The lag of GNSS speed and course behind the fix's time, s.
    public let gnssLag: Double
    /// The board's mounting on the car: roll, pitch, yaw, degrees.
    public let mounting: Vector3
    /// The gyroscope's scale factor error an axis (0.01: it reads 1 % too much), board axes.
    public let gyroScaleError: Vector3
    /// The gyroscope's bias at the start, rad/s, board axes.
    public let initialGyroBias: Vector3
    /// How long the route is, metres, and how far the car drove.
    public let routeLength: Double
    public private(set) var distance = 0.0

    /// The trajectory's own step, s.
    static let step = 0.005

    public init(_ c: Configuration) {
        configuration = c
        let fx = c.effects
        var routeRandom = RoadDriveRandom(seed: c.seed, stream: 1)
        var carRandom = RoadDriveRandom(seed: c.seed, stream: 2)
        var fieldRandom = RoadDriveRandom(seed: c.seed, stream: 3)
        var gnssRandom = RoadDriveRandom(seed: c.seed, stream: 4)

        // MARK: The route and the car's constants
        let route = RoadRoute(length: c.duration * 16 + 2000, hills: fx.hills, carPark: c.carPark, random: &routeRandom)
        routeLength = route.length
        let wheelbase = 2.7
        let lateralLimit = carRandom.uniform(2.6, 3.4)
        let slipGradient = carRandom.uniform(1.0, 1.4) * .pi / 180  // rad per m/s²
        let rollGradient = carRandom.uniform(0.4, 0.6) * .pi / 180
        let pitchGradient = carRandom.uniform(0.15, 0.3) * .pi / 180
        let lever = Vector3(carRandom.uniform(1.0, 1.4), carRandom.uniform(-0.35, 0.35), carRandom.uniform(-0.6, -0.3))
        let mount = Vector3(carRandom.sign() * carRandom.uniform(1, 2), carRandom.sign() * carRandom.uniform(1, 2),
                            carRandom.sign() * carRandom.uniform(1, 2))
        mounting = c.mounting ?? (fx.misalignment ? mount : .zero)
        let lag = c.gnssLag ?? gnssRandom.uniform(0.2, 1.0)
        let lagUsed = fx.gnssLag ? lag : 0
        gnssLag = lagUsed

        // MARK: The trajectory at 200 Hz
        let h = Self.step
        let steps = Int(((c.duration + 2) / h).rounded()) + 2
        var rot = [M3](), velocity = [Vector3](), offset = [Vector3](), along = [Double](), speedAt = [Double]()
        var headingAt = [Double](), pitchAt = [Double](), rollAt = [Double](), courseAt = [Double](), lateralAt = [Double]()
        rot.reserveCapacity(steps); velocity.reserveCapacity(steps); offset.reserveCapacity(steps); along.reserveCapacity(steps)
        speedAt.reserveCapacity(steps); headingAt.reserveCapacity(steps); pitchAt.reserveCapacity(steps)
        rollAt.reserveCapacity(steps); courseAt.reserveCapacity(steps); lateralAt.reserveCapacity(steps)
        var bayRandom = RoadDriveRandom(seed: c.seed, stream: 8)
        let bay = c.reverseStart ? ParkingBay(street: route.courseAt(0), random: &bayRandom) : nil
        /// The metres still to back out of the bay (0: on the street).
        var bayLeft = bay?.length ?? 0
        var place = [Vector3]()
        place.reserveCapacity(steps)
        var pending = route.stops[...]
        var plan = route.plan(lateral: lateralLimit, braking: 1.8, pendingStops: pending)
        var s = 0.0, v = 0.0, a = 0.0, waiting = 15.0
        var slip = 0.0, bodyRoll = 0.0, bodyPitch = 0.0
        // Suspension modes: heave (m), pitch and roll (rad), each a damped oscillator (~1.3 Hz, ζ 0.3).
        var heave = (x: 0.0, v: 0.0), bounce = (x: 0.0, v: 0.0), sway = (x: 0.0, v: 0.0)
        let omega = 2 * .pi * 1.3, zeta = 0.3
        // The road's roughness as a force on each mode: unit Gauss–Markov processes of 50 ms, scaled to give
        // about 5 mm heave, 0.15° pitch and 0.1° roll at 15 m/s.
        var forcing = (heave: 0.0, pitch: 0.0, roll: 0.0)
        let forcingDecay = exp(-h / 0.05)
        var nextBump = 0, rearBumps: [(at: Double, size: Double, side: Double)] = []
        for k in 0..<steps {
            let t = Double(k) * h
            // The driver: waits at the start and at lights, follows the plan with a lagged acceleration.
            let backing = bayLeft > 0
            if waiting > 0 {
                waiting -= h
                v = 0; a = 0
                if waiting <= 0, let stop = pending.first, s >= stop.at - 3 {
                    pending = pending.dropFirst()
                    plan = route.plan(lateral: lateralLimit, braking: 1.8, pendingStops: pending)
                }
            } else if let bay, backing {
                // Backing out (`a` the rate of the speed, which is backwards): up to the bay's speed, then braking to
                // stop where its path meets the street.
                let wanted = bayLeft <= v * v / (2 * 0.6) + 0.05 ? -v * v / (2 * max(bayLeft, 0.05)) : min(0.8, 1.2 * (bay.speed - v))
                a += (wanted - a) * h / 0.3
                if wanted < 0 { a = min(a, wanted) }
                v = max(0, v + a * h)
                bayLeft -= v * h
                if bayLeft <= 0.02 || (v < 0.05 && a < 0) { bayLeft = 0; v = 0; a = 0; waiting = bay.pause }
            } else {
                let target = route.at(plan, s + v * 0.6)
                let pull = max(0.9, 2.2 - 0.06 * v)
                let wanted = max(-3.5, min(pull, 1.2 * (target - v)))
                a += (wanted - a) * h / 0.5
                if let stop = pending.first, stop.at - s < 25 {
                    let gap = max(stop.at - s, 0.05)
                    a = min(a, -v * v / (2 * gap))
                    if v + a * h <= 0.02 || s >= stop.at { v = 0; a = 0; waiting = stop.wait }
                }
                v = max(0, v + a * h)
                if v == 0 && a < 0 { a = 0 }
            }
            if !backing { s = min(s + v * h, route.length - 1) }
            let kappa = route.at(route.curvature, s)
            let gamma = atan(route.at(route.grade, s))
            let chi = route.courseAt(s)
            let lateral = v * v * kappa
            // Sideslip (nose into the turn) and body roll and pitch lag the forces by a tyre's and a damper's time.
            let slipWanted = fx.sideslip ? max(-5 * .pi / 180, min(5 * .pi / 180, slipGradient * lateral)) : 0
            slip += (slipWanted - slip) * h / 0.3
            // (Backing out of a bay, the forward acceleration is −a and the force across the car the bay's own.)
            let forwardAcceleration = backing ? -a : a
            let across = backing ? (bay?.lateral(bayLeft, speed: v) ?? 0) : lateral
            bodyRoll += ((fx.bodyMotion ? -rollGradient * across : 0) - bodyRoll) * h / 0.25
            bodyPitch += ((fx.bodyMotion ? pitchGradient * forwardAcceleration : 0) - bodyPitch) * h / 0.25
            // The suspension: the road's roughness grows with speed; bumps kick the front axle, then the rear.
            let rough = fx.suspension ? min(1, v / 15) : 0
            let fresh = (1 - forcingDecay * forcingDecay).squareRoot()
            forcing = (forcing.heave * forcingDecay + carRandom.gaussian() * fresh, forcing.pitch * forcingDecay + carRandom.gaussian() * fresh,
                       forcing.roll * forcingDecay + carRandom.gaussian() * fresh)
            let kick = (heave: forcing.heave * 0.4 * rough, pitch: forcing.pitch * 0.21 * rough, roll: forcing.roll * 0.14 * rough)
            if fx.suspension {
                while nextBump < route.bumps.count, route.bumps[nextBump].at <= s + wheelbase / 2 {
                    let b = route.bumps[nextBump]
                    let scale = min(1, v / 8)
                    heave.v -= b.size * scale; bounce.v += b.size * scale / wheelbase * 2; sway.v += b.side * b.size * scale / 1.6
                    rearBumps.append(b)
                    nextBump += 1
                }
                while let b = rearBumps.first, b.at <= s - wheelbase / 2 {
                    let scale = min(1, v / 8)
                    heave.v -= b.size * scale; bounce.v -= b.size * scale / wheelbase * 2; sway.v += b.side * b.size * scale / 1.6
                    rearBumps.removeFirst()
                }
            } else {
                while nextBump < route.bumps.count, route.bumps[nextBump].at <= s { nextBump += 1 }
            }
            heave.v += (-2 * zeta * omega * heave.v - omega * omega * heave.x + kick.heave) * h; heave.x += heave.v * h
            bounce.v += (-2 * zeta * omega * bounce.v - omega * omega * bounce.x + kick.pitch) * h; bounce.x += bounce.v * h
            sway.v += (-2 * zeta * omega * sway.v - omega * omega * sway.x + kick.roll) * h; sway.x += sway.v * h

            var psi = chi + slip, course = chi
            let theta = gamma + bodyPitch + bounce.x
            var moving = Vector3(cos(gamma) * cos(chi), cos(gamma) * sin(chi), -sin(gamma)) * v
            var here = Vector3(route.at(route.north, s), route.at(route.east, s), route.at(route.down, s))
            if let bay, backing {
                // In the bay (waiting, then backing out): its path's heading and place, moving tail first on the flat.
                let u = bayLeft
                psi = bay.heading(u); course = psi + .pi
                moving = Vector3(-cos(psi), -sin(psi), 0) * v
                here = bay.position(u)
            }
            let phi = (fx.bodyMotion ? route.at(route.camber, s) : 0) + bodyRoll + sway.x
            let r = M3.bodyToNED(roll: phi, pitch: theta, yaw: psi)
            rot.append(r)
            velocity.append(moving)
            place.append(here)
            offset.append((fx.leverArm ? r * lever : .zero) + Vector3(0, 0, heave.x))
            along.append(s); speedAt.append(v)
            headingAt.append(psi); pitchAt.append(theta); rollAt.append(phi); courseAt.append(course); lateralAt.append(across)
            _ = t
        }
        distance = s

        // "Going straight": no curvature within 3 s either side (on the grid the car drove), at more than 5 m/s.
        let turningStep = along.map { abs(route.curvature[route.index($0)]) > 1e-4 }
        var lastTurn = -1_000_000, turnedRecently = [Bool](repeating: false, count: steps)
        for k in 0..<steps { if turningStep[k] { lastTurn = k }; turnedRecently[k] = k - lastTurn <= 600 }
        var nextTurn = 1_000_000
        var straightAt = [Bool](repeating: false, count: steps)
        for k in stride(from: steps - 1, through: 0, by: -1) {
            if turningStep[k] { nextTurn = k }
            straightAt[k] = !turnedRecently[k] && nextTurn - k > 600 && speedAt[k] > 5
        }

        // MARK: The field where the car drives
        let dDecl = fieldRandom.sign() * fieldRandom.uniform(1, 3), dDip = fieldRandom.sign() * fieldRandom.uniform(1, 3)
        let dNorm = fieldRandom.uniform(-0.015, 0.015)
        localField = fx.fieldOffWMM
            ? RoadDriveField(declination: c.model.declination + dDecl, dip: c.model.dip + dDip, norm: c.model.norm * (1 + dNorm))
            : c.model
        let earth = localField.ned
        var carParkRandom = RoadDriveRandom(seed: c.seed, stream: 7)
        let street = RoadAnomalies(route: route, random: &fieldRandom, duration: c.duration,
                                   carPark: c.carPark ? RoadRoute.carParkLength : 0, carParkRandom: &carParkRandom)
        // The car's iron: hard 10–35 µT an axis, soft ±6 % (±3 % across) by default, a Rayleigh term along one easy axis.
        let (hardLow, hardHigh, spread) = (c.hardIron.lowerBound, c.hardIron.upperBound, c.softIron)
        let hard0 = Vector3(fieldRandom.sign() * fieldRandom.uniform(hardLow, hardHigh), fieldRandom.sign() * fieldRandom.uniform(hardLow, hardHigh),
                            fieldRandom.sign() * fieldRandom.uniform(hardLow, hardHigh))
        let o = (fieldRandom.uniform(-spread / 2, spread / 2), fieldRandom.uniform(-spread / 2, spread / 2), fieldRandom.uniform(-spread / 2, spread / 2))
        let symmetric = M3(1 + fieldRandom.uniform(-spread, spread), o.0, o.1, o.0, 1 + fieldRandom.uniform(-spread, spread), o.2,
                           o.1, o.2, 1 + fieldRandom.uniform(-spread, spread))
        let twist = c.softIronTwist * .pi / 180
        let soft = twist == 0 ? symmetric : M3(cos(twist), -sin(twist), 0, sin(twist), cos(twist), 0, 0, 0, 1) * symmetric
        let easy = fieldRandom.direction(1)
        let rayleigh = fieldRandom.uniform(0.02, 0.035)  // the extra induced field is rayleigh · (B·a)² / 50 µT
        let engineStart = fieldRandom.direction(fieldRandom.uniform(1.5, 3))
        var loads: [(vector: Vector3, on: Bool, next: Double)] = (0..<4).map { _ in
            (fieldRandom.direction(fieldRandom.uniform(0.5, 4)), false, fieldRandom.uniform(60, 400))
        }
        let indicator = fieldRandom.direction(fieldRandom.uniform(0.2, 0.5))
        var thermal = Vector3.zero
        let magNoise = 0.3, quantum = 0.1

        // MARK: Inertial errors
        var imuRandom = RoadDriveRandom(seed: c.seed, stream: 5)
        var scaleRandom = RoadDriveRandom(seed: c.seed, stream: 6)
        let gyroScale0 = Vector3(scaleRandom.sign() * scaleRandom.uniform(0.005, 0.03), scaleRandom.sign() * scaleRandom.uniform(0.005, 0.03),
                                 scaleRandom.sign() * scaleRandom.uniform(0.005, 0.03))
        let gyroScale = fx.gyroScale ? gyroScale0 : .zero
        gyroScaleError = gyroScale
        let gyroBias0 = imuRandom.vector(0.1 * .pi / 180)
        initialGyroBias = fx.gyroBias ? gyroBias0 : .zero
        var gyroBias = gyroBias0
        let gyroWalk = 5e-4 * .pi / 180  // rad/s per √s
        let accBias = imuRandom.vector(0.05)
        let interval = 1 / c.rate
        let gyroSigma = 0.005 * .pi / 180 * (c.rate / 2).squareRoot()  // 0.005 °/s/√Hz over rate/2
        let accSigma = 150e-6 * 9.81 * (c.rate / 2).squareRoot()  // 150 µg/√Hz
        var vibAcc = Vector3.zero, vibGyro = Vector3.zero
        // The road's vibration is an AR(1) with a time constant of its own (36 ms: 0.5 a sample at 40 Hz), its draws
        // scaled to keep its variance, so that its spectrum is the same at any rate (0.5 a sample at every rate made it
        // five times wider at 200 Hz, a fifth of its power below the rest test's 4.5 Hz). At 40 Hz, as before: 0.5 and 0.87.
        let roadMemory = pow(0.5, 40 * interval)
        let roadDraw = 0.87 * ((1 - roadMemory * roadMemory) / 0.75).squareRoot()
        let board = M3.bodyToNED(roll: mounting.x * .pi / 180, pitch: mounting.y * .pi / 180, yaw: mounting.z * .pi / 180).transposed

        // MARK: GNSS errors
        var posError = Vector3.zero, velError = Vector3.zero
        var jump: (until: Double, position: Vector3, velocity: Vector3)?
        var nextJump = gnssRandom.uniform(10, 40)

        /// A fix for GNSS time `tf`: the trajectory `gnssLag` earlier, plus Gauss–Markov errors (position 1.5 m,
        /// 60 s; velocity 0.08 m/s an axis, 5 s) and, in town, multipath jumps.
        func fix(at tf: Double) -> GPSFix {
            let kk = max(1, min(steps - 2, Int(((tf - lagUsed) / h).rounded())))
            let dt = 1 / c.gnssRate
            let pa = exp(-dt / 60), va = exp(-dt / 5)
            let pNoise = gnssRandom.vector(1.5 * (1 - pa * pa).squareRoot()), vNoise = gnssRandom.vector(0.08 * (1 - va * va).squareRoot())
            posError = posError * pa + pNoise
            velError = velError * va + vNoise
            let town = route.kind[route.index(along[kk])] == .town
            let jumpDraw = (position: gnssRandom.direction(gnssRandom.uniform(5, 25)), velocity: gnssRandom.direction(gnssRandom.uniform(0.3, 1.5)),
                            length: gnssRandom.uniform(2, 8), gap: gnssRandom.uniform(10, 60))
            if fx.multipath, town, jump == nil, tf >= nextJump {
                jump = (tf + jumpDraw.length, Vector3(jumpDraw.position.x, jumpDraw.position.y, 0), Vector3(jumpDraw.velocity.x, jumpDraw.velocity.y, 0))
                nextJump = tf + jumpDraw.length + jumpDraw.gap
            }
            if let j = jump, tf >= j.until { jump = nil }
            var pos = Vector3(place[kk].x, place[kk].y, 0)
            var vel = Vector3(velocity[kk].x, velocity[kk].y, 0)
            if fx.gnssNoise { pos = pos + Vector3(posError.x, posError.y, 0); vel = vel + Vector3(velError.x, velError.y, 0) }
            if let j = jump { pos = pos + j.position; vel = vel + j.velocity }
            var f = GPSFix(mode: .threeD, time: GPSTimestamp(unixTime: c.start + tf),
                           latitude: c.latitude + pos.x / 111_320,
                           longitude: c.longitude + pos.y / (111_320 * cos(c.latitude * .pi / 180)))
            let speed = (vel.x * vel.x + vel.y * vel.y).squareRoot()
            f.speed = speed
            f.track = Self.degrees(atan2(vel.y, vel.x))
            f.eps = 0.3
            f.eph = 2.5
            f.altHAE = 40 - place[kk].z
            return f
        }

        // MARK: The samples
        let every = max(1, Int((1 / (c.rate * h)).rounded()))
        let sampleCount = Int(c.duration * c.rate)
        events.reserveCapacity(sampleCount * 2 + Int(c.duration) + 2)
        truth.reserveCapacity(sampleCount + 1)
        var nextFix = 1.0
        let fixLatency = 0.1
        let g = Vector3(0, 0, 9.81)
        for j in 1...sampleCount {
            let k = j * every
            let t = Double(k) * h
            let time = GPSTimestamp(unixTime: c.start + t)
            let r = rot[k]
            // Angular rate from the rotation a step either side; acceleration from the velocity and the
            // sensor's offset (lever arm and heave) by central differences.
            let dr = rot[k - 1].transposed * rot[k + 1]
            let omegaBody = Vector3(dr.m21 - dr.m12, dr.m02 - dr.m20, dr.m10 - dr.m01) / (2 * 2 * h)
            let accNED = (velocity[k + 1] - velocity[k - 1]) / (2 * h) + (offset[k + 1] - offset[k] * 2 + offset[k - 1]) / (h * h)
            let specific = r.transposed * (accNED - g)
            // Vibration: road (speed-dependent, band-limited) and the engine's second order, sampled without a
            // perfect anti-alias filter.
            let v = speedAt[k], engineOn = t > 2
            let rpm = v < 0.5 ? 750 : min(3000, 1100 + 90 * v)
            let engine = 2 * .pi * 2 * rpm / 60 * t
            let roadAcc = 0.12 + 0.025 * v, roadGyro = (0.04 + 0.012 * v) * .pi / 180
            vibAcc = vibAcc * roadMemory + imuRandom.vector(roadAcc * roadDraw)
            vibGyro = vibGyro * roadMemory + imuRandom.vector(roadGyro * roadDraw)
            let engineAcc = engineOn ? Vector3(0.05 * sin(engine), 0.04 * sin(engine + 1), 0.12 * sin(engine + 2)) : .zero
            let engineGyro = engineOn ? Vector3(sin(engine + 0.5), sin(engine + 1.5), sin(engine + 2.5)) * (0.04 * .pi / 180) : .zero
            let vibrationAcc = fx.vibration ? Vector3(vibAcc.x, vibAcc.y, vibAcc.z * 1.5) + engineAcc : .zero
            let vibrationGyro = fx.vibration ? vibGyro + engineGyro : .zero
            gyroBias = gyroBias + imuRandom.vector(gyroWalk * interval.squareRoot())
            let gyroWhite = imuRandom.vector(gyroSigma), accWhite = imuRandom.vector(accSigma)
            let rate = board * omegaBody
            let gyro = Vector3(rate.x * (1 + gyroScale.x), rate.y * (1 + gyroScale.y), rate.z * (1 + gyroScale.z)) + (fx.gyroBias ? gyroBias : .zero) + (fx.gyroNoise ? gyroWhite : .zero) + vibrationGyro
            let acc = board * specific + (fx.accelerometerErrors ? accBias + accWhite : .zero) + vibrationAcc

            // The field at the sensor: the Earth's and the street's, through the car's iron.
            let position = place[k] + offset[k] - Vector3(0, 0, 1.3)
            let anomalyNED = street.field(at: position, along: along[k])
            let anomalyBody = street.alongside(time: t)
            let anomaly = r.transposed * anomalyNED + anomalyBody
            let outside = board * (r.transposed * earth + (fx.streetAnomalies ? anomaly : .zero))
            for i in loads.indices where t >= loads[i].next {
                loads[i].on.toggle()
                loads[i].next = t + fieldRandom.uniform(40, 300)
            }
            thermal = thermal * (1 - interval / 400) + fieldRandom.vector(0.7 * (2 * interval / 400).squareRoot())
            let flashing = route.indicating[route.index(along[k])] && (t * 1.5).truncatingRemainder(dividingBy: 1) < 0.5
            var hard = hard0
            if fx.varyingHardIron {
                if engineOn { hard = hard + engineStart }
                for load in loads where load.on { hard = hard + load.vector }
                if flashing { hard = hard + indicator }
                hard = hard + thermal
            }
            var sensed = outside
            if fx.carIron {
                sensed = soft * outside + hard
                if fx.nonlinearSoftIron {
                    let axial = easy.dot(outside)
                    sensed = sensed + easy * (rayleigh * axial * abs(axial) / 50)
                }
            }
            let noise = fieldRandom.vector(magNoise)
            if fx.magnetometerNoise {
                sensed = sensed + noise
                sensed = Vector3((sensed.x / quantum).rounded() * quantum, (sensed.y / quantum).rounded() * quantum,
                                 (sensed.z / quantum).rounded() * quantum)
            }

            // GNSS: fixes whose time has come arrive a moment later, between the samples.
            while c.gnss && t >= nextFix + fixLatency {
                // Underground no fix comes (drawn all the same: the errors after it are those of the drive without).
                let fixed = fix(at: nextFix)
                if !c.carPark || along[k] > RoadRoute.carParkLength { events.append(.fix(fixed)) }
                nextFix += 1 / c.gnssRate
            }
            events.append(.inertial(InertialSample(time: time, device: "road", chip: "vn100", acceleration: acc, angularRate: gyro)))
            if j % max(1, c.magnetometerEvery) == 0 {
                events.append(.magnetic(MagneticSample(time: time, device: "road", chip: "vn100", field: sensed)))
            }
            truth.append(RoadDriveTruth(time: t, heading: Self.degrees(headingAt[k]), pitch: pitchAt[k] * 180 / .pi,
                                        roll: rollAt[k] * 180 / .pi, course: Self.degrees(courseAt[k]), speed: v,
                                        yawRate: (headingAt[k + 1] - headingAt[k - 1]) / (2 * h) * 180 / .pi,
                                        lateralAcceleration: lateralAt[k], straight: straightAt[k],
                                        kind: route.kind[route.index(along[k])], anomaly: fx.streetAnomalies ? anomaly.length : 0,
                                        hardIron: fx.carIron ? hard : .zero))
        }

    }

    static func degrees(_ radians: Double) -> Double {
        var d = (radians * 180 / .pi).truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        return d
    }
}

/// A 3×3 matrix of nine stored numbers (the model's `Matrix3` keeps rows in an array: slow per sample in a
/// debug build), with only what the drive needs.
struct M3: Sendable {
    var m00, m01, m02, m10, m11, m12, m20, m21, m22: Double

    init(_ m00: Double, _ m01: Double, _ m02: Double, _ m10: Double, _ m11: Double, _ m12: Double,
         _ m20: Double, _ m21: Double, _ m22: Double) {
        (self.m00, self.m01, self.m02, self.m10, self.m11, self.m12, self.m20, self.m21, self.m22) =
            (m00, m01, m02, m10, m11, m12, m20, m21, m22)
    }

    /// Body (forward-right-down) to north-east-down for yaw ψ, pitch θ, roll φ (z-y-x), from first principles:
    /// Rz(ψ)·Ry(θ)·Rx(φ).
    static func bodyToNED(roll φ: Double, pitch θ: Double, yaw ψ: Double) -> M3 {
        let (cf, sf, ct, st, cp, sp) = (cos(φ), sin(φ), cos(θ), sin(θ), cos(ψ), sin(ψ))
        return M3(cp * ct, cp * st * sf - sp * cf, cp * st * cf + sp * sf,
                  sp * ct, sp * st * sf + cp * cf, sp * st * cf - cp * sf,
                  -st, ct * sf, ct * cf)
    }

    var transposed: M3 { M3(m00, m10, m20, m01, m11, m21, m02, m12, m22) }

    static func * (a: M3, v: Vector3) -> Vector3 {
        Vector3(a.m00 * v.x + a.m01 * v.y + a.m02 * v.z, a.m10 * v.x + a.m11 * v.y + a.m12 * v.z, a.m20 * v.x + a.m21 * v.y + a.m22 * v.z)
    }

    static func * (a: M3, b: M3) -> M3 {
        M3(a.m00 * b.m00 + a.m01 * b.m10 + a.m02 * b.m20, a.m00 * b.m01 + a.m01 * b.m11 + a.m02 * b.m21, a.m00 * b.m02 + a.m01 * b.m12 + a.m02 * b.m22,
           a.m10 * b.m00 + a.m11 * b.m10 + a.m12 * b.m20, a.m10 * b.m01 + a.m11 * b.m11 + a.m12 * b.m21, a.m10 * b.m02 + a.m11 * b.m12 + a.m12 * b.m22,
           a.m20 * b.m00 + a.m21 * b.m10 + a.m22 * b.m20, a.m20 * b.m01 + a.m21 * b.m11 + a.m22 * b.m21, a.m20 * b.m02 + a.m21 * b.m12 + a.m22 * b.m22)
    }
}

/// The street's iron as point dipoles along the route, felt as the car passes: parked cars, manhole covers
/// and rebar, tram rails in town, a steel bridge on the arterial road, and vehicles driving alongside.
struct RoadAnomalies {
    /// A dipole at a fixed place: position (m, NED), moment (µT·m³: the field is (3(m·r̂)r̂ − m)/r³), and its
    /// distance along the route, for finding the near ones.
    struct Dipole { var position: Vector3; var moment: Vector3; var along: Double }
    var dipoles: [Dipole] = []
    /// Vehicles alongside: from `start` for `length` seconds, a dipole `lateral` m to the side moving along
    /// the route at `relative` m/s with respect to the car.
    var alongside: [(start: Double, length: Double, lateral: Double, relative: Double, moment: Vector3)] = []

    /// A dipole whose field at `distance` (closest approach) is about `peak` µT.
    static func moment(peak: Double, distance: Double, random: inout RoadDriveRandom) -> Vector3 {
        random.direction(peak * distance * distance * distance / 1.5)
    }

    init(route: RoadRoute, random: inout RoadDriveRandom, duration: Double, carPark: Double = 0,
         carParkRandom: inout RoadDriveRandom) {
        /// A dipole `lateral` m right of the road's centre line, `depth` m below its surface, of about `peak` µT
        /// at the sensor (1.3 m above the road) as it passes.
        func place(_ s: Double, lateral: Double, depth: Double, peak: Double) {
            place(s, lateral: lateral, depth: depth, peak: peak, random: &random)
        }
        func place(_ s: Double, lateral: Double, depth: Double, peak: Double, random: inout RoadDriveRandom) {
            let distance = max(0.5, (lateral * lateral + (depth + 1.3) * (depth + 1.3)).squareRoot())
            let moment = Self.moment(peak: peak, distance: distance, random: &random)
            let k = route.index(s), chi = route.course[k]
            let right = Vector3(-sin(chi), cos(chi), 0)
            let p = Vector3(route.north[k], route.east[k], route.down[k] + depth) + right * lateral
            dipoles.append(Dipole(position: p, moment: moment, along: s))
        }
        var s = 20.0
        while s < route.length - 20 {
            let k = route.index(s)
            switch route.kind[k] {
            case .town:
                // Parked cars at the kerb (2–5 µT at the sensor), manhole covers and rebar (5–20 µT, a few metres).
                if random.chance(0.6) {
                    let lateral = -random.uniform(2.2, 3.2)
                    place(s, lateral: lateral, depth: -0.5, peak: random.uniform(2, 6))
                }
                if random.chance(0.3) {
                    place(s + random.uniform(-5, 5), lateral: random.uniform(-1, 1), depth: 0.1,
                          peak: random.uniform(5, 20))
                }
                s += random.uniform(8, 25)
            case .suburb:
                if random.chance(0.4) {
                    let lateral = -random.uniform(2.2, 3.5)
                    place(s, lateral: lateral, depth: -0.5, peak: random.uniform(1, 4))
                }
                if random.chance(0.15) {
                    place(s, lateral: random.uniform(-1, 1), depth: 0.3, peak: random.uniform(3, 12))
                }
                s += random.uniform(20, 60)
            case .arterial:
                if route.bridge[k] {
                    // A steel bridge: girders below the deck and trusses at the sides every 4 m, tens of µT.
                    place(s, lateral: random.uniform(-1, 1), depth: 1.8, peak: random.uniform(10, 30))
                    place(s, lateral: -5, depth: -1, peak: random.uniform(3, 10))
                    place(s, lateral: 5, depth: -1, peak: random.uniform(3, 10))
                    s += 4
                } else {
                    if random.chance(0.1) {
                        place(s, lateral: random.uniform(-1, 1), depth: 0.5, peak: random.uniform(2, 8))
                    }
                    s += random.uniform(40, 120)
                }
            }
        }
        // Tram rails along one town street in each loop: a rail every 1.5 m of lateral, joints every 12 m.
        var k = 0
        while k < route.kind.count {
            if route.kind[k] == .town && random.chance(0.002) {
                let s0 = Double(k) * RoadRoute.step
                var x = s0
                while x < s0 + 150 && x < route.length - 20 {
                    for lateral in [-0.75, 0.75] {
                        place(x, lateral: lateral, depth: 0.1, peak: random.uniform(2, 6))
                    }
                    x += 12
                }
                k += Int(2000 / RoadRoute.step)
            } else {
                k += 1
            }
        }
        // An underground car park over the first `carPark` metres, its magnitudes from measurements inside buildings,
        // whose steel moves the field by tens of µT over metres (B. Li, T. Gallagher, A. G. Dempster, C. Rizos, "How
        // feasible is the use of magnetic field alone for indoor positioning?", IPIN 2012): the slab's rebar below the
        // wheels (5–25 µT at the sensor, every 1.5–3 m), the deck above (2.6 m over the road: 5–20 µT, every 2–4 m),
        // steel-reinforced columns beside the aisle every 8 m (10–30 µT), and cars parked both sides (3–8 µT).
        var x = 0.0
        while carPark > 0 && x < carPark {
            place(x, lateral: carParkRandom.uniform(-1.5, 1.5), depth: 0.2, peak: carParkRandom.uniform(5, 25), random: &carParkRandom)
            if carParkRandom.chance(0.7) {
                place(x + carParkRandom.uniform(0, 2), lateral: carParkRandom.uniform(-2, 2), depth: -2.6, peak: carParkRandom.uniform(5, 20), random: &carParkRandom)
            }
            if Int(x / 8) != Int((x + 2.25) / 8) {
                place(x, lateral: carParkRandom.sign() * 3.5, depth: -1.3, peak: carParkRandom.uniform(10, 30), random: &carParkRandom)
            }
            for side in [-1.0, 1.0] where carParkRandom.chance(0.8) {
                place(x, lateral: side * carParkRandom.uniform(2.5, 3.0), depth: -0.5, peak: carParkRandom.uniform(3, 8), random: &carParkRandom)
            }
            x += carParkRandom.uniform(1.5, 3)
        }
        dipoles.sort { $0.along < $1.along }
        // Vehicles alongside: a car or a lorry in the next lane for 5–30 s, every couple of minutes.
        var t = random.uniform(60, 150)
        while t < duration {
            let lorry = random.chance(0.3)
            let lateral = random.sign() * random.uniform(3, 3.8)
            alongside.append((t, random.uniform(5, 30), lateral, random.uniform(-1.5, 1.5),
                              Self.moment(peak: lorry ? random.uniform(5, 15) : random.uniform(1.5, 5), distance: abs(lateral), random: &random)))
            t += random.uniform(60, 180)
        }
    }

    static func dipole(_ m: Vector3, at r: Vector3) -> Vector3 {
        let d = r.length
        guard d > 0.3 else { return .zero }
        let u = r / d
        return (u * (3 * m.dot(u)) - m) / (d * d * d)
    }

    /// The street's fixed iron's field (µT, NED) at `p`, `along` metres down the route.
    func field(at p: Vector3, along s: Double) -> Vector3 {
        var b = Vector3.zero
        // The dipoles within 60 m of the route's distance (binary search for the first).
        var lo = 0, hi = dipoles.count
        while lo < hi { let mid = (lo + hi) / 2; if dipoles[mid].along < s - 60 { lo = mid + 1 } else { hi = mid } }
        var i = lo
        while i < dipoles.count && dipoles[i].along <= s + 60 {
            b = b + Self.dipole(dipoles[i].moment, at: p - dipoles[i].position)
            i += 1
        }
        return b
    }

    /// The field of the vehicles alongside at time `t`, µT, in the car's body axes (they drive the same way,
    /// creeping past at their relative speed).
    func alongside(time t: Double) -> Vector3 {
        var b = Vector3.zero
        for v in alongside where t >= v.start && t < v.start + v.length {
            let ahead = v.relative * (t - v.start - v.length / 2)
            b = b + Self.dipole(v.moment, at: Vector3(-ahead, -v.lateral, 0.6))
        }
        return b
    }
}

/// A parking bay beside the street's start (`RoadDrive.Configuration.reverseStart`): the car stands in it nose first and
/// backs out, straight and then through a right angle, to stand at the street's start facing along it. Its path is
/// measured back from there: `u` metres still to back (0 at the street), the car's heading and place at each.
struct ParkingBay {
    let street: Double
    /// The sign of the heading's change per metre still to back (±1): backing, the nose swings the other way.
    let turn: Double
    let radius: Double
    let straight: Double
    let speed: Double
    let pause: Double
    var arc: Double { radius * .pi / 2 }
    var length: Double { arc + straight }
    /// The path's places every `ParkingBay.step` metres back from the street.
    private let places: [Vector3]
    static let step = 0.01

    init(street: Double, random: inout RoadDriveRandom) {
        self.street = street
        turn = random.sign()
        radius = random.uniform(5, 6.5)
        straight = random.uniform(2, 5)
        speed = random.uniform(1.2, 2)
        pause = random.uniform(1, 3)
        // Backing, the car moves tail first: going back along its path from the street is moving nose first.
        var p = Vector3.zero, places = [p]
        let arc = radius * .pi / 2, count = Int(((arc + straight) / Self.step).rounded(.up)) + 1
        for i in 0..<count {
            let mid = (Double(i) + 0.5) * Self.step
            let psi = street + turn * min(mid, arc) / radius
            p = p + Vector3(cos(psi), sin(psi), 0) * Self.step
            places.append(p)
        }
        self.places = places
    }

    /// The car's heading (rad from north) with `u` metres still to back.
    func heading(_ u: Double) -> Double { street + turn * min(max(u, 0), arc) / radius }

    /// The acceleration across the car (m/s², positive to the right) backing at `speed` with `u` metres still to back.
    func lateral(_ u: Double, speed: Double) -> Double { u < arc ? turn * speed * speed / radius : 0 }

    /// The car's place (m north, east, down from the street's start) with `u` metres still to back.
    func position(_ u: Double) -> Vector3 {
        let x = max(0, min(u, length)) / Self.step, i = min(Int(x), places.count - 2), f = x - Double(i)
        return places[i] + (places[i + 1] - places[i]) * f
    }
}
