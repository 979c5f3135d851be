import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingSimulator
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// The whole-daemon rig: Debian's gpsd under gpsfake, the built `bearing` binary, agents on a gpsd port. Only the
// tests that need a real gpsd, broker or the binary import it (scripts/test --unit leaves them out).

/// The `bearing` executable built beside the test bundle.
public let bearingBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bearing")


public func requireGpsfake() throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake") else {
        throw XCTSkip("SKIPPED: /usr/bin/gpsfake is not installed (apt-get install gpsd gpsd-clients); .ci/run installs it")
    }
}

/// The release of Debian's gpsd (`gpsd -V`: "/usr/sbin/gpsd: 3.25 (revision 3.25)"), e.g. "3.25"; nil
/// without gpsd.
public let gpsdRelease: String? = {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/sbin/gpsd")
    p.arguments = ["-V"]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    guard (try? p.run()) != nil else { return nil }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    let words = text.split(whereSeparator: { $0 == " " || $0.isNewline })
    guard let i = words.firstIndex(where: { $0.hasSuffix("gpsd:") }), i + 1 < words.count else { return nil }
    return String(words[i + 1])
}()

/// gpsd's output differs between releases (more TPVs per epoch, other decimals, new fields), so expected
/// files made with a release other than 3.22 live in `OTHERS/gpsd-RELEASE/`. Returns the directory for the
/// gpsd installed here (`gpsd322` for 3.22); fails the test, naming the script that makes them, when there
/// is none.
public func expectedFilesDirectory(gpsd322: URL, others: URL, makeWith script: String) throws -> URL {
    guard let release = gpsdRelease else { throw XCTSkip("SKIPPED: gpsd -V gave no release") }
    if release.hasPrefix("3.22") { return gpsd322 }
    let dir = others.appendingPathComponent("gpsd-\(release)")
    guard FileManager.default.fileExists(atPath: dir.path) else {
        XCTFail("no expected files for gpsd \(release) in \(dir.path): make them with \(script)")
        throw XCTSkip("no expected files for gpsd \(release)")
    }
    return dir
}


public struct GPSFakeError: Error, CustomStringConvertible {
    public let description: String
    /// gpsfake ended, refused by its own gpsd, before that gpsd listened on 127.0.0.1 (`GPSFake.waitForListener`).
    public var refusedBeforeListening = false
    /// gpsd listened but was never given gpsfake's device (`GPSFake.waitForDevice`).
    public var noDevice = false
    /// How many times gpsfake was started.
    public var launches = 1
}

/// Debian's gpsfake replaying a log into a gpsd of its own on a loopback port; `init` returns once that gpsd
/// listens.
public final class GPSFake {
    public private(set) var process = Process()
    public let tmp: URL

    /// How often gpsfake is started again when it was refused by its own gpsd before that gpsd listened (below).
    static let launches = 3

    /// How many times gpsfake was started before its gpsd served.
    public private(set) var launches = 1

    /// `afterListening`, for the rig's own tests: called with the launch's number once its gpsd listens.
    public init(log: URL, port: Int, pace: Double? = 0.02, speed: Int? = nil,
                afterListening: ((GPSFake, Int) -> Void)? = nil) throws {
        try requireGpsfake()
        tmp = temporaryDirectory("gpsfake")
        var args = ["-1", "-p", "-q", "-P", String(port)]
        if let pace { args += ["-c", String(pace)] }
        if let speed { args += ["-s", String(speed)] }
        args.append(log.path)
        for launch in 1...Self.launches {
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/gpsfake")
            process.arguments = args
            var env = ProcessInfo.processInfo.environment
            env["TMPDIR"] = tmp.path
            process.environment = env
            process.standardOutput = FileHandle.nullDevice
            let errors = tmp.appendingPathComponent("gpsfake.stderr")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            launches = launch
            do {
                try waitForListener(port: port, errors: errors)
                afterListening?(self, launch)
                try waitForDevice(port: port, errors: errors)
                return
            } catch var error as GPSFakeError {
                error.launches = launch
                guard (error.refusedBeforeListening || error.noDevice) && launch < Self.launches else { throw error }
                // gpsfake's own race, before its gpsd read a sentence: start it again on the same port.
                FileHandle.standardError.write(Data("GPSFake: \(error); starting gpsfake again (\(launch + 1) of \(Self.launches))\n".utf8))
            }
        }
    }

    /// Returns once gpsd listens on 127.0.0.1:port; throws, with gpsfake's stderr, when it cannot. gpsd binds
    /// 127.0.0.1 and then ::1, and when the first is taken it serves on ::1 alone: gpsfake runs on, and a client of
    /// 127.0.0.1 is refused for as long as it waits (CI on 2026-12-01, 120 s). So a listener of gpsd's own on ::1
    /// without one on 127.0.0.1 is the failure, seen at once; gpsfake ending, or 60 s with neither, is too.
    ///
    /// gpsfake ending at once with "socket error [Errno 111] Connection refused" and no listener seen is gpsfake's
    /// own race (CI on 2026-12-02, 0.17 s after the start, under load): it waits for gpsd's control socket to exist,
    /// but its `add_device` skips the device without a word when connecting to that socket is refused (gpsd has
    /// bound it and not yet called listen), so nothing waits for gpsd's TCP listener, and gpsfake's own client is
    /// refused on it. It ends before it feeds a sentence, so starting it again loses nothing
    /// (`GPSFakeError.refusedBeforeListening`). Not when gpsd said it could not bind 127.0.0.1: the port was taken, and
    /// gpsfake ended before its gpsd's listener on ::1 was seen here (CI later the same day); that is said as such.
    func waitForListener(port: Int, errors: URL) throws {
        let deadline = Syscall.monotonicSeconds() + 60
        var failure: String?
        var ended = false
        while failure == nil {
            let sockets = gpsdPID().map(Self.socketInodes) ?? []
            let v4 = Self.listeners(table: "/proc/net/tcp", port: port), v6 = Self.listeners(table: "/proc/net/tcp6", port: port)
            if !v4.isDisjoint(with: sockets) { return }
            if !v6.isDisjoint(with: sockets) {
                failure = "gpsd listens on [::1]:\(port) only: 127.0.0.1:\(port) was taken (\(v4.isEmpty ? "not by a listener" : "by another listener"))"
            } else if !process.isRunning {
                failure = "gpsfake ended (\(process.terminationStatus)) with no gpsd listening on 127.0.0.1:\(port)"
                ended = true
            } else if Syscall.monotonicSeconds() > deadline {
                failure = "no gpsd listening on 127.0.0.1:\(port) 60 s after gpsfake started"
            } else {
                usleep(20_000)
            }
        }
        let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        stop(removing: false)
        // gpsfake may end before its gpsd's listener on ::1 is seen: gpsd's own words then say the port was taken.
        let taken = said.contains("can't bind to IPv4 port")
        if ended && taken { failure = "gpsd could not listen on 127.0.0.1:\(port): 127.0.0.1:\(port) was taken" }
        throw GPSFakeError(description: "\(failure!); gpsfake's stderr: \(said.isEmpty ? "(empty)" : said)",
                           refusedBeforeListening: ended && !taken && said.contains("socket error") && said.contains("Connection refused"))
    }

    /// Returns once gpsd lists a device (`?DEVICES;`); throws `GPSFakeError.noDevice` when it lists none within 5 s
    /// of listening, or gpsfake ends first. The same race as above, later: gpsfake's `add_device` connects to the
    /// control socket after waiting for its file to exist and skips the device without a word when that connect is
    /// refused. If gpsd listens on TCP by the time gpsfake's own client connects, gpsfake runs on, writing the log
    /// into a pty its gpsd never opens, and a client waits for data that never comes (CI on 2026-12-02,
    /// `ConformanceTests`: 0 of 17 TPVs, "no data for 60 s"). gpsd has read nothing, so starting again loses nothing.
    func waitForDevice(port: Int, errors: URL) throws {
        let deadline = Syscall.monotonicSeconds() + 5
        var listed: [String]? = nil
        while process.isRunning {
            listed = Self.devices(port: port)
            if let listed, !listed.isEmpty { return }
            if Syscall.monotonicSeconds() > deadline { break }
            usleep(50_000)
        }
        let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        let state = process.isRunning ? "" : " (gpsfake ended, \(process.terminationStatus))"
        stop(removing: false)
        throw GPSFakeError(description: "gpsd on 127.0.0.1:\(port) \(listed == nil ? "did not answer ?DEVICES;" : "lists no device")\(state); "
                           + "gpsfake's stderr: \(said.isEmpty ? "(empty)" : said)", noDevice: true)
    }

    /// The inodes of the sockets in LISTEN state (0A) on `port` in a /proc/net/tcp{,6} table.
    static func listeners(table: String, port: Int) -> Set<String> {
        let suffix = String(format: ":%04X", port)
        let lines = ((try? String(contentsOfFile: table, encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
        return Set(lines.compactMap { line in
            let f = line.split(separator: " ")
            return f.count > 9 && f[1].hasSuffix(suffix) && f[3] == "0A" ? String(f[9]) : nil
        })
    }

    /// The inodes of the sockets a process has open (its fds that link to `socket:[N]`).
    static func socketInodes(pid: Int32) -> Set<String> {
        let dir = "/proc/\(pid)/fd"
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return Set(fds.compactMap { fd in
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(dir)/\(fd)"),
                  link.hasPrefix("socket:[") else { return nil }
            return String(link.dropFirst(8).dropLast())
        })
    }

    public var pid: Int32 { process.processIdentifier }

    /// gpsfake's control socket to its gpsd (`-F`), where devices are added ("+path") and removed ("-path").
    public var controlSocket: URL { tmp.appendingPathComponent("gpsfake-\(pid).sock") }

    /// The devices gpsd on `port` has (its answer to `?DEVICES;`), or nil when it does not answer within `timeout`.
    public static func devices(port: Int, timeout: Double = 2) -> [String]? {
        guard let client = try? SocketClient(tcpPort: port) else { return nil }
        client.send("?DEVICES;\n")
        let reply = client.collect(timeout: timeout) { cls($0) == "DEVICES" }.last
        guard let reply, cls(reply) == "DEVICES" else { return nil }
        return (reply["devices"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
    }

    /// gpsd, started by gpsfake as its child.
    public func gpsdPID() -> Int32? {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ Int32($0) }) {
            let comm = (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? ""
            if comm.hasPrefix("gpsd") { return child }
        }
        return nil
    }

    /// SIGTERM, and SIGKILL for gpsfake and its gpsd if they are still there 5 s later: gpsfake's SIGTERM
    /// handler only kills its gpsd, so teardown must not rest on it exiting by itself.
    public func stop() { stop(removing: true) }

    /// `removing`: the temporary directory too (kept for a launch again).
    func stop(removing: Bool) {
        if process.isRunning {
            let gpsd = gpsdPID()
            kill(pid, SIGTERM)
            let deadline = Syscall.monotonicSeconds() + 5
            while process.isRunning && Syscall.monotonicSeconds() < deadline { usleep(20_000) }
            if process.isRunning {
                if let gpsd { kill(gpsd, SIGKILL) }
                kill(pid, SIGKILL)
            }
        }
        process.waitUntilExit()
        if removing { try? FileManager.default.removeItem(at: tmp) }
    }

    deinit { stop() }
}


/// Starts the bearing executable with `args` (stdin at /dev/null); skips when it is not built.
public func launchBearing(_ args: [String], environment: [String: String]? = nil) throws -> (Process, Pipe, Pipe) {
    guard FileManager.default.isExecutableFile(atPath: bearingBinary.path) else {
        throw XCTSkip("SKIPPED: \(bearingBinary.path) not built (run swift build first)")
    }
    let p = Process()
    p.executableURL = bearingBinary
    p.arguments = args
    if let environment { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = FileHandle.nullDevice
    try p.run()
    return (p, out, err)
}

/// Runs the bearing executable to its end: exit status (or signal), stdout, stderr.
public func runBearing(_ args: [String], environment: [String: String]? = nil) throws -> (Int32, String, String) {
    let (p, out, err) = try launchBearing(args, environment: environment)
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}


/// Generates a track with `configure`d options and writes it to `dir/track.nmea` for gpsfake.
@discardableResult
public func writeTrack(in dir: URL, _ configure: (inout NMEATrack.Options) -> Void) throws -> (track: NMEATrack, url: URL) {
    var options = NMEATrack.Options()
    configure(&options)
    let track = NMEATrack(options)
    let url = dir.appendingPathComponent("track.nmea")
    try track.text.write(to: url, atomically: true, encoding: .utf8)
    return (track, url)
}

