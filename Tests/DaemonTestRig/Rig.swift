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


/// Debian's gpsfake replaying a log into a gpsd of its own on a loopback port.
public final class GPSFake {
    public let process = Process()
    public let tmp: URL

    public init(log: URL, port: Int, pace: Double? = 0.02, speed: Int? = nil) throws {
        try requireGpsfake()
        tmp = temporaryDirectory("gpsfake")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gpsfake")
        var args = ["-1", "-p", "-q", "-P", String(port)]
        if let pace { args += ["-c", String(pace)] }
        if let speed { args += ["-s", String(speed)] }
        process.arguments = args + [log.path]
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = tmp.path
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }

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
    public func stop() {
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
        try? FileManager.default.removeItem(at: tmp)
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

