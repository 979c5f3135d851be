@testable import BearingDaemon
@testable import BearingMQTT
import BearingLog
import BearingMarine
import BearingModel
import BearingPOSIX
import BearingPublishing
import BearingRecording
import BearingWire
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

    /// A Pi without a real-time clock: fake-hwclock restored the time of its last shutdown, a day behind, and 2 s into
    /// the car's recording NTP (or gpsd's time) stepped the system clock forward to the right time. The recording is the
    /// corpus's `fused-car` with the stamps of the samples read before the step a day earlier, as the readers would
    /// have stamped them; their record times are the pipeline's monotonic clock, which never steps, and gpsd's fixes
    /// carry GPS time. Replayed, the fusion takes the step out from the record times as it did live
    /// (`SampleClock`): every ATT is the unstepped recording's to the bit but for its time, a day earlier before the
    /// step, and the journal says once that the clock stepped forward by a day. Without the record times the step is
    /// a gap of a day: the filter starts again from the field, and the heading is not the same.
    func testARecordingWhoseWallClockSteppedForwardReplaysAsWithoutTheStep() throws {
        let file = Self.directory.appendingPathComponent("fused-car.bbx")
        let recording = try Recording(bytes: try AtomicFile.read(file.path, limit: 1 << 24))
        let sampleTimes = recording.events.compactMap { e -> UInt64? in
            if case .sensorSample = e.record { return e.time }
            return nil
        }
        let stepAt = try XCTUnwrap(sampleTimes.first) + 2_000_000
        let day: Int64 = 86400
        let stepped = try Self.recording(recording, withTheSamplesStampedBy: -day) { $0 < stepAt }
        let before = sampleTimes.filter { $0 < stepAt }.count
        XCTAssertGreaterThan(before, 100, "samples stamped before the step")
        XCTAssertLessThan(before, sampleTimes.count - 100, "samples stamped after it")

        /// Every attitude a replay gives (the fusion's, before any chain).
        func attitudes(_ recording: Recording, logger: Logger = testLogger()) throws -> [Attitude] {
            let all = Mutex<[Attitude]>([])
            _ = try replay(recording, logger: logger) { a in all.withLock { $0.append(a) } }
            return all.withLock { $0 }
        }
        let plain = try attitudes(recording)
        let log = LogCapture()
        let replayed = try attitudes(stepped, logger: log.logger)
        XCTAssertGreaterThan(plain.count, 150, "attitudes replayed")
        XCTAssertEqual(replayed.count, plain.count)
        var worst = 0.0, early = 0
        for (i, (a, b)) in zip(plain, replayed).enumerated() {
            if b.time.seconds == a.time.seconds - day {
                // Before the step: as they were, to the bit, but for the day.
                var shifted = b
                shifted.time = a.time
                XCTAssertEqual(shifted, a, "attitude \(i), before the step")
                early += 1
                continue
            }
            XCTAssertEqual(b.time, a.time, "attitude \(i): its sample's own stamp")
            for (x, y) in [(a.heading, b.heading), (a.pitch, b.pitch), (a.roll, b.roll)] {
                let d = abs(Compass.normalize((x ?? .nan) - (y ?? .nan) + 180) - 180)
                worst = max(worst, d.isNaN ? .infinity : d)
            }
        }
        XCTAssertGreaterThan(early, 50, "attitudes before the step")
        XCTAssertLessThan(early, plain.count - 50, "attitudes after it")
        // The step is taken out to within the readers' jitter: the first sample after it is put after the latest by the
        // interval before it (`SampleClock`), not its own. Measured 0.0285°.
        XCTAssertLessThan(worst, 0.05, "after the step: heading, pitch and roll as without it")
        let steps = log.lines.filter { $0.contains("clock stepped") }
        print("a recording whose wall clock stepped forward by a day: \(early) attitudes before the step as they were, "
              + "\(plain.count - early) after it at most \(String(format: "%.4f", worst))° from those without the step; journal \(steps)")
        XCTAssertEqual(steps.count, 1, "the journal says once that the clock stepped: \(steps)")
        let told = try XCTUnwrap(steps.first?.components(separatedBy: "forward by ").last.flatMap { Double($0.prefix { $0 != " " }) }, "\(steps)")
        XCTAssertEqual(told, Double(day), accuracy: 0.5, "\(steps)")
    }

    /// `recording` with the stamps of the sensor samples whose record time (the pipeline's monotonic clock) is `when`
    /// moved by `seconds`, as the readers would have stamped them had the wall clock been that far off then.
    static func recording(_ recording: Recording, withTheSamplesStampedBy seconds: Int64, when: (UInt64) -> Bool) throws -> Recording {
        var encoder = FrameEncoder()
        for var e in recording.events {
            if when(e.time), case .sensorSample(let sensor, let time, let transactions) = e.record {
                e.record = .sensorSample(sensor, time: GPSTimestamp(seconds: time.seconds + seconds, nanoseconds: time.nanoseconds), transactions: transactions)
            }
            encoder.append(e)
        }
        return try Recording(bytes: RecordingFormat.header + (encoder.finishFrame() ?? []))
    }

    /// Replays `file` as `bearing replay` does (its recorded config, with the doors' defaults) and returns each
    /// door's lines, the scratch directory's path written `$SCRATCH`.
    func replay(_ file: URL) throws -> [String: [String]] {
        try replay(Recording(bytes: try AtomicFile.read(file.path, limit: 1 << 24)))
    }

    /// Replays `recording` so, the agent logging to `logger`.
    /// `attitude`: told of each attitude the fusion gives (on the pipeline queue).
    func replay(_ recording: Recording, logger: Logger = testLogger(),
                attitude: (@Sendable (Attitude) -> Void)? = nil) throws -> [String: [String]] {
        let scratch = try Directory.makeTemporary(prefix: "/tmp/bearing-corpus-")
        defer { Directory.removeFlat(scratch + "/spool"); Directory.removeFlat(scratch) }
        var options = ReplaySession.Options()
        options.dataLog = "\(scratch)/data.ndjson"
        var config = try ReplaySession.config(recording, given: nil, options: options, scratch: scratch)
        let calibrationPaths = try ReplaySession.materializeCalibrations(recording, config: &config, scratch: scratch, replacing: nil)
        config.mqtt.device = "corpus"
        config.mqtt.spoolDirectory = "\(scratch)/spool"
        let agent = Agent(config: config, logger: logger, feed: .replay(startTime: try XCTUnwrap(recording.startTime)))
        try agent.startPublishing()
        // No broker listens there: the client is never started, every message stays in the spool.
        let mqtt = try MQTTDoor(config.mqtt, broker: MQTTBroker(host: "127.0.0.1", port: freePort(), tls: false), core: agent.core,
                                logger: testLogger(), machineIDFile: "/nonexistent")
        let lines = Mutex<[String: [String]]>([:])
        let feeds = [("nmea", LineDoor.nmea0183Feed(config.nmea0183)), ("signalk.ndjson", LineDoor.signalKFeed(config.signalK))]
        let runs = agent.core.queue.sync {
            feeds.flatMap { name, feed in feed(agent.core.hub) { emitted in lines.withLock { $0[name, default: []] += emitted } } }
        }
        let attitudes = attitude.map { told in
            agent.core.queue.sync {
                agent.core.hub.subscribe(StreamKey(.att, .compass), through: []) { report in
                    if case .attitude(let a) = report.payload { told(a) }
                }
            }
        }
        _ = try Replayer(agent: agent, recording: recording, logger: testLogger(), calibrationPaths: calibrationPaths).run()
        agent.core.queue.sync {
            for r in runs { r.cancel() }
            attitudes?.cancel()
        }
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
