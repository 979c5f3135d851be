import ArgumentParser
import BearingCore
import BearingIO
import BearingAgent
import BearingSensors
import BearingSimulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The compass path's cost per sample, for `bench/compass-cost`: a QMC5883L model on the simulated bus,
/// the driver's read (data-ready poll + block read + scaling), orientation, heading, declination,
/// smoothing, the ATT line, and a write to a UNIX socket whose other end is drained. No sleeps.
struct BenchCompass: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-compass", shouldDisplay: false)

    @Option var samples: Int = 10_000

    func run() throws {
        let bus = SimulatedI2CBus()
        var t = 0.0
        let compass = VirtualCompass(turnRate: 3, noise: 0.2, clock: { t })
        ChipModels.attach(chip: "qmc5883l", to: bus) { compass.field() }
        let driver = QMC5883L(bus: bus, address: 0x0D)
        driver.sleep = { _ in }
        try driver.identify()
        _ = try driver.configure(MagnetometerSettings())
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw ExitCode(1) }
        let reader = fds[1]
        let drain = Thread {
            var buf = [UInt8](repeating: 0, count: 65_536)
            while read(reader, &buf, buf.count) > 0 {}
        }
        drain.start()
        let declination = WorldMagneticModel.wmm2025.field(latitude: 50.8, longitude: -1.1, heightKm: 0, year: 2026.5).declination
        let orientation = try Orientation(axes: "+X-Y-Z")
        var smoother = AttitudeSmoother(window: 5)
        var bytes = 0
        let start = Syscall.monotonicSeconds()
        for i in 0..<samples {
            t = Double(i) * 0.1
            let r = try driver.read()
            let sample = MagneticSample(time: GPSTimestamp(unixTime: 1_780_000_000 + t), device: "bench", chip: "qmc5883l",
                                        field: r.field, overflow: r.overflow)
            smoother.add(Compass.attitude(sample, orientation: orientation, calibration: .identity,
                                          declination: (declination, .fallback)))
            var line = WireEncoding.att(smoother.smoothed!) + "\n"
            bytes += line.utf8.count
            _ = line.withUTF8 { write(fds[0], $0.baseAddress, $0.count) }
        }
        let elapsed = Syscall.monotonicSeconds() - start
        close(fds[0])
        print(String(format: "%d samples in %.3f s: %.0f samples/s on one core, %d bytes of ATT", samples, elapsed, Double(samples) / elapsed, bytes))
    }
}
