@testable import BearingDaemon
@testable import BearingMQTT
import BearingMarine
import BearingModel
import BearingPOSIX
import BearingPublishing
import BearingRecording
import Synchronization
import TestSupport
import XCTest

/// A regression corpus in the manner of gpsd's: short black-box recordings in Tests/Fixtures/regression (one
/// per simulated board and vehicle, one with gpsd's own ATT relayed; `record.sh` makes them), each replayed
/// in-process through the daemon's sources and stages into every door's path from value to bytes — the data
/// log (the socket's JSON lines), the NMEA 0183 door's sentences and the Signal K door's deltas (their feeds,
/// without their sockets), and the MQTT door's spool lines (no broker: each message waits in the spool, as
/// it would be sent) — and compared line by line with the expected files beside the recording. A change in
/// output shows as a diff of those files: `BEARING_UPDATE_SNAPSHOTS=1` writes them again, to be reviewed.
final class RegressionCorpusTests: XCTestCase {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/regression")

    /// What each door made of a recording, by the suffix of its expected file.
    static let outputs = ["socket.ndjson", "nmea", "signalk.ndjson", "mqtt.spool"]

    func testEveryRecordingGivesTheExpectedOutputOfEveryDoor() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path)
            .filter { $0.hasSuffix(".bbx") }.map { String($0.dropLast(4)) }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 4, "the corpus in \(Self.directory.path)")
        let updating = ProcessInfo.processInfo.environment["BEARING_UPDATE_SNAPSHOTS"] == "1"
        var summary: [String] = []
        for name in names {
            let got = try replay(Self.directory.appendingPathComponent("\(name).bbx"))
            summary.append("\(name): " + Self.outputs.map { "\($0) \(got[$0]?.count ?? 0)" }.joined(separator: ", "))
            for output in Self.outputs {
                let lines = got[output] ?? []
                XCTAssertFalse(lines.isEmpty, "\(name): the \(output) output is empty")
                let file = Self.directory.appendingPathComponent("\(name).\(output)")
                if updating {
                    try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
                    continue
                }
                let want = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
                if let i = zip(lines, want).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                    XCTFail("\(name).\(output) line \(i + 1) differs:\n  expected \(want[i])\n  got      \(lines[i])")
                } else {
                    XCTAssertEqual(lines.count, want.count, "\(name).\(output): \(lines.count) lines, \(want.count) expected")
                }
            }
        }
        print("regression corpus: \(summary.joined(separator: "; "))")
    }

    /// Replays `file` as `bearing replay` does (its recorded config, with the doors' defaults) and returns each
    /// door's lines, the scratch directory's path written `$SCRATCH`.
    func replay(_ file: URL) throws -> [String: [String]] {
        let recording = try Recording(bytes: try AtomicFile.read(file.path, limit: 1 << 24))
        let scratch = try Directory.makeTemporary(prefix: "/tmp/bearing-corpus-")
        defer { Directory.removeFlat(scratch + "/spool"); Directory.removeFlat(scratch) }
        var options = ReplaySession.Options()
        options.dataLog = "\(scratch)/data.ndjson"
        var config = try ReplaySession.config(recording, given: nil, options: options, scratch: scratch)
        let calibrationPaths = try ReplaySession.materializeCalibrations(recording, config: &config, scratch: scratch, replacing: nil)
        config.mqtt.device = "corpus"
        config.mqtt.spoolDirectory = "\(scratch)/spool"
        let agent = Agent(config: config, logger: testLogger(), feed: .replay(startTime: try XCTUnwrap(recording.startTime)))
        try agent.startPublishing()
        // No broker listens there: the client is never started, every message stays in the spool.
        let mqtt = try MQTTDoor(config.mqtt, broker: MQTTBroker(host: "127.0.0.1", port: freePort(), tls: false), core: agent.core,
                                logger: testLogger(), machineIDFile: "/nonexistent")
        let lines = Mutex<[String: [String]]>([:])
        let feeds = [("nmea", LineDoor.nmea0183Feed(config.nmea0183)), ("signalk.ndjson", LineDoor.signalKFeed(config.signalK))]
        let runs = agent.core.queue.sync {
            feeds.flatMap { name, feed in feed(agent.core.hub) { emitted in lines.withLock { $0[name, default: []] += emitted } } }
        }
        _ = try Replayer(agent: agent, recording: recording, logger: testLogger(), calibrationPaths: calibrationPaths).run()
        agent.core.queue.sync { for r in runs { r.cancel() } }
        mqtt.close()
        agent.stop()
        var out = lines.withLock { $0 }
        out["socket.ndjson"] = try String(contentsOfFile: "\(scratch)/data.ndjson", encoding: .utf8).split(separator: "\n").map(String.init)
        var spool: [String] = []
        for segment in try FileManager.default.contentsOfDirectory(atPath: "\(scratch)/spool").filter({ $0.hasSuffix(".spool") }).sorted() {
            spool += try String(contentsOfFile: "\(scratch)/spool/\(segment)", encoding: .utf8).split(separator: "\n").map(String.init)
        }
        out["mqtt.spool"] = spool
        return out.mapValues { $0.map { $0.replacingOccurrences(of: scratch, with: "$SCRATCH") } }
    }
}
