import BearingCore
import BearingIO
import BearingSimulator
import Foundation

/// Opens a magnetometer bus by path: `/dev/i2c-N` through i2c-dev, or `simulator` — the in-memory bus of
/// the simulator board, holding every chip model fed by one virtual board turning in place.
enum BusOpener {
    static func open(_ path: String) throws(I2CError) -> I2CBus {
        if path == "simulator" { return simulatedBus() }
        return try LinuxI2CBus(path: path)
    }

    /// One simulated bus per process (so a re-probe finds the same chips), with the demo distortion.
    nonisolated(unsafe) private static var shared: SimulatedI2CBus?
    private static let lock = NSLock()

    static func simulatedBus() -> SimulatedI2CBus {
        lock.lock(); defer { lock.unlock() }
        if let shared { return shared }
        let start = Syscall.monotonicSeconds()
        let compass = VirtualCompass.demo(clock: { Syscall.monotonicSeconds() - start })
        // The simulator board mounts its chips "+X-Y-Z" (chip Z up); the AK09916 sits in Bearing's frame.
        compass.orientation = try! Orientation(axes: "+X-Y-Z")
        let bus = SimulatedI2CBus(path: "simulator")
        for chip in ["qmc5883l", "lis3mdl", "mmc5983ma", "bmm150"] {
            ChipModels.attach(chip: chip, to: bus) { compass.field() }
        }
        let flat = VirtualCompass.demo(clock: { Syscall.monotonicSeconds() - start })
        ChipModels.attach(chip: "ak09916", to: bus) { flat.field() }
        shared = bus
        return bus
    }
}
