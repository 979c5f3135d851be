import BearingCore
import BearingIO
import BearingSimulator
import Foundation

/// Opens a magnetometer bus by path: `/dev/i2c-N` through i2c-dev, or `simulator` — the in-memory bus of
/// the simulator board, holding every chip model fed by one virtual board turning in place — or
/// `simulator:tumble`, the same with the board also pitching and rolling (for `bearing calibrate`). An
/// LSM6DSOX lies still and level at 0x6a (and the ICM-20948 hosting the AK09916 does too).
enum BusOpener {
    static func open(_ path: String) throws(I2CError) -> I2CBus {
        if path == "simulator" || path == "simulator:tumble" { return simulatedBus(path) }
        return try LinuxI2CBus(path: path)
    }

    /// One simulated bus per path and process (so a re-probe finds the same chips), with the demo distortion.
    nonisolated(unsafe) private static var shared: [String: SimulatedI2CBus] = [:]
    private static let lock = NSLock()

    static func simulatedBus(_ path: String = "simulator") -> SimulatedI2CBus {
        lock.lock(); defer { lock.unlock() }
        if let bus = shared[path] { return bus }
        let start = Syscall.monotonicSeconds()
        let clock = { Syscall.monotonicSeconds() - start }
        let compass = path == "simulator:tumble" ? VirtualCompass.tumbling(clock: clock) : VirtualCompass.demo(clock: clock)
        // The simulator board mounts its chips "+X-Y-Z" (chip Z up); the AK09916 sits in Bearing's frame.
        compass.orientation = try! Orientation(axes: "+X-Y-Z")
        let bus = SimulatedI2CBus(path: path)
        for chip in ["qmc5883l", "lis3mdl", "mmc5983ma", "bmm150"] {
            ChipModels.attach(chip: chip, to: bus) { compass.field() }
        }
        let flat = path == "simulator:tumble" ? VirtualCompass.tumbling(clock: clock) : VirtualCompass.demo(clock: clock)
        ChipModels.attach(chip: "ak09916", to: bus) { flat.field() }
        ChipModels.attachInertial(chip: "lsm6dsox", to: bus) { .level }
        shared[path] = bus
        return bus
    }
}
