import BearingModel
import BearingPOSIX
import BearingI2C
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Opens a sensor bus by path: `/dev/i2c-N` through i2c-dev, or `simulator` — the in-memory bus of the
/// simulator board, holding every chip model fed by one virtual board — or `simulator:tumble`, the same
/// with the board also pitching and rolling briskly (for `bearing calibrate`). On `simulator` the board
/// turns at 6°/s while rolling ±12° (every 5 s) and pitching ±5° (every 7 s), and an LSM6DSOX at 0x6a
/// senses that same motion, so the fused ATT shows roll, pitch and a tilt-compensated heading; on
/// `simulator:tumble` the LSM6DSOX lies still and level. On `simulator:six-position` (for `calibrate
/// --accel`) the magnetometers tumble as on `simulator:tumble` and the LSM6DSOX is held in each face and
/// then six tilts for 1.6 s, 0.6 s between poses, over and over, its accelerometer distorted by
/// `sixPositionOffset` and `sixPositionDistortion`. The ICM-20948 hosting the AK09916 is level.
public enum BusOpener {
    public static func open(_ path: String) throws(I2CError) -> I2CBus {
        if I2CBusName.simulated.contains(path) { return simulatedBus(path) }
        return try LinuxI2CBus(path: path)
    }

    /// The `simulator:six-position` accelerometer's errors: raw = A · true + b (m/s², chip axes), gains +2 %,
    /// −1.5 %, +1 %, axes 0.34–0.69° off square.
    static let sixPositionOffset = Vector3(0.3, -0.2, 0.45)
    static let sixPositionDistortion = Matrix3([1.02, 0.004, -0.003], [0.004, 0.985, 0.006], [-0.003, 0.006, 1.01])

    /// One simulated bus per path and process (so a re-probe finds the same chips), with the demo distortion.
    nonisolated(unsafe) private static var shared: [String: SimulatedI2CBus] = [:]
    private static let lock = ConditionLock()

    static func simulatedBus(_ path: String = "simulator") -> SimulatedI2CBus {
        lock.lock(); defer { lock.unlock() }
        if let bus = shared[path] { return bus }
        let start = Syscall.monotonicSeconds()
        let clock = { Syscall.monotonicSeconds() - start }
        let compass = path == "simulator" ? VirtualCompass.demo(clock: clock) : VirtualCompass.tumbling(clock: clock)
        // The simulator board mounts its chips "+X-Y-Z" (chip Z up); the AK09916 sits in Bearing's frame.
        compass.orientation = try! Orientation(axes: "+X-Y-Z")
        let board = VirtualIMU.board(earth: compass.earthField, heading: { 6 * $0 },
                                     pitch: { 5 * sin(2 * .pi * $0 / 7) }, roll: { 12 * sin(2 * .pi * $0 / 5) })
        if path == "simulator" { compass.board = { board.boardField(at: $0) } }
        let bus = SimulatedI2CBus(path: path)
        for chip in ["qmc5883l", "lis3mdl", "mmc5983ma", "bmm150"] {
            ChipModels.attach(chip: chip, to: bus) { compass.field() }
        }
        let flat = path == "simulator" ? VirtualCompass.demo(clock: clock) : VirtualCompass.tumbling(clock: clock)
        ChipModels.attach(chip: "ak09916", to: bus) { flat.field() }
        switch path {
        case "simulator":
            ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { board.motion(at: clock()) }
        case "simulator:six-position":
            var held = VirtualIMU.heldPoses(VirtualIMU.sixFaces + [(40, 30), (-35, -40), (130, 25), (-140, -30), (60, -55), (-120, 50)],
                                            hold: 1.6, move: 0.6, repeating: true)
            held.gravity = Motion.standardGravity
            ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { [held] in
                var m = held.motion(at: clock())
                m.specificForce = sixPositionDistortion * m.specificForce + sixPositionOffset
                return m
            }
        default:
            ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { .level }
        }
        shared[path] = bus
        return bus
    }
}
