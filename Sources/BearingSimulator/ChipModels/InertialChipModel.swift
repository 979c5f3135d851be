import BearingModel
import BearingPOSIX

/// What an inertial chip senses: specific force (m/s², +9.80665 up when at rest), angular rate (rad/s,
/// right-hand rule) and die temperature (°C), in the chip's axes.
public struct Motion: Equatable, Sendable {
    public var specificForce: Vector3
    public var angularRate: Vector3
    public var temperature: Double

    public init(specificForce: Vector3, angularRate: Vector3 = .zero, temperature: Double = 25) {
        self.specificForce = specificForce
        self.angularRate = angularRate
        self.temperature = temperature
    }

    public static let standardGravity = 9.80665
    /// Still and level, top face up.
    public static let level = Motion(specificForce: Vector3(0, 0, standardGravity))
}

/// A register-level accelerometer + gyroscope: a `RegisterChipModel` fed by a motion source.
open class InertialChipModel: RegisterChipModel {
    public var motion: () -> Motion

    public init(motion: @escaping () -> Motion) {
        self.motion = motion
        super.init(field: { .zero })
    }

    /// The motion the chip converts now: what it senses, through its faults (each of the accelerometer and the
    /// gyroscope with its own noise; a stuck or saturated axis is that axis of both).
    func sensedMotion() -> Motion {
        var m = motion()
        m.specificForce = faults.apply(m.specificForce, noise: faults.accelerationNoise, slot: 1)
        m.angularRate = faults.apply(m.angularRate, noise: faults.angularRateNoise, slot: 2)
        return m
    }

    /// `value / unitsPerCount` rounded and clipped to the int16 output range.
    static func counts(_ value: Double, _ unitsPerCount: Double) -> Int {
        clamp(value / unitsPerCount, -32768, 32767).value
    }
}

/// The ST accelerometer/gyroscope families (LSM6DS3/DSL/DSOX, LSM9DS1) at register level: a WHO_AM_I,
/// temperature, gyro and accel output blocks little-endian, a status register with XLDA (bit 0), GDA
/// (bit 1) and TDA (bit 2) set when a sample is latched and cleared once the high byte of that sensor's
/// last output register has been read; block data update (with BDU clear, every output read sees a fresh
/// conversion, so low and high bytes can come from different samples); register auto-increment only with
/// the IF_INC bit set (otherwise a multi-byte read repeats one register); software reset.
open class STInertialModel: InertialChipModel {
    /// Where a family keeps things.
    public struct Layout {
        var whoAmI: UInt8
        var status: [UInt8]
        var temperature: UInt8
        var gyro: UInt8
        var accel: UInt8
        /// The register with BOOT/BDU/IF_INC/SW_RESET (CTRL3_C, CTRL_REG8) and its reset value.
        var control: UInt8
        var controlReset: UInt8
        var accelControl: UInt8
        var gyroControl: UInt8
    }

    let layout: Layout
    let id: UInt8
    /// Output LSB per °C, and the temperature that reads 0.
    let temperatureSensitivity: Double
    let temperatureZero = 25.0
    /// The chip's X axis points the other way from the right-handed frame its motion is given in (the
    /// LSM9DS1's left-handed accelerometer/gyroscope axes).
    var xReversed = false

    init(layout: Layout, id: UInt8, temperatureSensitivity: Double, motion: @escaping () -> Motion) {
        self.layout = layout
        self.id = id
        self.temperatureSensitivity = temperatureSensitivity
        super.init(motion: motion)
        resetRegisters()
    }

    func resetRegisters() {
        registers = [UInt8](repeating: 0, count: 256)
        registers[Int(layout.whoAmI)] = id
        registers[Int(layout.control)] = layout.controlReset
    }

    var blockDataUpdate: Bool { registers[Int(layout.control)] & 0x40 != 0 }
    var autoIncrement: Bool { registers[Int(layout.control)] & 0x04 != 0 }
    /// Whether the accelerometer / gyroscope runs (ODR field non-zero); families override.
    open var accelOn: Bool { false }
    open var gyroOn: Bool { false }
    /// m/s² and rad/s per count at the current full scales; families override.
    open var accelScale: Double { 1 }
    open var gyroScale: Double { 1 }

    var statusByte: UInt8 { registers[Int(layout.status[0])] }

    func setStatus(_ mask: UInt8, _ on: Bool) {
        for r in layout.status { setBit(r, mask, on) }
    }

    public override func readBlock(_ register: UInt8, count: Int) -> [UInt8] {
        guard autoIncrement else { return (0..<count).map { _ in read(register) } }
        return super.readBlock(register, count: count)
    }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == layout.control && v & 0x01 != 0 { resetRegisters(); return }
        if r == layout.accelControl || r == layout.gyroControl { startConversion() }
    }

    func isOutput(_ r: UInt8) -> Bool {
        (layout.temperature...layout.temperature + 1).contains(r) || (layout.gyro...layout.gyro + 5).contains(r)
            || (layout.accel...layout.accel + 5).contains(r)
    }

    public override func willRead(_ r: UInt8) {
        if layout.status.contains(r), accelOn || gyroOn, statusByte & 0x07 == 0, conversionDone() {
            latch()
            setStatus(0x01, accelOn); setStatus(0x02, gyroOn); setStatus(0x04, true)
        } else if isOutput(r), !blockDataUpdate, accelOn || gyroOn {
            latch()
        }
    }

    public override func didRead(_ r: UInt8) {
        let before = statusByte & 0x07
        if r == layout.temperature + 1 { setStatus(0x04, false) }
        if r == layout.gyro + 5 { setStatus(0x02, false) }
        if r == layout.accel + 5 { setStatus(0x01, false) }
        if before != 0 && statusByte & 0x07 == 0 { startConversion() }
    }

    /// Converts the motion now into the output registers.
    func latch() {
        let m = sensedMotion()
        putLE(layout.temperature, Self.counts(m.temperature - temperatureZero, 1 / temperatureSensitivity))
        let sx: Double = xReversed ? -1 : 1
        let g = Vector3(sx * m.angularRate.x, m.angularRate.y, m.angularRate.z)
        let a = Vector3(sx * m.specificForce.x, m.specificForce.y, m.specificForce.z)
        if gyroOn {
            putLE(layout.gyro, Self.counts(g.x, gyroScale)); putLE(layout.gyro + 2, Self.counts(g.y, gyroScale))
            putLE(layout.gyro + 4, Self.counts(g.z, gyroScale))
        }
        if accelOn {
            putLE(layout.accel, Self.counts(a.x, accelScale)); putLE(layout.accel + 2, Self.counts(a.y, accelScale))
            putLE(layout.accel + 4, Self.counts(a.z, accelScale))
        }
    }
}
