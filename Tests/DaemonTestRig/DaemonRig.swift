import BearingI2C
import BearingLog
import BearingModel
import BearingPOSIX
import BearingSimulator
import BearingDaemon
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A whole `Daemon` in-process, as `bearing run` builds it: the fused compass on the simulated bus
/// (`magnetometer.bus: simulator`, the QMC5883L and the LSM6DSOX of the board turning at 6°/s while rolling
/// ±12° and pitching ±5°), optionally a real gpsd (gpsfake) replaying a generated track in the Solent, and the
/// doors the test's YAML turns on. `run()` runs on a task of its own; the rig knows it has begun from the
/// READY=1 that the daemon sends to a notification socket of the rig's (systemd's protocol), so that each
/// test starts on a daemon whose services all run.
public final class DaemonRig {
    public let dir: URL
    public let config: AgentConfig
    public let daemon: Daemon
    public private(set) var fake: GPSFake?
    /// gpsfake's log and port while it waits for `startGPS()` (`gpsStartsLater`).
    private var laterGPS: (log: URL, port: Int)?
    public let track: NMEATrack?
    /// The systemd notifications the daemon sent, in order (READY=1, STATUS=…, STOPPING=1).
    public private(set) var notifications: [String] = []
    private let notify: DatagramReceiver
    private let outcome = RunOutcome()
    private var finished = false

    /// The gpsd port of a rig without GPS: nothing listens there.
    public static let noGPSD = 1

    /// The fallback position: Sydney, declination ≈ +12.8° (so true and magnetic headings differ until a fix).
    public static let fallback = Vector3(-33.9, 151.2, 0)
    /// The devices the sensors publish as.
    public static let magnetometerDevice = "i2c:simulator:0x0d", imuDevice = "i2c:simulator:0x6a"

    /// `doors`: more top-level YAML sections (nmea0183, signalk, mqtt, log), given the rig's directory;
    /// `configure` then changes the parsed config. `gpsEpochs`: the track's length (gpsfake plays about four
    /// epochs a second); `trackOptions` then changes its options. `gpsStartsLater`: gpsfake is started by
    /// `startGPS()`, not now (the daemon runs without a fix until then; the port is the rig's meanwhile, `freePort`). `openBus`: the bus the sensors are read on (the
    /// simulator's; a test's own board, whose models it moves). `wallClock`: the clock the samples are stamped by (a
    /// test's own, to step it). Waits (15 s at most) for READY=1; throws when the daemon cannot start or does not get
    /// ready.
    public init(_ name: String, gps: Bool, gpsEpochs: Int = 600, doors: (URL) -> String = { _ in "" },
                configure: (inout AgentConfig) -> Void = { _ in }, logger: Logger = testLogger(),
                openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus = BusOpener.open,
                wallClock: @escaping @Sendable () -> GPSTimestamp = GPSTimestamp.now,
                trackOptions: (inout NMEATrack.Options) -> Void = { _ in }, gpsStartsLater: Bool = false) throws {
        Syscall.ignoreSIGPIPE()
        let dir = temporaryDirectory(name)
        self.dir = dir
        // Without GPS, a port no test can listen on (1, privileged and unused): a free port picked now may be
        // another shard's gpsfake a moment later, and its fixes would move this daemon's WMM field and declination.
        let gpsdPort = gps ? freePort() : DaemonRig.noGPSD
        let yaml = """
            gpsd: {host: 127.0.0.1, port: \(gpsdPort), retry_initial: 0.05, retry_max: 0.5}
            socket: {path: \(dir.appendingPathComponent("bearing.sock").path)}
            pipeline_store: \(dir.appendingPathComponent("pipelines.json").path)
            heading: {fallback_position: [\(Self.fallback.x), \(Self.fallback.y), \(Self.fallback.z)]}
            magnetometer:
              bus: simulator
              chip: qmc5883l
              address: 0x0d
              rate: 20
              orientation: "+X-Y-Z"
              calibration: \(dir.appendingPathComponent("calibration.json").path)
              retry_initial: 0.05
              retry_max: 0.2
            imu:
              bus: simulator
              chip: lsm6dsx
              address: 0x6a
              rate: 50
              orientation: "+X-Y-Z"
              retry_initial: 0.05
              retry_max: 0.2
            \(doors(dir))
            """
        var c = try AgentConfig.parse(yaml: yaml, source: "\(name).yaml")
        // The black box saves in the rig's directory, not /var/lib/bearing (unless the test's YAML says where).
        if c.blackbox.directory == BlackBoxConfig().directory { c.blackbox.directory = dir.appendingPathComponent("blackbox").path }
        configure(&c)
        config = c

        if gps {
            // A long track with its fix lost only at the very end, paced so that it outlasts any test.
            let (t, log) = try writeTrack(in: dir) { o in
                o.epochs = gpsEpochs; o.lossStart = 0.98; o.lossEnd = 0.99
                trackOptions(&o)
            }
            track = t
            if gpsStartsLater {
                laterGPS = (log, gpsdPort)
                fake = nil
            } else {
                fake = try GPSFake(log: log, port: gpsdPort, pace: 0.05)
            }
        } else {
            track = nil
            fake = nil
        }

        let notifyName = "@bearing-rig-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        notify = try DatagramReceiver(notifyName)
        // The daemon reads NOTIFY_SOCKET once, in `init`.
        setenv("NOTIFY_SOCKET", notifyName, 1)
        do {
            daemon = try Daemon(config: c, logger: logger, signals: [], openBus: openBus, wallClock: wallClock)
        } catch {
            unsetenv("NOTIFY_SOCKET")
            fake?.stop()
            try? FileManager.default.removeItem(at: dir)
            throw error
        }
        unsetenv("NOTIFY_SOCKET")

        let daemon = self.daemon, outcome = self.outcome
        Task.detached {
            do {
                try await daemon.run()
                outcome.finish(error: nil)
            } catch {
                outcome.finish(error: "\(error)")
            }
        }
        guard waitForNotification("READY=1", timeout: 15) else {
            finish()
            throw RigError(message: "the daemon sent no READY=1 in 15 s (notifications: \(notifications))")
        }
    }

    /// Reads notifications until one has a line `line` (true), or `timeout` passes (false).
    @discardableResult
    public func waitForNotification(_ line: String, timeout: Double) -> Bool {
        if notifications.contains(where: { $0.split(separator: "\n").contains(Substring(line)) }) { return true }
        let deadline = Syscall.monotonicSeconds() + timeout
        while Syscall.monotonicSeconds() < deadline {
            guard let n = notify.next(timeout: deadline - Syscall.monotonicSeconds()) else { break }
            notifications.append(n)
            if n.split(separator: "\n").contains(Substring(line)) { return true }
        }
        return false
    }

    public var socketPath: String { config.socket.path }

    /// Starts gpsfake on the rig's track, for a rig made with `gpsStartsLater` (once; later calls do nothing).
    public func startGPS() throws {
        guard let (log, port) = laterGPS else { return }
        laterGPS = nil
        fake = try GPSFake(log: log, port: port, pace: 0.05)
    }

    /// Whether `run()` has returned, and what it threw.
    public var runEnded: (ended: Bool, error: String?) { outcome.state }

    /// `daemon.shutdown()`, then waits up to `timeout` s for `run()` to return: the seconds it took, or nil
    /// when it did not return in time.
    @discardableResult
    public func shutdown(timeout: Double = 10) -> Double? {
        let start = Syscall.monotonicSeconds()
        daemon.shutdown()
        guard outcome.wait(until: start + timeout) else { return nil }
        return Syscall.monotonicSeconds() - start
    }

    /// Stops what is still running (the daemon, gpsfake) and removes the directory. Call it in a `defer`.
    public func finish() {
        guard !finished else { return }
        finished = true
        if !outcome.state.ended && shutdown(timeout: 15) == nil {
            XCTFail("the daemon's run() did not return within 15 s of shutdown()")
        }
        fake?.stop()
        try? FileManager.default.removeItem(at: dir)
    }

    deinit { finish() }
}

public struct RigError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Whether `Daemon.run()` has returned (and its error), from the task that runs it.
final class RunOutcome: @unchecked Sendable { // `lock` guards `ended` and `error`
    private let lock = ConditionLock()
    private var ended = false
    private var error: String?

    func finish(error: String?) {
        lock.withLock {
            ended = true
            self.error = error
            lock.broadcast()
        }
    }

    var state: (ended: Bool, error: String?) { lock.withLock { (ended, error) } }

    /// Waits until `run()` returned (true) or the monotonic `deadline` passes (false).
    func wait(until deadline: Double) -> Bool {
        lock.withLock {
            while !ended {
                if !lock.wait(until: deadline) { return ended }
            }
            return true
        }
    }
}

/// A TCP reader of raw bytes with deadlines (a door's output as it is on the wire: CRLF and all).
public final class RawTCPReader {
    public let fd: Int32
    public private(set) var bytes: [UInt8] = []
    /// The peer closed the connection (read returned 0) or it failed.
    public private(set) var closed = false

    public init(port: Int) throws {
        Syscall.ignoreSIGPIPE()
        fd = try TCPSocket.connect(host: "127.0.0.1", port: port)
    }

    /// A reader whose receive buffer (SO_RCVBUF, set before connecting so that the window is small from the
    /// start) holds about `receiveBuffer` bytes: a peer that stops reading is felt by the sender at once.
    public init(port: Int, receiveBuffer: Int32) throws {
        Syscall.ignoreSIGPIPE()
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw SystemError("socket") }
        var size = receiveBuffer
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let r = withLoopbackAddress(port: port) { Glibc.connect(s, $0, $1) }
        guard r == 0 else {
            let e = SystemError("connect", "127.0.0.1:\(port)")
            close(s)
            throw e
        }
        fd = s
    }

    deinit { close(fd) }

    /// Reads until `done(bytes so far)` holds, the connection closes, or `timeout` passes; returns `done`'s
    /// last answer.
    @discardableResult
    public func read(timeout: Double, until done: ([UInt8]) -> Bool) -> Bool {
        let deadline = Syscall.monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(bytes) && !closed {
            let left = deadline - Syscall.monotonicSeconds()
            guard left > 0 else { break }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(max(1, left * 1000)))
            if r < 0 && errno == EINTR { continue }
            guard r == 1 else { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { closed = true; break }
            bytes += buffer[0..<n]
        }
        return done(bytes)
    }

    /// Waits until the peer closes the connection (true) or `timeout` passes (false), dropping what arrives.
    public func waitForClose(timeout: Double) -> Bool {
        read(timeout: timeout) { _ in false }
        return closed
    }

    /// The complete lines so far, split at CRLF (a line cut short at the end is left out). A line holding a
    /// lone CR or LF keeps it, for the caller to find.
    public var crlfLines: [String] { Self.crlfLines(bytes) }

    public static func crlfLines(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = 0
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == UInt8(ascii: "\r") && bytes[i + 1] == UInt8(ascii: "\n") {
                lines.append(String(decoding: bytes[start..<i], as: UTF8.self))
                i += 2
                start = i
            } else {
                i += 1
            }
        }
        return lines
    }
}

/// A UDP socket bound to a free loopback port, reading datagrams with deadlines.
public final class LoopbackUDPSocket {
    public let fd: Int32
    public let port: Int

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { close(fd); throw SystemError("bind", "127.0.0.1:0") }
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    deinit { close(fd) }

    /// The next datagram, or nil when `timeout` passes first.
    public func next(timeout: Double) -> String? {
        let deadline = Syscall.monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let left = deadline - Syscall.monotonicSeconds()
            guard left > 0 else { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(max(1, left * 1000)))
            if r < 0 && errno == EINTR { continue }
            guard r == 1 else { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return n < 0 ? nil : String(decoding: buffer[0..<n], as: UTF8.self)
        }
    }

    /// Datagrams until `done(all so far)` holds or `timeout` passes.
    public func collect(timeout: Double, until done: ([String]) -> Bool) -> [String] {
        var out: [String] = []
        let deadline = Syscall.monotonicSeconds() + timeout
        while !done(out), let d = next(timeout: deadline - Syscall.monotonicSeconds()) { out.append(d) }
        return out
    }

    /// Drops what is queued; returns how many datagrams that was.
    @discardableResult
    public func drain() -> Int {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var n = 0
        while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) >= 0 { n += 1 }
        return n
    }
}

/// The errno of a TCP connection to 127.0.0.1:`port`, or nil when it connects.
public func tcpConnectError(port: Int) -> Int32? {
    do {
        let fd = try TCPSocket.connect(host: "127.0.0.1", port: port)
        close(fd)
        return nil
    } catch {
        return error.errno
    }
}

/// The errno of a connection to the UNIX socket `path`, or nil when it connects.
public func unixConnectError(path: String) -> Int32? {
    do {
        let fd = try UnixSocket.connect(path: path)
        close(fd)
        return nil
    } catch {
        return error.errno
    }
}

/// Whether the other end of the stream socket `fd` has closed it: a read returns end-of-file (or the
/// connection was reset) rather than "nothing yet". Nothing is consumed.
public func peerClosed(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    return n == 0 || (n < 0 && errno == ECONNRESET)
}

/// A JSON object from one line, or nil.
public func jsonObject(_ line: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
}
