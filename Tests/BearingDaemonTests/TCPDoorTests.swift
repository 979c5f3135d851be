import BearingModel
import BearingWire
import BearingPOSIX
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Unmodified gpsd clients — Debian's gpspipe and cgps (libgps) and Python's gps module — reading the
/// agent through its loopback TCP door, fed by a real gpsd (gpsfake) and the simulated compass.
final class TCPDoorTests: XCTestCase {
    var dir: URL!
    var fake: GPSFake?
    var agent: ServedAgent?
    var tcpPort = 0

    override func setUpWithError() throws {
        try requireGpsfake()
        dir = temporaryDirectory("tcpdoor")
        let gpsdPort = freePort()
        tcpPort = freePort()
        var c = makeAgentConfig(gpsdPort: gpsdPort, dir: dir, passthrough: false)
        c.socket.tcp = ("127.0.0.1", tcpPort)
        c.pipelines[StreamKey(.tpv, .gpsd)] = []
        c.heading.fallbackPosition = Vector3(50.8, -1.1, 0)
        let a = ServedAgent(config: c, logger: testLogger())
        try a.start()
        agent = a
        // A long track, paced at 0.1 s per sentence, so the clients attach while it plays.
        let (_, log) = try writeTrack(in: dir) { $0.epochs = 600; $0.lossStart = 0.98; $0.lossEnd = 0.99 }
        fake = try GPSFake(log: log, port: gpsdPort, pace: 0.1)
        // Wait until the agent publishes fixes.
        let probe = try SocketClient(path: a.socketPath)
        probe.watch()
        XCTAssertFalse(probe.messages(timeout: 30) { $0.fix?.latitude != nil }.isEmpty)
    }

    override func tearDown() {
        fake?.stop()
        agent?.stop()
        try? FileManager.default.removeItem(at: dir)
    }

    /// Runs `executable` with `arguments`, returning its stdout (and stderr, marked) once it exits (killed
    /// after `timeout`). Output goes through files, not pipes: tmux's server inherits them and never exits.
    func output(_ executable: String, _ arguments: [String], timeout: Double = 30) throws -> (Int32, String) {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw XCTSkip("SKIPPED: \(executable) is not installed; .ci/run installs it (scripts/apt-packages)")
        }
        let name = URL(fileURLWithPath: executable).lastPathComponent + "-\(UInt32.random(in: 0...UInt32.max))"
        let outFile = dir.appendingPathComponent("\(name).out"), errFile = dir.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: outFile)
        p.standardError = try FileHandle(forWritingTo: errFile)
        try p.run()
        let deadline = Syscall.monotonicSeconds() + timeout
        while p.isRunning && Syscall.monotonicSeconds() < deadline { usleep(50_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        let out = (try? String(contentsOf: outFile, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errFile, encoding: .utf8)) ?? ""
        return (p.terminationStatus, out + (err.isEmpty ? "" : "\n[stderr]\n" + err))
    }

    func testGpspipeCountsTPVs() throws {
        let (status, text) = try output("/usr/bin/gpspipe", ["-w", "-n", "12", "127.0.0.1:\(tcpPort)"])
        XCTAssertEqual(status, 0, text)
        let lines = text.split(whereSeparator: \.isNewline)
        XCTAssertEqual(lines.count, 12)
        // One version everywhere: VERSION's release names the same version as `bearing --version`.
        let (_, version, _) = try runBearing(["--version"])
        XCTAssertTrue(lines.first?.hasPrefix(#"{"class":"VERSION","release":"bearing \#(version.trimmingCharacters(in: .whitespacesAndNewlines))""#) == true,
                      "\(lines.first ?? "") vs bearing --version \(version)")
        let tpv = lines.filter { $0.hasPrefix(#"{"class":"TPV""#) }
        XCTAssertGreaterThanOrEqual(tpv.count, 5, text)
        XCTAssertTrue(tpv.allSatisfy { $0.contains(#""lat":50.8"#) || $0.contains(#""lat":50.7"#) }, text)
    }

    func testPythonGpsModuleIteratesReports() throws {
        let script = """
        import gps, sys
        s = gps.gps(host="127.0.0.1", port="\(tcpPort)", mode=gps.WATCH_ENABLE | gps.WATCH_JSON)
        n = 0
        for report in s:
            if report["class"] == "TPV" and hasattr(report, "lat"):
                print("TPV %.6f %.6f %s" % (report.lat, report.lon, getattr(report, "time", "-")))
                n += 1
            elif report["class"] in ("VERSION", "DEVICES", "WATCH", "STATE", "SKY"):
                print(report["class"])
            if n >= 4:
                break
        """
        let file = dir.appendingPathComponent("client.py")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let (status, text) = try output("/usr/bin/python3", [file.path])
        XCTAssertEqual(status, 0, text)
        XCTAssertTrue(text.hasPrefix("VERSION\n"), text)
        XCTAssertFalse(text.contains("[stderr]"), text)
        let fixes = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("TPV ") }
        XCTAssertEqual(fixes.count, 4, text)
        for f in fixes {
            let parts = f.split(separator: " ")
            XCTAssertEqual(Double(parts[1]) ?? 0, 50.8, accuracy: 0.1)
            XCTAssertEqual(Double(parts[2]) ?? 0, -1.1, accuracy: 0.2)
        }
    }

    func testCgpsShowsOurFixUnderTmux() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), FileManager.default.isExecutableFile(atPath: "/usr/bin/cgps") else {
            throw XCTSkip("SKIPPED: tmux or cgps is not installed; .ci/run installs them (scripts/apt-packages)")
        }
        let session = "bearing-cgps-\(getpid())"
        let tmuxSocket = dir.appendingPathComponent("tmux.sock").path
        let screenFile = dir.appendingPathComponent("screen.txt").path
        /// tmux through posix_spawn and waitpid: its server daemonizes, which Foundation's Process does not survive.
        func tmux(_ args: [String]) -> String {
            let argv = ["/usr/bin/tmux", "-S", tmuxSocket] + args
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, screenFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            var pid: pid_t = 0
            let cargs = argv.map { strdup($0) } + [nil]
            defer { for a in cargs { free(a) } }
            guard posix_spawn(&pid, argv[0], &actions, nil, cargs, environ) == 0 else { return "" }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return (try? String(contentsOfFile: screenFile, encoding: .utf8)) ?? ""
        }
        _ = tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "30", "/usr/bin/cgps -s 127.0.0.1:\(tcpPort)"])
        defer { _ = tmux(["kill-server"]) }
        var screen = ""
        let deadline = Syscall.monotonicSeconds() + 20
        while Syscall.monotonicSeconds() < deadline {
            usleep(500_000)
            screen = tmux(["capture-pane", "-p", "-t", session])
            if screen.contains("50.") && screen.contains(" N") && screen.contains("3D FIX") { break }
        }
        print("cgps screen:\n\(screen)")
        XCTAssertTrue(screen.contains("3D FIX"), screen)
        XCTAssertNotNil(screen.range(of: #"50\.[0-9]+ N"#, options: .regularExpression), "our latitude on cgps's screen:\n\(screen)")
        XCTAssertNotNil(screen.range(of: #"1\.[0-9]+ W"#, options: .regularExpression), "our longitude on cgps's screen:\n\(screen)")
        XCTAssertNotNil(screen.range(of: #"Track.*[0-9]+\.[0-9]"#, options: .regularExpression), "a track (course) on cgps's screen:\n\(screen)")
    }

    func testTheTCPDoorHasTheUnixSocketsLimitsAndProtocol() throws {
        let c = try SocketClient(tcpPort: tcpPort)
        XCTAssertEqual(c.message(timeout: 5)?.className, "VERSION")
        c.send("?PIPELINE={\"name\":\"x\",\"TPV\":[{\"op\":\"sample\",\"every\":2}]};\n")
        XCTAssertEqual(c.message(timeout: 5)?.errorMessage,
                       "PIPELINE: a TCP client may not change pipelines; allowed: root and the uids in socket.pipeline_writers, over the UNIX socket")
        c.send(String(repeating: "x", count: 20_000) + "\n?VERSION;\n")
        let replies = c.messages(timeout: 5) { $0.className == "VERSION" }
        XCTAssertEqual(replies.map(\.className), ["ERROR", "VERSION"])
    }
}
