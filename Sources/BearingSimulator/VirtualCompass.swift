import BearingModel
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// A board turning in place in a known Earth field, as a chip mounted on it would sense it: the field
/// rotated by the board's heading, taken into the chip's axes (inverse mounting orientation), distorted
/// by soft iron and hard iron, plus Gaussian noise. Feeds a chip model for the demo and tests.
public final class VirtualCompass: @unchecked Sendable { // configured before use, then only read (by the bus's reader thread)
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

/// Builds the model of a named chip, sensing `field`, attached to a bus at the chip's usual address.
public enum ChipModels {
    /// Attaches the model of `chip` (a driver name) at `address` (default: the chip's first address);
    /// returns the model that senses the field. For `ak09916` an ICM-20948 host is attached at 0x68 too, for
    /// `ak8963` an MPU-9250.
    @discardableResult
    public static func attach(chip: String, to bus: SimulatedI2CBus, address: UInt8? = nil,
                              field: @escaping () -> Vector3) -> RegisterChipModel? {
        switch chip.lowercased() {
        case "hmc5883l": return put(HMC5883LModel(field: field), bus, address ?? 0x1E)
        case "qmc5883l": return put(QMC5883LModel(field: field), bus, address ?? 0x0D)
        case "lis3mdl": return put(LIS3MDLModel(field: field), bus, address ?? 0x1C)
        case "lis2mdl": return put(LIS2MDLModel(field: field), bus, address ?? 0x1E)
        case "mmc5983ma": return put(MMC5983MAModel(field: field), bus, address ?? 0x30)
        case "bmm150": return put(BMM150Model(field: field), bus, address ?? 0x10)
        case "ak09916":
            let ak = AK09916Model(field: field)
            bus.attach(ICM20948Model(magnetometer: ak), at: 0x68)
            return put(ak, bus, address ?? 0x0C)
        case "ak8963":
            let ak = AK8963Model(field: field)
            bus.attach(MPU6xxxModel(variant: .mpu9250, magnetometer: ak, motion: { .level }), at: 0x68)
            return put(ak, bus, address ?? 0x0C)
        default: return nil
        }
    }

    /// Attaches the model of the accelerometer + gyroscope `chip` (an inertial driver name; for a family,
    /// `variant` picks the member) at `address` (default: the chip's first address), sensing `motion`.
    /// An `icm20948` gets its AK09916 at 0x0C, an `mpu9250` its AK8963, both sensing no field. An
    /// `lsm303agr` gets its magnetometer at 0x1E (a `LIS2MDLModel`), an `lsm303dlhc` an `HMC5883LModel`
    /// there standing in for the DLHC's magnetometer (same ID and data registers; the DLHC's gains differ),
    /// both sensing no field; `lsm303` is the DLHC's accelerometer alone, which the driver cannot tell
    /// from an AGR.
    @discardableResult
    public static func attachInertial(chip: String, to bus: SimulatedI2CBus, address: UInt8? = nil,
                                      motion: @escaping () -> Motion) -> InertialChipModel? {
        func add(_ m: InertialChipModel, _ a: UInt8) -> InertialChipModel {
            bus.attach(m, at: a)
            return m
        }
        switch chip.lowercased() {
        case "lsm6ds3": return add(LSM6DSxModel(variant: .lsm6ds3, motion: motion), address ?? 0x6A)
        case "lsm6dsl": return add(LSM6DSxModel(variant: .lsm6dsl, motion: motion), address ?? 0x6A)
        case "lsm6dsx", "lsm6dsox": return add(LSM6DSxModel(variant: .lsm6dsox, motion: motion), address ?? 0x6A)
        case "lsm9ds1": return add(LSM9DS1Model(motion: motion), address ?? 0x6A)
        case "mpu6050", "mpu6xxx": return add(MPU6xxxModel(variant: .mpu6050, motion: motion), address ?? 0x68)
        case "mpu6500": return add(MPU6xxxModel(variant: .mpu6500, motion: motion), address ?? 0x68)
        case "mpu9250", "mpu9255":
            let ak = AK8963Model { .zero }
            let m = MPU6xxxModel(variant: chip.lowercased() == "mpu9250" ? .mpu9250 : .mpu9255, magnetometer: ak, motion: motion)
            bus.attach(ak, at: 0x0C)
            return add(m, address ?? 0x68)
        case "icm20948":
            let ak = AK09916Model { .zero }
            bus.attach(ak, at: 0x0C)
            return add(ICM20948Model(magnetometer: ak, motion: motion), address ?? 0x68)
        case "lsm303": return add(LSM303Model(variant: .dlhc, motion: motion), address ?? 0x19)
        case "lsm303dlhc":
            bus.attach(HMC5883LModel { .zero }, at: 0x1E)
            return add(LSM303Model(variant: .dlhc, motion: motion), address ?? 0x19)
        case "lsm303agr":
            bus.attach(LIS2MDLModel { .zero }, at: 0x1E)
            return add(LSM303Model(variant: .agr, motion: motion), address ?? 0x19)
        default: return nil
        }
    }

    /// The inertial models `attachInertial` knows: every member of each family.
    public static let inertialNames = ["lsm6ds3", "lsm6dsl", "lsm6dsox", "lsm9ds1", "mpu6050", "mpu6500", "mpu9250",
                                       "mpu9255", "icm20948", "lsm303", "lsm303dlhc", "lsm303agr"]

    private static func put(_ m: RegisterChipModel, _ bus: SimulatedI2CBus, _ a: UInt8) -> RegisterChipModel {
        bus.attach(m, at: a)
        return m
    }

    public static let names = ["hmc5883l", "qmc5883l", "lis3mdl", "lis2mdl", "mmc5983ma", "bmm150", "ak09916", "ak8963"]
}
