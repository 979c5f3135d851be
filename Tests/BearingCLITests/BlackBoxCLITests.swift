import BearingModel
import BearingPOSIX
import BearingRecording
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// The black box through the built binary: `record`, `replay` (and its refusals), continuous recording
/// killed with SIGKILL, and a full disk.
final class BlackBoxCLITests: XCTestCase {
    /// A config for the simulated board with continuous recording into `directory`.
    func writeConfig(_ dir: URL, blackbox directory: URL, extra: String = "") throws -> URL {
        let url = dir.appendingPathComponent("bearing.yaml")
        try """
            gpsd: {host: 127.0.0.1, port: \(freePort()), retry_initial: 0.05, retry_max: 0.5}
            socket: {path: \(dir.appendingPathComponent("bearing.sock").path)}
            pipeline_store: \(dir.appendingPathComponent("pipelines.json").path)
            magnetometer: {calibration: \(dir.appendingPathComponent("calibration.json").path)}
            blackbox: {continuous: true, directory: \(directory.path)\(extra)}
            """.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func testRecordReplayAndExportThroughTheCommandLine() throws {
        let dir = temporaryDirectory("bb-cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("r.bbx").path
        let config = try writeConfig(dir, blackbox: dir.appendingPathComponent("bb"))
        let (status, out, err) = try runBearing(["record", "--board", "simulator", "--config", config.path, "--duration", "3", file])
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(out.contains("recorded 3 s to"), out)
        let log = dir.appendingPathComponent("replay.ndjson").path
        let (rs, _, re) = try runBearing(["replay", file, "--fast", "--data-log", log])
        XCTAssertEqual(rs, 0, re)
        XCTAssertTrue(re.contains("sensor samples"), re)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        XCTAssertGreaterThan(lines.filter { $0.contains("\"class\":\"ATT\"") }.count, 2, "ATT from the replayed drivers")
        // The samples, for `bearing attitude --samples`.
        let csv = dir.appendingPathComponent("s.csv").path
        let (es, eo, ee) = try runBearing(["replay", file, "--export-samples", csv])
        XCTAssertEqual(es, 0, ee)
        XCTAssertTrue(eo.contains("samples to"), eo)
        let (as_, _, ae) = try runBearing(["attitude", "--samples", csv, "--json"])
        XCTAssertEqual(as_, 0, ae)
    }

    /// The committed recording replays to the committed data log, byte for byte, whatever the toolchain
    /// (Swift 6.3.1 here, 6.0.3 and gpsd 3.25's libgps on Debian 13; arm64 in scripts/arm64-user).
    func testTheFixtureReplaysToItsDataLogByteForByte() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/blackbox")
        let dir = temporaryDirectory("bb-fixture")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("replay.ndjson").path
        let (status, _, err) = try runBearing(["replay", fixtures.appendingPathComponent("simulator-gpsd.bbx").path, "--fast",
                                               "--socket", dir.appendingPathComponent("s.sock").path, "--data-log", log])
        XCTAssertEqual(status, 0, err)
        let got = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("\"class\":\"CALIBRATION\"") }.joined(separator: "\n")
        let want = try String(contentsOf: fixtures.appendingPathComponent("simulator-gpsd.expected.ndjson"), encoding: .utf8)
        XCTAssertTrue(want.contains("\"class\":\"TPV\"") && want.contains("\"class\":\"ATT\""))
        XCTAssertEqual(got, want, "the replay's data log differs from the committed one")
    }

    func testAFileFromANewerVersionOrCorruptInTheMiddleIsRefusedNamingTheOffset() throws {
        let dir = temporaryDirectory("bb-corrupt")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("r.bbx").path
        let config = try writeConfig(dir, blackbox: dir.appendingPathComponent("bb"))
        let (status, _, err) = try runBearing(["record", "--board", "simulator", "--config", config.path, "--duration", "3", file])
        XCTAssertEqual(status, 0, err)
        let good = try AtomicFile.read(file, limit: 1 << 26)
        // A byte in the middle.
        var bad = good
        bad[bad.count / 2] ^= 0x5A
        let corrupt = dir.appendingPathComponent("corrupt.bbx").path
        try AtomicFile.write(bad, to: corrupt)
        let (cs, _, ce) = try runBearing(["replay", corrupt, "--fast"])
        XCTAssertEqual(cs, 65, ce)
        XCTAssertNotNil(ce.range(of: "byte [0-9]+", options: .regularExpression), "the offset is named: \(ce)")
        // A newer format version.
        var newer = good
        newer[8] = 2
        let newerFile = dir.appendingPathComponent("newer.bbx").path
        try AtomicFile.write(newer, to: newerFile)
        let (ns, _, ne) = try runBearing(["replay", newerFile, "--fast"])
        XCTAssertEqual(ns, 65, ne)
        XCTAssertTrue(ne.contains("version"), ne)
        // A cut tail: replayed up to the last good record, and said so.
        let cut = dir.appendingPathComponent("cut.bbx").path
        try AtomicFile.write(Array(good.dropLast(7)), to: cut)
        let (ts, _, te) = try runBearing(["replay", cut, "--fast"])
        XCTAssertEqual(ts, 0, te)
        XCTAssertTrue(te.contains("damaged frame at byte offset"), te)
    }

    /// SIGKILL during continuous recording, 20 times: every segment reads, and each loses at most about a
    /// second (the frame being built, and the one being written).
    func testKillDashNineLosesAtMostASecond() throws {
        let dir = temporaryDirectory("bb-kill")
        defer { try? FileManager.default.removeItem(at: dir) }
        var losses: [Double] = []
        for round in 0..<20 {
            let segments = dir.appendingPathComponent("bb-\(round)")
            let config = try writeConfig(dir, blackbox: segments)
            let (p, _, _) = try launchBearing(["run", "--board", "simulator", "--config", config.path])
            // Until the segment holds a couple of seconds, then a little more, at a different point each round.
            let deadline = Date().addingTimeInterval(20)
            var file: URL?
            while Date() < deadline {
                file = try? FileManager.default.contentsOfDirectory(at: segments, includingPropertiesForKeys: nil).first { $0.pathExtension == "bbx" }
                if let file, let size = try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize, size > 2000 { break }
                usleep(50_000)
            }
            usleep(UInt32(300_000 + 60_000 * round))
            let killed = GPSTimestamp.now()
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let segment = try XCTUnwrap(file, "round \(round): no segment written")
            let recording: Recording
            do {
                recording = try Recording(bytes: try AtomicFile.read(segment.path, limit: 1 << 26))
            } catch {
                XCTFail("round \(round): \(segment.lastPathComponent) does not read: \(error)")
                continue
            }
            let last = recording.events.compactMap { e -> GPSTimestamp? in
                if case .sensorSample(_, let t, _) = e.record { return t }
                return nil
            }.max()
            let lastTime = try XCTUnwrap(last, "round \(round): no samples")
            losses.append(killed.unixTime - lastTime.unixTime)
        }
        print("SIGKILL during continuous recording, 20 rounds: seconds lost \(losses.map { String(format: "%.2f", $0) }.joined(separator: " "))")
        XCTAssertEqual(losses.count, 20)
        XCTAssertLessThanOrEqual(losses.max() ?? 99, 1.0, "\(losses)")
    }

    /// A full disk under continuous recording: one logged error, and the daemon keeps serving.
    func testAFullDiskIsOneLoggedErrorAndTheDaemonKeepsServing() throws {
        let dir = temporaryDirectory("bb-full")
        defer { try? FileManager.default.removeItem(at: dir) }
        let segments = dir.appendingPathComponent("full")
        let unmount = try mountTmpfs(segments, size: "4k")
        defer { unmount() }
        let config = try writeConfig(dir, blackbox: segments, extra: ", segment_minutes: 1")
        let (p, _, err) = try launchBearing(["run", "--board", "simulator", "--config", config.path])
        defer { if p.isRunning { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() } }
        let socket = dir.appendingPathComponent("bearing.sock").path
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !FileManager.default.fileExists(atPath: socket) { usleep(50_000) }
        sleep(6)
        let client = try SocketClient(path: socket)
        client.watch()
        let objects = client.collect(timeout: 5) { cls($0) == "ATT" }
        XCTAssertEqual(objects.last.map(cls), "ATT", "the daemon serves with the disk full")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(log.components(separatedBy: "cannot write continuous segments").count - 1, 1, log)
        XCTAssertTrue(log.contains("No space left on device"), log)
        XCTAssertEqual(p.terminationStatus, 0, log)
    }
}

extension BlackBoxCLITests {
    /// With another config the replay gives what that config would have: here a slower ATT chain.
    func testAChangedConfigGivesWhatItWouldHaveGiven() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/blackbox")
        let dir = temporaryDirectory("bb-changed")
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("changed.yaml")
        try """
            heading: {fallback_position: [50.8, -1.1]}
            socket: {path: \(dir.appendingPathComponent("s.sock").path)}
            pipeline_store: \(dir.appendingPathComponent("pipelines.json").path)
            log: {data_log: \(dir.appendingPathComponent("changed.ndjson").path)}
            pipeline:
              att: [{op: throttle, interval: 2}]
            """.write(to: config, atomically: true, encoding: .utf8)
        let (status, _, err) = try runBearing(["replay", fixtures.appendingPathComponent("simulator-gpsd.bbx").path, "--fast",
                                               "--board", "simulator", "--config", config.path])
        XCTAssertEqual(status, 0, err)
        let count = { (text: String) in text.split(separator: "\n").filter { $0.contains("\"class\":\"ATT\"") }.count }
        let changed = count(try String(contentsOf: dir.appendingPathComponent("changed.ndjson"), encoding: .utf8))
        let recorded = count(try String(contentsOf: fixtures.appendingPathComponent("simulator-gpsd.expected.ndjson"), encoding: .utf8))
        XCTAssertGreaterThan(changed, 0)
        XCTAssertLessThan(changed, recorded, "a 2 s throttle publishes fewer ATT than the recorded 0.5 s one")
    }
}

extension BlackBoxCLITests {
    /// `--wait-for-client`: the replay waits until a reader has sent its WATCH, then starts, and that reader
    /// gets the replay's TPV and ATT from the first record (issue 37: it used to wait forever).
    func testWaitForClientStartsWhenTheFirstClientWatches() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/blackbox")
        let dir = temporaryDirectory("bb-wait")
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("s.sock").path
        let (p, _, err) = try launchBearing(["replay", fixtures.appendingPathComponent("simulator-gpsd.bbx").path, "--fast",
                                             "--wait-for-client", "--socket", socket])
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline && !FileManager.default.fileExists(atPath: socket) { usleep(20_000) }
        // Connected but not watching: the replay has not started.
        let idle = try SocketClient(path: socket)
        usleep(300_000)
        XCTAssertTrue(p.isRunning, "the replay ended before anyone watched")
        let client = try SocketClient(path: socket)
        client.watch()
        let objects = client.collect(timeout: 20) { _ in false }
        let classes = objects.compactMap { $0["class"] as? String }
        XCTAssertGreaterThan(classes.filter { $0 == "TPV" }.count, 0, "the watching reader got the replay's TPV")
        XCTAssertGreaterThan(classes.filter { $0 == "ATT" }.count, 0, "and its ATT")
        _ = idle
        let end = Date().addingTimeInterval(20)
        while p.isRunning && Date() < end { usleep(50_000) }
        XCTAssertFalse(p.isRunning, "the replay ran to its end and stopped")
        if !p.isRunning {
            let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, 0, log)
            XCTAssertTrue(log.contains("sensor samples"), log)
        }
    }
}
