import BearingI2C
import BearingModel
import BearingPOSIX
import BearingSelfTest
import BearingSensors
import BearingSimulator
#if canImport(Glibc)
import Glibc
#endif

/// `bearing selftest` from the CLI's options: refuses to disturb a running daemon unless told, runs `SelfTestRun`
/// on the config's sensors, and gathers what a hardware report says about the machine (no secrets; the position
/// rounded to about 1 km unless asked).
public struct SelfTestSession {
    public var magnetometer: MagnetometerConfig
    public var imu: IMUConfig
    /// The daemon's socket: when something answers there, the daemon reads these chips, and configuring them again
    /// would disturb it and the test (two readers take each other's samples).
    public var socketPath: String
    public var direct = false
    public var seconds = 10.0
    public var moves = false
    public var position: Vector3?
    public var precisePosition = false
    /// The board profile (and module) asked for, nil: none.
    public var board: String?

    public init(magnetometer: MagnetometerConfig, imu: IMUConfig, socketPath: String) {
        self.magnetometer = magnetometer
        self.imu = imu
        self.socketPath = socketPath
    }

    public struct Refused: Error, CustomStringConvertible {
        public var description: String
    }

    /// The CLI's options, at once: --bus for both sensors, --direct, --seconds, --moves, --board, --position (else
    /// `fallback`, the config's), --precise-position.
    public mutating func set(bus: String?, direct: Bool, seconds: Double, moves: Bool, board: String?, position: String?, fallback: Vector3?,
                             precisePosition: Bool) throws(Refused) {
        if let bus {
            magnetometer.reader.bus = bus
            imu.reader.bus = bus
        }
        guard seconds >= 2, seconds <= 600 else { throw Refused(description: "--seconds \(seconds): from 2 to 600") }
        (self.direct, self.seconds, self.moves, self.board, self.precisePosition) = (direct, seconds, moves, board, precisePosition)
        self.position = try Self.position(position) ?? fallback
    }

    /// `LAT,LON` in degrees (nil: none given).
    public static func position(_ text: String?) throws(Refused) -> Vector3? {
        guard let text else { return nil }
        let p = text.split(separator: ",").compactMap { Double($0.filter { $0 != " " }) }
        guard p.count == 2, abs(p[0]) <= 90, abs(p[1]) <= 180 else {
            throw Refused(description: "--position \(text): expected LAT,LON in degrees, e.g. 50.8,-1.1")
        }
        return Vector3(p[0], p[1], 0)
    }

    /// A prompt on its own line, and a bar of 20 that redraws in place, on standard error.
    public static func sayOnStandardError(_ text: String) { Syscall.printToStandardError("\n\(text)\n") }
    public static func barOnStandardError(_ done: Double) {
        guard isatty(2) == 1 else { return }
        let n = max(0, min(20, Int(done * 20)))
        Syscall.printToStandardError("\r[" + String(repeating: "#", count: n) + String(repeating: " ", count: 20 - n) + "]" + (n == 20 ? "\n" : ""))
    }

    /// Runs the test; `say` gets the prompts, `progress` each sensor's share done (0…1).
    public func run(say: @escaping (String) -> Void, progress: @escaping (Double) -> Void) throws(Refused) -> SelfTestReport {
        let targets = SelfTestRun.Target.of(magnetometer: magnetometer, imu: imu)
        guard !targets.isEmpty else { throw Refused(description: "no magnetometer or imu configured: give --board or --config (or run `bearing probe`)") }
        if !direct, let fd = try? UnixSocket.connect(path: socketPath) {
            close(fd)
            // The daemon reads these chips: ask it (`SelfTestDaemonRun`) rather than read them too.
            var d = SelfTestDaemonRun(path: socketPath, targets: targets, now: Double(Syscall.wallClock().seconds))
            (d.seconds, d.moves, d.position, d.say, d.progress) = (seconds, moves, position.map { ($0.x, $0.y) }, say, progress)
            return SelfTestReport(lines: try d.run(), facts: facts() + [("read", "from the running daemon at \(socketPath)")])
        }
        var r = SelfTestRun(targets: targets, now: Double(Syscall.wallClock().seconds)) { path throws(I2CError) in try BusOpener.open(path) }
        r.seconds = seconds
        r.moves = moves
        r.position = position.map { ($0.x, $0.y) }
        r.say = say
        r.progress = progress
        say("keep the board still for \(Int(seconds)) s per sensor")
        return SelfTestReport(lines: r.run(), facts: facts() + [("read", "directly" + (direct ? ", alongside the running daemon (--direct)" : ""))])
    }

    /// What the report says about the machine: versions, board, kernel, OS, and the position as asked.
    func facts() -> [(String, String)] {
        var facts: [(String, String)] = [("bearing", Release.version)]
        if let board { facts.append(("board profile", board)) }
        if let model = try? AtomicFile.readText("/proc/device-tree/model", limit: 256) {
            facts.append(("hardware", String(model.prefix { $0 != "\0" })))
        }
        let system = Syscall.systemName()
        if let system { facts.append(("kernel", system.release)) }
        if let os = try? AtomicFile.readText("/etc/os-release", limit: 8192),
           let line = os.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") }) {
            facts.append(("os", String(line.dropFirst("PRETTY_NAME=".count)).trimmingQuotes))
        }
        if let system { facts.append(("architecture", system.machine)) }
        for t in SelfTestRun.Target.of(magnetometer: magnetometer, imu: imu) {
            facts.append(("\(t.kind.rawValue) config", "bus \(t.bus), chip \(t.chip ?? "auto"), address \(t.address.map(I2CError.hex) ?? "auto"), "
                          + "rate \(t.rate) Hz, orientation \(t.orientation.description)"))
        }
        if let position {
            facts.append(("position", SelfTestReport.position(latitude: position.x, longitude: position.y, precise: precisePosition)))
        }
        return facts
    }
}

extension String {
    var trimmingQuotes: String { String(self.drop { $0 == "\"" }.reversed().drop { $0 == "\"" }.reversed()) }
}
