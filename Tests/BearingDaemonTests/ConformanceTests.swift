import BearingModel
import BearingWire
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// Real receiver captures from gpsd's regression suite, replayed through Debian's gpsd and the agent
/// (passthrough): every TPV Bearing publishes must equal, in order and in number, the TPV lines gpsd's
/// own expected output (`.chk`) has, field by field. The `.chk` files beside the logs are gpsd 3.22's
/// (gpsd's regression suite); for another release they are made by `Tests/Fixtures/conformance/capture.sh`
/// with that release (`gpsd-RELEASE/`), since e.g. 3.25 reports more TPVs per epoch.
final class ConformanceTests: XCTestCase {
    static let fields = ["mode", "time", "lat", "lon", "altHAE", "speed", "track"]

    func testEveryRecordedReceiver() throws {
        try requireGpsfake()
        guard let data = sharedData() else {
            throw XCTSkip("SKIPPED: ../shared/data is absent; the conformance logs live there (or set BEARING_SHARED_DATA)")
        }
        let dir = data.appendingPathComponent("gpsd")
        let logs = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".log") }.sorted()
        XCTAssertFalse(logs.isEmpty, "no .log files in \(dir.path)")
        let checks = try expectedFilesDirectory(gpsd322: dir, others: repoRoot.appendingPathComponent("Tests/Fixtures/conformance"),
                                                makeWith: "Tests/Fixtures/conformance/capture.sh")
        var report: [String] = []
        for name in logs {
            let (matched, expected, published) = try replay(dir.appendingPathComponent(name), checks: checks)
            report.append("\(name): \(matched)/\(expected) TPVs matched (\(published) published)")
            XCTAssertEqual(published, expected, "\(name): TPV count")
            XCTAssertEqual(matched, expected, "\(name): TPVs matching the .chk")
        }
        print("Conformance:\n  " + report.joined(separator: "\n  "))
    }

    /// Returns (TPVs equal to the .chk, TPVs in the .chk, TPVs published).
    func replay(_ log: URL, checks: URL) throws -> (Int, Int, Int) {
        let chk = try String(contentsOf: checks.appendingPathComponent(log.lastPathComponent + ".chk"), encoding: .utf8)
        let expected = chk.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("{\"class\":\"TPV\"") }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        let dir = temporaryDirectory("conformance")
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = freePort()
        var config = makeAgentConfig(gpsdPort: port, dir: dir)
        // What is published is under test here, not the link's watchdog: gpsfake (Python) on a loaded machine may wait
        // longer than the daemon's 5 s before gpsd's first byte, and the agent then dropped the link and the session with
        // it (haicom-305N.log: "no data for 5 s", 0 of 142 TPVs, once, with four test shards on two cores).
        config.gpsd.silenceTimeout = 60
        let (agent, client) = try startWatchedAgent(config)
        defer { agent.stop() }
        let fake = try GPSFake(log: log, port: port, pace: nil, speed: 38400)
        defer { fake.stop() }
        let (objects, connected) = client.collectSession(timeout: 120)
        XCTAssertTrue(connected, "\(log.lastPathComponent): never connected to gpsfake's gpsd")
        let published = objects.filter { cls($0) == "TPV" }
        var matched = 0
        for (i, (ours, theirs)) in zip(published, expected).enumerated() {
            let diffs = Self.fields.filter { !Self.same(ours[$0], theirs[$0]) }
            if diffs.isEmpty {
                matched += 1
            } else if matched == i {
                // Report the first divergence in full; the count tells the rest.
                XCTFail("\(log.lastPathComponent) TPV #\(i + 1) differs in \(diffs): ours \(diffs.map { "\($0)=\(ours[$0] ?? "nil")" }) vs chk \(diffs.map { "\($0)=\(theirs[$0] ?? "nil")" })")
            }
        }
        return (matched, expected.count, published.count)
    }

    static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x as String, y as String): return x == y
        case let (x as NSNumber, y as NSNumber):
            // Bearing prints with gpsd's decimals, so the numbers must be the same to the last digit.
            return x.doubleValue == y.doubleValue
        default: return false
        }
    }
}
