import BearingModel
import BearingWire
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// Real receiver captures from gpsd's regression suite, replayed through Debian's gpsd and the agent
/// (passthrough): every TPV and every SKY Bearing publishes must equal, in order and in number, the TPV and
/// SKY lines gpsd's own expected output (`.chk`) has, field by field (a SKY's satellites too, and whether it
/// has a list at all: gpsd 3.25 also reports SKYs with only DOPs and `uSat`). The `.chk` files beside the logs
/// are gpsd 3.22's (gpsd's regression suite); for another release they are made by
/// `Tests/Fixtures/conformance/capture.sh` with that release (`gpsd-RELEASE/`), since e.g. 3.25 reports more
/// TPVs per epoch.
final class ConformanceTests: XCTestCase {
    static let fields = ["mode", "time", "lat", "lon", "altHAE", "speed", "track"]
    static let skyFields = ["nSat", "uSat", "xdop", "ydop", "vdop", "tdop", "hdop", "gdop", "pdop"]
    static let satelliteFields = ["PRN", "el", "az", "ss", "used"]

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
            let (tpv, sky) = try replay(dir.appendingPathComponent(name), checks: checks)
            report.append("\(name): \(tpv.matched)/\(tpv.expected) TPVs matched (\(tpv.published) published), "
                          + "\(sky.matched)/\(sky.expected) SKYs (\(sky.published) published)")
            XCTAssertEqual(tpv.published, tpv.expected, "\(name): TPV count")
            XCTAssertEqual(tpv.matched, tpv.expected, "\(name): TPVs matching the .chk")
            XCTAssertEqual(sky.published, sky.expected, "\(name): SKY count")
            XCTAssertEqual(sky.matched, sky.expected, "\(name): SKYs matching the .chk")
        }
        print("Conformance:\n  " + report.joined(separator: "\n  "))
    }

    struct Tally { var matched = 0, expected = 0, published = 0 }

    /// Returns, for TPV and for SKY: how many Bearing published equal to the .chk's, how many the .chk has, how
    /// many Bearing published.
    func replay(_ log: URL, checks: URL) throws -> (tpv: Tally, sky: Tally) {
        let chk = try String(contentsOf: checks.appendingPathComponent(log.lastPathComponent + ".chk"), encoding: .utf8)
        let lines = chk.split(whereSeparator: \.isNewline).compactMap {
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
        let name = log.lastPathComponent
        let tpv = compare("TPV", name, objects.filter { cls($0) == "TPV" }, lines.filter { cls($0) == "TPV" }) { ours, theirs in
            Self.fields.filter { !Self.same(ours[$0], theirs[$0]) }
        }
        let sky = compare("SKY", name, objects.filter { cls($0) == "SKY" }, lines.filter { cls($0) == "SKY" }) { ours, theirs in
            Self.skyFields.filter { !Self.same(ours[$0], theirs[$0]) } + (Self.sameSatellites(ours["satellites"], theirs["satellites"]) ? [] : ["satellites"])
        }
        return (tpv, sky)
    }

    /// Pairs Bearing's objects with the .chk's in order; `differences` names the fields that differ.
    func compare(_ cls: String, _ log: String, _ published: [[String: Any]], _ expected: [[String: Any]],
                 differences: ([String: Any], [String: Any]) -> [String]) -> Tally {
        var tally = Tally(matched: 0, expected: expected.count, published: published.count)
        for (i, (ours, theirs)) in zip(published, expected).enumerated() {
            let diffs = differences(ours, theirs)
            if diffs.isEmpty {
                tally.matched += 1
            } else if tally.matched == i {
                // Report the first divergence in full; the count tells the rest.
                XCTFail("\(log) \(cls) #\(i + 1) differs in \(diffs): ours \(diffs.map { "\($0)=\(Self.text(ours[$0]))" }) vs chk \(diffs.map { "\($0)=\(Self.text(theirs[$0]))" })")
            }
        }
        return tally
    }

    static func text(_ v: Any?) -> String {
        guard let v else { return "nil" }
        if let data = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .fragmentsAllowed]) {
            return String(decoding: data.prefix(300), as: UTF8.self)
        }
        return "\(v)"
    }

    /// The same satellites in the same order, field by field; both absent (a SKY of DOPs only) is the same.
    static func sameSatellites(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x as [[String: Any]], y as [[String: Any]]):
            return x.count == y.count && zip(x, y).allSatisfy { s, t in satelliteFields.allSatisfy { same(s[$0], t[$0]) } }
        default: return false
        }
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
