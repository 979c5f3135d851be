import BearingModel
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// A board turning in place in a known Earth field, as a chip mounted on it would sense it: the field
/// rotated by the board's heading, taken into the chip's axes (inverse mounting orientation), distorted
/// by soft iron and hard iron, plus Gaussian noise. Feeds a chip model for the demo and tests.
public final class VirtualCompass {
    /// Earth field, north/east/down, µT.
    public var earthField: Vector3
    /// Degrees per second of turn; 0 holds `startHeading`.
    public var turnRate: Double
    public var startHeading: Double
    public var orientation: Orientation
    /// `raw = softIron · true + hardIron` (chip axes).
    public var softIron: Matrix3
    public var hardIron: Vector3
    /// Noise standard deviation per axis, µT.
    public var noise: Double
    /// When set, the board also pitches (±amplitude°, sinusoidally over `pitchPeriod` s) and rolls (a
    /// full turn about its long axis every `rollPeriod` s) while it turns, so its field sweeps the whole
    /// sphere, as a calibration needs.
    public var tumble: (pitchAmplitude: Double, pitchPeriod: Double, rollPeriod: Double)?
    /// When set, the board-frame field (x forward, y right, z down, µT) at a time, from a model of the
    /// board's whole motion (`VirtualIMU.boardField`) that an IMU model shares; replaces the turn and tumble.
    public var board: (@Sendable (Double) -> Vector3)?
    private let clock: () -> Double
    private var rng: SplitMix64

    public init(earthField: Vector3 = Vector3(19.6, -0.1, 44.6), turnRate: Double = 6, startHeading: Double = 0,
                orientation: Orientation = .identity, softIron: Matrix3 = .identity, hardIron: Vector3 = .zero,
                noise: Double = 0, seed: UInt64 = 1, clock: @escaping () -> Double) {
        self.earthField = earthField
        self.turnRate = turnRate
        self.startHeading = startHeading
        self.orientation = orientation
        self.softIron = softIron
        self.hardIron = hardIron
        self.noise = noise
        self.clock = clock
        rng = SplitMix64(seed: seed)
    }

    /// The demo's distortion: a hard-iron offset of about half the field and a mild soft-iron ellipse.
    public static func demo(clock: @escaping () -> Double) -> VirtualCompass {
        VirtualCompass(turnRate: 6, softIron: Matrix3([1.08, 0.04, 0], [0.04, 0.93, 0.02], [0, 0.02, 1.0]),
                       hardIron: Vector3(21.0, -9.5, 6.0), noise: 0.3, seed: 7, clock: clock)
    }

    /// The true heading now, degrees.
    public var heading: Double { Compass.normalize(startHeading + turnRate * clock()) }

    /// The board-frame field (level board) at `heading`.
    public static func boardField(earth: Vector3, heading: Double) -> Vector3 {
        let h = heading * .pi / 180
        return Vector3(earth.x * cos(h) + earth.y * sin(h), -earth.x * sin(h) + earth.y * cos(h), earth.z)
    }

    /// The demo distortion on a board that tumbles, briskly so a calibration fills in seconds: 72°/s of
    /// turn, pitch ±70° every 4.7 s, a full roll every 3.1 s.
    public static func tumbling(clock: @escaping () -> Double) -> VirtualCompass {
        let c = demo(clock: clock)
        c.turnRate = 72
        c.tumble = (70, 4.7, 3.1)
        return c
    }

    /// What the chip senses now, µT, chip axes.
    public func field() -> Vector3 {
        var board = Self.boardField(earth: earthField, heading: heading)
        if let moving = self.board {
            board = moving(clock())
        } else if let t = tumble {
            let now = clock()
            let pitch = t.pitchAmplitude * sin(2 * .pi * now / t.pitchPeriod)
            let roll = 360 * now / t.rollPeriod
            board = Matrix3.rotation(rollDegrees: roll, pitchDegrees: pitch, yawDegrees: heading).transposed * earthField
        }
        let chip = orientation.matrix.transposed * board
        let distorted = softIron * chip + hardIron
        return distorted + Vector3(gaussian(), gaussian(), gaussian()) * noise
    }

    private func gaussian() -> Double {
        let u1 = max(rng.uniform(0, 1), 1e-12), u2 = rng.uniform(0, 1)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
