import BearingAttitude
import BearingCompass
import BearingModel
import BearingWire
import BearingPublishing
import BearingCalibration
import BearingPOSIX
import BearingLog
import BearingSimulator
import BearingDaemon
import BearingI2C
import BearingService
import BearingSocketDoor
import Synchronization
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The repository root, found from this file's path.
public let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// `../shared/data` beside the repository, or `$BEARING_SHARED_DATA`.
public func sharedData() -> URL? {
    let url = ProcessInfo.processInfo.environment["BEARING_SHARED_DATA"].map { URL(fileURLWithPath: $0) }
        ?? repoRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    return FileManager.default.fileExists(atPath: url.path) ? url : nil
}

/// A loopback TCP port for a test's server (gpsfake's gpsd, a broker, a door), free now and kept from the
/// machine's other users until this process ends.
///
/// Not `bind(0)`: the kernel hands that port out again to any `connect()` or `bind(0)` on the machine between this
/// call and the server's own bind, which comes later and in another process. In CI (2026-12-01) gpsfake's gpsd
/// once never listened on such a port (`garmin-10x.log`, 127.0.0.1:44197, refused for 120 s). So the port comes
/// from below the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`), which no implicit
/// allocation uses, and is reserved against the suite's other processes (shards, both toolchains) by an `flock`
/// on `/tmp/bearing-test-ports/PORT`, released by the kernel when the holder exits. A process never hands out a
/// port twice, so a server's closed connections in TIME_WAIT cannot meet its successor.
public func freePort() -> Int {
    TestPorts.shared.withLock { $0.next() }
}

struct TestPorts {
    static let shared = Mutex(TestPorts())
    static let directory = "/tmp/bearing-test-ports"
    var lowest = 20000, highest = 32767
    var cursor: Int
    var held: [Int32] = []

    init() {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).compactMap { Int($0) } ?? []
        if let low = range.first, low > 2048 { highest = low - 1; lowest = max(1024, min(lowest, highest - 4096)) }
        cursor = Int.random(in: lowest...highest)
        mkdir(Self.directory, 0o777)
        chmod(Self.directory, 0o1777)
    }

    mutating func next() -> Int {
        for _ in lowest...highest {
            cursor = cursor >= highest ? lowest : cursor + 1
            let port = cursor
            let fd = open("\(Self.directory)/\(port)", O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
            guard fd >= 0 else { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0, Self.bindable(port) else { close(fd); continue }
            held.append(fd)
            return port
        }
        fatalError("freePort: no port in \(lowest)...\(highest) is free and unreserved under \(Self.directory)")
    }

    /// Nothing on the machine holds 127.0.0.1:port now.
    static func bindable(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withLoopbackAddress(port: port) { bind(fd, $0, $1) } == 0
    }
}

/// Calls `body` with 127.0.0.1:port as a `sockaddr` and its length, for bind(2) or connect(2).
public func withLoopbackAddress<R>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

public func temporaryDirectory(_ name: String) -> URL {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("bearing-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A client of Bearing's socket that reads JSON lines with a deadline.
public final class SocketClient {
    public let fd: Int32
    private var lines: LineReader

    public init(path: String) throws {
        Syscall.ignoreSIGPIPE()
        fd = try UnixSocket.connect(path: path)
        lines = LineReader(fd: fd, subject: path)
    }

    /// A client of the TCP door.
    public init(tcpPort port: Int, host: String = "127.0.0.1") throws {
        Syscall.ignoreSIGPIPE()
        fd = try TCPSocket.connect(host: host, port: port)
        lines = LineReader(fd: fd, subject: "\(host):\(port)")
    }

    /// The next object as the codec reads it.
    public func message(timeout: Double) -> WireMessage? {
        guard let line = readLine(timeout: timeout) else { return nil }
        return try? WireMessage(line: line)
    }

    /// Messages read until `stop` says so (inclusive), the connection closes, or `timeout` passes.
    public func messages(timeout: Double, until stop: (WireMessage) -> Bool) -> [WireMessage] {
        var out: [WireMessage] = []
        let deadline = Syscall.monotonicSeconds() + timeout
        while let line = readLine(timeout: deadline - Syscall.monotonicSeconds()) {
            guard let m = try? WireMessage(line: line) else {
                XCTFail("not a gpsd object: \(line.prefix(200))")
                continue
            }
            out.append(m)
            if stop(m) { break }
        }
        return out
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n <= 0 { return }
            off += n
        }
    }

    public func watch(_ extra: String = "") { send("?WATCH={\"enable\":true,\"json\":true\(extra)};\n") }

    /// The next line, or nil at the deadline or when the server closed the connection.
    public func readLine(timeout: Double) -> String? {
        guard case .line(let bytes)? = try? lines.next(deadline: Syscall.monotonicSeconds() + timeout) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Objects read until `stop` says so (inclusive), the connection closes, or `timeout` passes.
    public func collect(timeout: Double, until stop: ([String: Any]) -> Bool) -> [[String: Any]] {
        var out: [[String: Any]] = []
        let deadline = Syscall.monotonicSeconds() + timeout
        while let line = readLine(timeout: deadline - Syscall.monotonicSeconds()) {
            guard let obj = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                XCTFail("not a JSON object: \(line.prefix(200))")
                continue
            }
            out.append(obj)
            if stop(obj) { break }
        }
        return out
    }

    /// The ATTs that come from `settle` seconds after the first ATT until `end` seconds after it (the heading settled,
    /// its fast start over), or until `timeout` passes.
    public func attitudes(after settle: Double, until end: Double, timeout: Double = 30) -> [[String: Any]] {
        var first: Double?
        var late: [[String: Any]] = []
        _ = collect(timeout: timeout) { o in
            guard o["class"] as? String == "ATT" else { return false }
            let now = Syscall.monotonicSeconds()
            if first == nil { first = now }
            if now - first! > settle { late.append(o) }
            return now - first! > end
        }
        return late
    }
}

/// Keeps every line a logger writes, as the journal would get it, for a test to read.
public final class LogCapture: LogHandler, Sendable {
    private let captured = Mutex<[String]>([])
    public init() {}
    public func log(level: Logger.Level, message: String, metadata: Logger.Metadata) {
        captured.withLock { $0.append(JournaldLogHandler(journald: true).line(level: level, message: message, metadata: metadata)) }
    }
    public var lines: [String] { captured.withLock { $0 } }
    public var logger: Logger { Logger(label: "bearing-test", level: .info, handler: self) }
}

public func testLogger() -> Logger {
    Logger(label: "bearing-test", level: .warning, handler: JournaldLogHandler(journald: false))
}

/// An agent configured for tests: passthrough, quick retries, a socket in a temporary directory.
public func makeAgentConfig(gpsdPort: Int, dir: URL, passthrough: Bool = true) -> AgentConfig {
    var c = AgentConfig()
    c.gpsd.host = "127.0.0.1"
    c.gpsd.port = gpsdPort
    c.gpsd.retryInitial = 0.05
    c.gpsd.retryMax = 0.5
    c.socket.path = dir.appendingPathComponent("bearing.sock").path
    // Everything the agent reads or writes is in `dir`: not /var/lib/bearing, where a `bearing run` on this
    // machine may have left a calibration learnt on the simulator (beside it: online calibration's file, the
    // deviations) and saves the black box.
    c.magnetometer.calibrationFile = dir.appendingPathComponent("calibration.json").path
    c.pipelineStore = dir.appendingPathComponent("pipelines.json").path
    c.blackbox.directory = dir.appendingPathComponent("blackbox").path
    if passthrough { c.makePassthrough() }
    return c
}


/// An agent started on `config` and a client of its socket that is already watching.
public func startWatchedAgent(_ config: AgentConfig) throws -> (ServedAgent, SocketClient) {
    let agent = ServedAgent(config: config, logger: testLogger())
    try agent.start()
    do {
        let client = try SocketClient(path: agent.socketPath)
        client.watch()
        return (agent, client)
    } catch {
        agent.stop()
        throw error
    }
}

extension SocketClient {
    /// Everything published during the first gpsd session that carried a TPV or a SKY: up to its `disconnected`
    /// after `connected`. A session without either is passed over, its objects dropped: a gpsd that was never given
    /// gpsfake's device, which `GPSFake` stops and starts again (CI on 150e00c: the agent's first session was with that
    /// gpsd, and ConformanceTests read it, 0 of 21 TPVs, while the second launch served the log to nobody).
    public func collectSession(timeout: Double) -> (objects: [[String: Any]], connected: Bool) {
        var connected = false, carried = false, start = 0, index = 0
        var objects = collect(timeout: timeout) { o in
            defer { index += 1 }
            if isState(o, "connected") { connected = true }
            if ["TPV", "SKY"].contains(cls(o)) { carried = true }
            guard connected && isState(o, "disconnected") else { return false }
            if carried { return true }
            start = index + 1
            return false
        }
        objects.removeFirst(min(start, objects.count))
        return (objects, connected)
    }
}


public func cls(_ o: [String: Any]) -> String { o["class"] as? String ?? "" }

public func isState(_ o: [String: Any], _ state: String) -> Bool { cls(o) == "STATE" && o["state"] as? String == state }

/// A socket file with nobody behind it, as a crashed process leaves it.
public func makeStaleSocket(at path: String) {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    close(fd)
}

/// `../shared/data/SUBDIR` beside the repository (or under `$BEARING_SHARED_DATA`); nil when absent,
/// so the caller skips visibly.
public func sharedData(_ subdirectory: String) -> URL? {
    sharedData().map { $0.appendingPathComponent(subdirectory) }.flatMap { FileManager.default.fileExists(atPath: $0.path) ? $0 : nil }
}

/// Skips the test, saying so, when ../shared/data is not there.
public func requireSharedData(_ subdirectory: String) throws -> URL {
    guard let url = sharedData(subdirectory) else {
        throw XCTSkip("SKIPPED: ../shared/data/\(subdirectory) is not beside the repository (set BEARING_SHARED_DATA to point at it)")
    }
    return url
}

/// A datagram socket bound to `name` (a path, or `@…` for the abstract namespace) that reads with a deadline.
public final class DatagramReceiver {
    public let fd: Int32
    public init(_ name: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard let address = UnixSocket.Address(name) else { throw SystemError("bind", name, errno: ENAMETOOLONG) }
        guard address.withSockaddr({ bind(fd, $0, $1) }) == 0 else { throw SystemError("bind", name) }
    }
    deinit { close(fd) }

    /// The next datagram, or nil when `timeout` seconds pass first. A signal (a child exiting) does not
    /// cut the wait short.
    public func next(timeout: Double = 5) -> String? {
        let deadline = Syscall.monotonicSeconds() + timeout
        while true {
            let left = Int32(max(0, (deadline - Syscall.monotonicSeconds()) * 1000))
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, left)
            if r < 0 && errno == EINTR { continue }
            guard r == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return n < 0 ? nil : String(decoding: buffer[0..<n], as: UTF8.self)
        }
    }
}

/// Writes IMU samples as the CSV `IMUSampleFile` reads (`t,acc_x,acc_y,acc_z[,gyr_x,gyr_y,gyr_z]`), under
/// `header` lines (a `# bearing-samples chip=…` line, say); `edit` changes the data lines first.
public func writeIMURecording(_ samples: [IMUSample], to url: URL, header: String? = nil, gyroscope: Bool = true,
                              edit: (inout [String]) -> Void = { _ in }) throws {
    var lines = samples.map { s in
        var fields = [s.time, s.accelerometer.x, s.accelerometer.y, s.accelerometer.z]
        if gyroscope { fields += [s.gyroscope.x, s.gyroscope.y, s.gyroscope.z] }
        return fields.map { String(format: "%.7g", $0) }.joined(separator: ",")
    }
    edit(&lines)
    let columns = "t,acc_x,acc_y,acc_z" + (gyroscope ? ",gyr_x,gyr_y,gyr_z" : "")
    try ((header.map { [$0] } ?? []) + [columns] + lines).joined(separator: "\n").appending("\n").write(to: url, atomically: true, encoding: .utf8)
}

/// A config for the fused compass on the simulated bus `sim-bus`: the magnetometer `magnetometer` at 20 Hz and
/// the accelerometer/gyroscope `imu` (nil: found by probing) at `imuRate`, both mounted chip Z up
/// ("+X-Y-Z"), the WMM at `fallback` until a fix, ATT throttled to 4 a second.
public func makeFusedAgentConfig(dir: URL, magnetometer: String, imu: String?, imuRate: Double = 100, fallback: Vector3) -> AgentConfig {
    // No gpsd: port 1, where nothing listens (a free port now may be another shard's gpsfake later).
    var c = makeAgentConfig(gpsdPort: 1, dir: dir)
    let chipZUp = try! Orientation(axes: "+X-Y-Z")
    c.magnetometer.enabled = true
    c.magnetometer.reader.bus = "sim-bus"
    c.magnetometer.reader.chip = magnetometer
    c.magnetometer.reader.settings.rate = 20
    c.magnetometer.orientation = chipZUp
    c.imu.enabled = true
    c.imu.reader.bus = "sim-bus"
    c.imu.reader.chip = imu
    c.imu.reader.settings.rate = imuRate
    c.imu.orientation = chipZUp
    c.heading.fallbackPosition = fallback
    c.pipelines[StreamKey(.att, .compass)] = [.throttle(interval: 0.25, latest: true)]
    return c
}

/// The simulated bus `sim-bus` with the models of the IMU `imu` (attached first: an `lsm303agr` brings its own
/// magnetometer, which `magnetometer` then replaces) and of `magnetometer`, both chip Z up on one still
/// board heading `heading`° magnetic, `roll`° right side down, `pitch`° nose up, in `field`; `motion` turns
/// what the IMU senses (e.g. into a distorted accelerometer).
public func stillBoardBus(heading: Double, roll: Double, pitch: Double, field: LocalField, gravity: Double? = nil,
                          imu: String, magnetometer: String, motion: @escaping (Motion) -> Motion = { $0 }) -> SimulatedI2CBus {
    var b = VirtualIMU(heading: { _ in heading })
    b.roll = { _ in roll }
    b.pitch = { _ in pitch }
    if let gravity { b.gravity = gravity }
    return boardBus(b, field: field, imu: imu, magnetometer: magnetometer, motion: motion)
}

/// The simulated bus `sim-bus` with the models of the IMU `imu` and of `magnetometer`, both chip Z up, sensing `board`
/// at time 0 of its profiles (a profile that reads a value the test sets moves the board) in `field`.
public func boardBus(_ board: VirtualIMU, field: LocalField, imu: String, magnetometer: String,
                     motion: @escaping (Motion) -> Motion = { $0 }) -> SimulatedI2CBus {
    var b = board
    b.fieldNorm = field.reference.norm
    b.dip = field.reference.dip
    let board = b
    let bus = SimulatedI2CBus(path: "sim-bus")
    let compass = VirtualCompass(orientation: try! Orientation(axes: "+X-Y-Z"), clock: { 0 })
    compass.board = { board.boardField(at: $0) }
    ChipModels.attachInertial(chip: imu, to: bus) { motion(board.motion(at: 0)) }
    ChipModels.attach(chip: magnetometer, to: bus) { compass.field() }
    return bus
}

/// `../shared/signalk-schema/schemas`, the Signal K specification's JSON schemas; nil when absent.
public func signalKSchemas() -> URL? {
    sharedData().map { $0.deletingLastPathComponent().appendingPathComponent("signalk-schema/schemas") }
        .flatMap { FileManager.default.fileExists(atPath: $0.appendingPathComponent("delta.json").path) ? $0 : nil }
}

/// The marine checkers (`Tests/Fixtures/marine`).
public let marineFixtures = repoRoot.appendingPathComponent("Tests/Fixtures/marine")

/// Runs a Python script under Debian's python3 (`PYTHONPATH` = `pythonPath` if given): its exit status and
/// its stdout and stderr together.
public func runPython(_ script: String, _ args: [String], pythonPath: String? = nil) -> (status: Int32, output: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = [script] + args
    if let pythonPath { p.environment = ProcessInfo.processInfo.environment.merging(["PYTHONPATH": pythonPath]) { $1 } }
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    do { try p.run() } catch { return (-1, "\(error)") }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, text.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// Validates Signal K delta lines against the specification's schemas (`validate_signalk.py`); skips,
/// saying so, without the schemas or Python's jsonschema.
public func validateSignalK(_ deltas: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
    guard let schemas = signalKSchemas() else {
        throw XCTSkip("SKIPPED: ../shared/signalk-schema/schemas is not beside the repository")
    }
    let url = temporaryDirectory("signalk").appendingPathComponent("deltas.ndjson")
    defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
    try deltas.map { $0 + "\n" }.joined().write(to: url, atomically: true, encoding: .utf8)
    let (status, output) = runPython(marineFixtures.appendingPathComponent("validate_signalk.py").path, [schemas.path, url.path])
    if status == 77 { throw XCTSkip("SKIPPED: \(output)") }
    XCTAssertEqual(status, 0, output, file: file, line: line)
    return output
}

/// Mounts a tmpfs of `size` at `url` (made); skips the test when that is impossible. Returns the unmount.
public func mountTmpfs(_ url: URL, size: String) throws -> () -> Void {
    guard getuid() == 0 else { throw XCTSkip("SKIPPED: mounting a tmpfs needs root") }
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    let mount = Process()
    mount.executableURL = URL(fileURLWithPath: "/bin/mount")
    mount.arguments = ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", url.path]
    try mount.run()
    mount.waitUntilExit()
    guard mount.terminationStatus == 0 else { throw XCTSkip("SKIPPED: cannot mount a tmpfs here (mount exited \(mount.terminationStatus))") }
    return {
        let umount = Process()
        umount.executableURL = URL(fileURLWithPath: "/bin/umount")
        umount.arguments = [url.path]
        try? umount.run()
        umount.waitUntilExit()
    }
}

/// An agent and its socket door, started and stopped together as the daemon's group does (the other doors left
/// out): what the agent tests read through the socket.
public final class ServedAgent: Sendable {
    public let agent: Agent
    private let door: Mutex<SocketDoor?> = Mutex(nil)

    public init(config: AgentConfig, logger: Logger,
                openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus = { path throws(I2CError) in try LinuxI2CBus(path: path) }) {
        agent = Agent(config: config, logger: logger, openBus: openBus)
    }

    /// The socket door (nil before `start()`).
    public var socket: SocketDoor? { door.withLock { $0 } }

    /// The agent's wiring, the socket door's listeners, then the sources, as `Daemon` starts them.
    public func start() throws {
        try agent.startPublishing()
        do {
            let d = try SocketDoor.open(SocketDoor.Configuration(socket: agent.config.socket, pipelineStore: agent.config.pipelineStore),
                                        core: agent.core, logger: testLogger(), requests: agent.socketRequests)
            door.withLock { $0 = d }
        } catch {
            agent.stop()
            throw error
        }
        agent.startSources()
    }

    /// The sources, then the socket door, then the data log, as the daemon's group stops them.
    public func stop() {
        agent.stop(.sources)
        socket?.stop()
        agent.stop(.dataLog)
    }

    public var socketPath: String { agent.socketPath }
    public var statusLine: String { agent.statusLine(readers: socket?.clientCount ?? 0) }
    public var liveness: [Liveness.Evidence] { agent.liveness + (socket.map { [$0.liveness] } ?? []) }
    @discardableResult
    public func reloadCalibration(reason: String) -> String? { agent.reloadCalibration(reason: reason) }
}
