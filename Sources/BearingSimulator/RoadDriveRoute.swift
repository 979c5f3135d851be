import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small seeded generator for `RoadDrive` (xoshiro256**, seeded through SplitMix64), the same numbers on
/// every platform and toolchain. Each part of a drive draws from its own stream, so that switching one effect
/// off leaves every other effect's numbers as they were.
public struct RoadDriveRandom: Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    public init(seed: UInt64, stream: UInt64 = 0) {
        var x = seed &* 0x9E37_79B9_7F4A_7C15 ^ (stream &+ 1) &* 0xD1B5_4A32_D192_ED03
        func mix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = mix(); s1 = mix(); s2 = mix(); s3 = mix()
    }

    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// Uniform in [lo, hi).
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double {
        lo + (hi - lo) * Double(next() >> 11) / 9_007_199_254_740_992.0
    }

    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(0, 1), 1e-300), u2 = uniform(0, 1)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    /// −1 or +1.
    public mutating func sign() -> Double { next() & 1 == 0 ? -1 : 1 }

    public mutating func chance(_ p: Double) -> Bool { uniform(0, 1) < p }

    public mutating func vector(_ sigma: Double) -> Vector3 { Vector3(gaussian(), gaussian(), gaussian()) * sigma }

    /// A random direction of length `length`.
    public mutating func direction(_ length: Double) -> Vector3 {
        let v = Vector3(gaussian(), gaussian(), gaussian())
        return v * (length / max(v.length, 1e-9))
    }
}

/// What kind of road a stretch of the route is: it sets the speed limit, the street's magnetic anomalies and
/// whether GNSS suffers multipath there.
public enum RoadKind: String, Sendable {
    case suburb, town, arterial
}

/// The route a `RoadDrive` follows, on a 0.5 m grid of distance along it: its curvature (1/m, positive turning
/// right, raised-cosine in and out of each turn so the yaw rate is smooth), grade, crossfall, speed limit, kind
/// of road, and the places the car stops (traffic lights) and the bumps it crosses.
struct RoadRoute {
    static let step = 0.5
    var curvature: [Double] = []
    var grade: [Double] = []
    var camber: [Double] = []
    var limit: [Double] = []
    var kind: [RoadKind] = []
    var bridge: [Bool] = []
    /// Within a turn or 40 m before one: the indicator flashes.
    var indicating: [Bool] = []
    /// Course over ground (rad from north) and position (m north, east, down) along the grid.
    var course: [Double] = []
    var north: [Double] = []
    var east: [Double] = []
    var down: [Double] = []
    /// Traffic lights: distance (m) and how long the car waits there (s).
    var stops: [(at: Double, wait: Double)] = []
    /// Bumps and potholes: distance (m), size (vertical velocity step, m/s) and which side (−1 left, 0 both, 1 right).
    var bumps: [(at: Double, size: Double, side: Double)] = []

    var length: Double { Double(curvature.count) * Self.step }

    /// A way out of a car park: an aisle, a U-turn into the next aisle, and a ramp turning the same way through
    /// four right angles (radius 7 m, walking pace to 4 m/s), 204 m in all.
    static let carParkPieces: [Piece] = {
        let corner = Piece(length: 2 * .pi / 2 * 7, turn: .pi / 2, limit: 4, kind: .suburb)
        return [Piece(length: 30, limit: 4, kind: .suburb), corner, Piece(length: 10, limit: 4, kind: .suburb), corner,
                Piece(length: 25, limit: 4, kind: .suburb), corner, corner, corner, corner, Piece(length: 7, limit: 4, kind: .suburb)]
    }()
    /// The car park's length along the route (m), summed once.
    static let carParkLength: Double = carParkPieces.reduce(0) { $0 + $1.length }

    struct Piece {
        var length: Double
        var turn = 0.0  // radians, + right
        var limit: Double
        var kind: RoadKind
        var stopAfter = 0.0  // seconds at a light at its end
        var bridge = false
    }

    /// A route of about `length` metres: a short street out of the car park, then suburb, town (with a
    /// roundabout) and an arterial road over hills and a steel bridge, in turn, with lights, bends and corners
    /// in both directions.
    ///
    /// `carPark`: the drive starts on the lowest deck of a multi-storey car park, and leaves it by its aisles and a
    /// ramp that turns through a whole circle (`RoadRoute.carParkPieces`) before the street; no random draw is
    /// taken for it, so the rest of the route is the same.
    init(length target: Double, hills: Bool, carPark: Bool = false, random: inout RoadDriveRandom) {
        var pieces: [Piece] = (carPark ? Self.carParkPieces : []) + [Piece(length: 120, limit: 9, kind: .suburb)]
        var cornerSign = random.sign()
        func corner(_ kind: RoadKind, limit: Double, light: Bool) {
            if light, var last = pieces.popLast() { last.stopAfter = random.uniform(8, 35); pieces.append(last) }
            cornerSign = -cornerSign
            let radius = random.uniform(10, 16)
            let angle = Double.pi / 2 * random.uniform(0.95, 1.05)
            pieces.append(Piece(length: 2 * angle * radius, turn: cornerSign * angle, limit: limit, kind: kind))
        }
        func bend(_ kind: RoadKind, limit: Double) {
            let angle = random.uniform(15, 40) * .pi / 180, radius = random.uniform(150, 450)
            pieces.append(Piece(length: 2 * angle * radius, turn: random.sign() * angle, limit: limit, kind: kind))
        }
        func straight(_ kind: RoadKind, _ lo: Double, _ hi: Double, limit: Double, bridge: Bool = false) {
            pieces.append(Piece(length: random.uniform(lo, hi), limit: limit, kind: kind, bridge: bridge))
        }
        var total = 0.0
        while total < target {
            // Suburb: 50 km/h streets, a bend, corners at lights.
            straight(.suburb, 250, 550, limit: 14)
            bend(.suburb, limit: 14)
            straight(.suburb, 200, 450, limit: 14)
            corner(.suburb, limit: 14, light: random.chance(0.6))
            straight(.suburb, 250, 500, limit: 14)
            corner(.suburb, limit: 14, light: random.chance(0.5))
            // Town: 40 km/h between lights, a roundabout (left-hand traffic: round clockwise, entered with a
            // left bend, out with another), multipath and iron everywhere.
            straight(.town, 150, 280, limit: 11)
            corner(.town, limit: 11, light: true)
            straight(.town, 120, 220, limit: 11)
            let exit = [Double.pi / 2, Double.pi, 3 * Double.pi / 2][Int(random.uniform(0, 3))]
            let entry = 30 * Double.pi / 180
            pieces.append(Piece(length: 2 * entry * 22, turn: -entry, limit: 11, kind: .town))
            pieces.append(Piece(length: 2 * (exit + 2 * entry) * 14, turn: exit + 2 * entry, limit: 11, kind: .town))
            pieces.append(Piece(length: 2 * entry * 22, turn: -entry, limit: 11, kind: .town))
            straight(.town, 150, 260, limit: 11)
            corner(.town, limit: 11, light: true)
            straight(.town, 120, 220, limit: 11)
            corner(.town, limit: 11, light: random.chance(0.5))
            // Arterial: 80–90 km/h, hills, gentle bends and a steel bridge.
            let fast = random.uniform(22, 25)
            straight(.arterial, 500, 900, limit: fast)
            bend(.arterial, limit: fast)
            straight(.arterial, 150, 250, limit: fast)
            straight(.arterial, 80, 120, limit: fast, bridge: true)
            straight(.arterial, 300, 700, limit: fast)
            bend(.arterial, limit: fast)
            straight(.arterial, 500, 900, limit: fast)
            corner(.arterial, limit: 14, light: true)
            total = pieces.reduce(0) { $0 + $1.length }
        }

        // The grid: curvature within each piece, the limits, the lights at the pieces' ends.
        var s = 0.0
        for piece in pieces {
            let n = max(1, Int((piece.length / Self.step).rounded()))
            let length = Double(n) * Self.step
            for i in 0..<n {
                let u = (Double(i) + 0.5) * Self.step / length
                curvature.append(piece.turn == 0 ? 0 : piece.turn / length * (1 - cos(2 * .pi * u)))
                limit.append(piece.limit)
                kind.append(piece.kind)
                bridge.append(piece.bridge)
            }
            s += length
            if piece.stopAfter > 0 { stops.append((s - 1, piece.stopAfter)) }
        }
        let count = curvature.count
        // Indicators: from 40 m before a corner or roundabout (curvature above 1/100 m) to its end.
        indicating = [Bool](repeating: false, count: count)
        var i = count - 1, until = -1
        while i >= 0 {
            if abs(curvature[i]) > 0.01 { until = i + Int(40 / Self.step) }
            indicating[i] = until >= i
            i -= 1
        }

        // Hills: a few long waves, up to 8 % on the arterial road and 3 % elsewhere, smoothed over 150 m.
        var waves: [(amplitude: Double, wavelength: Double, phase: Double)] = []
        for _ in 0..<3 { waves.append((random.uniform(0.5, 1), random.uniform(400, 1400), random.uniform(0, 2 * .pi))) }
        var raw = [Double](repeating: 0, count: count)
        for k in 0..<count {
            let x = Double(k) * Self.step
            var g = 0.0
            for w in waves { g += w.amplitude * sin(2 * .pi * x / w.wavelength + w.phase) }
            raw[k] = (hills ? 1 : 0) * g / 2 * (kind[k] == .arterial ? 0.08 : 0.03)
        }
        grade = Self.smoothed(raw, window: Int(150 / Self.step)).map { max(-0.08, min(0.08, $0)) }
        // Crossfall: 2.5 % towards the left kerb (left-hand traffic), banked up to 4 % into the arterial bends.
        camber = (0..<count).map { k in
            let bank = kind[k] == .arterial ? max(-0.04, min(0.04, curvature[k] * 40)) : 0
            return atan(-0.025 + bank)
        }
        camber = Self.smoothed(camber, window: Int(20 / Self.step))

        // Course and position along the grid.
        course = [Double](repeating: 0, count: count)
        north = [Double](repeating: 0, count: count)
        east = [Double](repeating: 0, count: count)
        down = [Double](repeating: 0, count: count)
        var chi = random.uniform(0, 2 * .pi), n = 0.0, e = 0.0, d = 0.0
        for k in 0..<count {
            course[k] = chi; north[k] = n; east[k] = e; down[k] = d
            let gamma = atan(grade[k])
            n += Self.step * cos(gamma) * cos(chi + curvature[k] * Self.step / 2)
            e += Self.step * cos(gamma) * sin(chi + curvature[k] * Self.step / 2)
            d -= Self.step * sin(gamma)
            // The course integrates the curvature taken as linear between the grid's points (`courseAt`).
            chi += (curvature[k] + curvature[min(k + 1, count - 1)]) / 2 * Self.step
        }

        // Bumps and potholes: speed humps in town, potholes and joints elsewhere.
        var x = random.uniform(50, 200)
        while x < length - 10 {
            let k = Int(x / Self.step)
            let hump = kind[k] == .town && random.chance(0.3)
            bumps.append((x, hump ? random.uniform(0.15, 0.25) : random.uniform(0.05, 0.15), hump ? 0 : [-1.0, 0, 1][Int(random.uniform(0, 3))]))
            x += random.uniform(120, 450)
        }
    }

    static func smoothed(_ values: [Double], window: Int) -> [Double] {
        guard window > 1, !values.isEmpty else { return values }
        var prefix = [0.0]
        prefix.reserveCapacity(values.count + 1)
        for v in values { prefix.append(prefix.last! + v) }
        let half = window / 2
        return (0..<values.count).map { k in
            let lo = max(0, k - half), hi = min(values.count, k + half + 1)
            return (prefix[hi] - prefix[lo]) / Double(hi - lo)
        }
    }

    /// Linear interpolation of a grid array at distance `s`.
    func at(_ array: [Double], _ s: Double) -> Double {
        let x = max(0, min(s / Self.step, Double(array.count - 1)))
        let i = min(Int(x), array.count - 2)
        return array[i] + (array[i + 1] - array[i]) * (x - Double(i))
    }

    /// The course at distance `s`: the curvature linear between the grid's points, integrated exactly, so the
    /// yaw rate has no steps (a linear interpolation of the course would make it a staircase).
    func courseAt(_ s: Double) -> Double {
        let x = max(0, min(s / Self.step, Double(course.count - 1)))
        let i = min(Int(x), course.count - 2)
        let u = (x - Double(i)) * Self.step
        return course[i] + curvature[i] * u + (curvature[i + 1] - curvature[i]) * u * u / (2 * Self.step)
    }

    func index(_ s: Double) -> Int { max(0, min(Int(s / Self.step), curvature.count - 1)) }

    /// The speed plan: the limit, the curve speed (lateral acceleration at most `lateral`), and braking at
    /// `braking` into each slower stretch and each light still ahead (`pendingStops`).
    func plan(lateral: Double, braking: Double, pendingStops: ArraySlice<(at: Double, wait: Double)>) -> [Double] {
        let count = curvature.count
        var v = [Double](repeating: 0, count: count)
        for k in 0..<count {
            let curve = abs(curvature[k]) > 1e-6 ? (lateral / abs(curvature[k])).squareRoot() : 100
            v[k] = min(limit[k], curve)
        }
        for stop in pendingStops { v[index(stop.at)] = 0 }
        v[count - 1] = 0
        var k = count - 2
        while k >= 0 {
            v[k] = min(v[k], (v[k + 1] * v[k + 1] + 2 * braking * Self.step).squareRoot())
            k -= 1
        }
        return v
    }
}
