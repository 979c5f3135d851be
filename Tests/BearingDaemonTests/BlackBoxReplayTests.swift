import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingRecording
import Foundation
import DaemonTestRig
import TestSupport
import Synchronization
import XCTest

/// The black box end to end: a live daemon (simulated sensors below their drivers, a real gpsd under
/// gpsfake) recorded, its ring fetched over the socket, then replayed through a second whole daemon.
final class BlackBoxReplayTests: XCTestCase {
    /// Seconds of live run (BEARING_BLACKBOX_SECONDS; the issue's long run is 600).
    var liveSeconds: Double { Double(ProcessInfo.processInfo.environment["BEARING_BLACKBOX_SECONDS"] ?? "") ?? 30 }

    func testReplayGivesWhatTheSocketTheDataLogAndTheDoorsGaveLive() throws {
        try requireGpsfake()
        let nmeaPort = freePort()
        // The MQTT door on a real mosquitto; a subscriber for the live run and one for the replay.
        let brokerDir = temporaryDirectory("blackbox-broker")
        defer { try? FileManager.default.removeItem(at: brokerDir) }
        let broker = try MosquittoBroker(directory: brokerDir.appendingPathComponent("broker"))
        try broker.start()
        defer { broker.stop() }
        let liveSub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/bb/#", clientID: "bb-live",
                                         output: brokerDir.appendingPathComponent("live.txt"))
        defer { liveSub.stop() }
        liveSub.waitUntilSubscribed(port: broker.port, topic: "bearing/bb/att")
        // A track that outlasts the live run (gpsfake plays about four epochs a second).
        let live = try DaemonRig("blackbox-live", gps: true, gpsEpochs: max(600, Int(liveSeconds * 5)), doors: { dir in
            """
            log: {data_log: \(dir.appendingPathComponent("live.ndjson").path)}
            nmea0183: {tcp: 127.0.0.1:\(nmeaPort)}
            mqtt:
              broker: \(broker.url)
              device: bb
              spool: {directory: \(dir.appendingPathComponent("spool-live").path)}
              topics: {att: [{op: throttle, interval: 0.2}], tpv: [], sky: false}
            """
        }, configure: { c in
            // The ring holds the whole run, so that the replay starts where the live run did (the default ring,
            // 1.5 MiB, keeps about 9 minutes of this board).
            c.blackbox.maxBytes = max(c.blackbox.maxBytes, Int(self.liveSeconds * 4_000))
            c.blackbox.minutes = max(c.blackbox.minutes, self.liveSeconds / 60 + 1)
        })
        defer { live.finish() }
        let watcher = try SocketClient(path: live.socketPath)
        watcher.watch()
        let liveNMEA = try RawTCPReader(port: nmeaPort)
        var liveLines: [String] = []
        let end = Syscall.monotonicSeconds() + liveSeconds
        while Syscall.monotonicSeconds() < end {
            if let line = watcher.readLine(timeout: 0.1) { liveLines.append(line) }
            liveNMEA.read(timeout: 0.02) { _ in false }
        }
        // The ring, as `bearing blackbox save` gets it: over the socket.
        let fetcher = try SocketClient(path: live.socketPath)
        fetcher.send("?BLACKBOX;\n")
        var ring: [UInt8]?
        while let line = fetcher.readLine(timeout: 10) {
            guard let o = jsonObject(line), cls(o) == "BLACKBOX" else { continue }
            ring = (o["data"] as? String).flatMap { Data(base64Encoded: $0) }.map { Array($0) }
            XCTAssertEqual(o["bytes"] as? Int, ring?.count)
            break
        }
        let bytes = try XCTUnwrap(ring, "no BLACKBOX reply")
        // What the watcher got up to the save, as far as the ring reaches.
        while let line = watcher.readLine(timeout: 0.2) { liveLines.append(line) }
        XCTAssertNotNil(live.shutdown(), "the live daemon did not stop")
        let liveLog = try String(contentsOf: live.dir.appendingPathComponent("live.ndjson"), encoding: .utf8)

        let recording = try Recording(bytes: bytes)
        XCTAssertNil(recording.damagedTail)
        let samples = recording.events.filter { if case .sensorSample = $0.record { return true }; return false }.count
        let messages = recording.events.filter { if case .gpsd = $0.record { return true }; return false }.count
        XCTAssertGreaterThan(samples, Int(liveSeconds) * 50, "sensor samples recorded")
        XCTAssertGreaterThan(messages, Int(liveSeconds) * 2, "gpsd messages recorded")

        // What the live MQTT door delivered (its messages are acknowledged before the daemon stops).
        let topics = ["bearing/bb/att", "bearing/bb/tpv"]
        liveSub.wait(timeout: 10) { sub in topics.allSatisfy { !sub.messages(on: $0).isEmpty } }
        usleep(500_000)
        let liveMQTT = topics.map { t in liveSub.messages(on: t).map(\.payload).filter { $0 != "probe" } }

        var c = live.config
        c.mqtt.spoolDirectory = live.dir.appendingPathComponent("spool-replay").path
        let replaySub = try MQTTSubscriber(.mosquittoSub, port: broker.port, topic: "bearing/bb/#", clientID: "bb-replay",
                                           output: brokerDir.appendingPathComponent("replay.txt"))
        defer { replaySub.stop() }
        replaySub.waitUntilSubscribed(port: broker.port, topic: "bearing/bb/att")
        c.socket.path = live.dir.appendingPathComponent("replay.sock").path
        c.log.dataLog = live.dir.appendingPathComponent("replay.ndjson").path
        c.pipelineStore = live.dir.appendingPathComponent("replay-pipelines.json").path
        c.blackbox.enabled = false
        // The online calibration kept at the recording's start, as the replay must begin from it (the live run
        // has since kept what it learnt in its own file).
        let online = live.dir.appendingPathComponent("replay-auto-calibration.json").path
        c.calibration.autoFile = online
        if let kept = recording.calibrations["online"] { try kept.write(toFile: online, atomically: true, encoding: .utf8) }
        let replay = try Daemon(config: c, logger: testLogger(), signals: [], feed: .replay(startTime: try XCTUnwrap(recording.startTime)))
        let finished = expectation(description: "replay daemon stopped")
        Task.detached {
            try? await replay.run()
            finished.fulfill()
        }
        let reader = try SocketClient(path: c.socket.path)
        reader.watch()
        let replayNMEA = try RawTCPReader(port: nmeaPort)
        // The door accepts on its own thread: give it the moment it takes, so the replay's first sentences reach it.
        usleep(500_000)
        let hub = replay.agent.core.hub
        let deadline = Syscall.monotonicSeconds() + 10
        while Syscall.monotonicSeconds() < deadline, !replay.agent.core.queue.sync(execute: { hub.hasWatchers("TPV") }) { usleep(10_000) }
        // The reader reads while the replay runs, as fast as it goes (a socket reader that falls behind is
        // bounded and told of it by OVERFLOW: a long recording replays faster than a reader that waits).
        let replayBuffer = Mutex<[String]>([])
        let readerDone = expectation(description: "replay reader finished")
        // Only that thread uses the reader until it is done.
        nonisolated(unsafe) let replayReader = reader
        Thread.detachNewThread {
            while let line = replayReader.readLine(timeout: 2) { replayBuffer.withLock { $0.append(line) } }
            readerDone.fulfill()
        }
        let started = Syscall.monotonicSeconds()
        let summary = try Replayer(agent: replay.agent, recording: recording, logger: testLogger(), calibrationPaths: ["online": online]).run()
        let took = Syscall.monotonicSeconds() - started
        print("replayed \(summary.events) records (\(summary.seconds) s recorded) in \(took) s: \(summary.seconds / took)× real time")
        wait(for: [readerDone], timeout: 60)
        let replayLines = replayBuffer.withLock { $0 }
        replayNMEA.read(timeout: 1) { _ in false }
        // The replay's MQTT messages: as many as the live ones the recording covers.
        replaySub.wait(timeout: 15) { sub in
            zip(topics, liveMQTT).allSatisfy { t, l in sub.messages(on: t).filter { $0.payload != "probe" }.count >= l.count - 10 }
        }
        replay.shutdown()
        wait(for: [finished], timeout: 15)
        let replayLog = try String(contentsOf: URL(fileURLWithPath: c.log.dataLog!), encoding: .utf8)

        // The data log: every object of the default chains from the start. The replay's is the live one's
        // beginning (the live daemon ran on past the save), byte for byte — checked with diff(1).
        XCTAssertGreaterThan(replayLog.count, 1000)
        let livePrefix = String(liveLog.prefix(replayLog.utf8.count))
        if ProcessInfo.processInfo.environment["BEARING_BLACKBOX_DUMP"] != nil {
            try livePrefix.write(toFile: "/tmp/bb-live.ndjson", atomically: true, encoding: .utf8)
            try replayLog.write(toFile: "/tmp/bb-replay.ndjson", atomically: true, encoding: .utf8)
            try Data(bytes).write(to: URL(fileURLWithPath: "/tmp/bb-ring.bbx"))
        }
        try diff(livePrefix, replayLog, "data log")

        // The socket: from the watcher's first streamed object on (its greeting — VERSION, DEVICES, WATCH,
        // the STATE and CALIBRATION of the moment — is per connection), what the live reader got is what the replay's
        // reader got.
        if ProcessInfo.processInfo.environment["BEARING_BLACKBOX_DUMP"] != nil {
            try liveLines.joined(separator: "\n").write(toFile: "/tmp/bb-live.txt", atomically: true, encoding: .utf8)
            try replayLines.joined(separator: "\n").write(toFile: "/tmp/bb-replay.txt", atomically: true, encoding: .utf8)
        }
        let streamed = liveLines.drop { l in ["VERSION", "DEVICES", "WATCH", "STATE", "CALIBRATION"].contains(jsonObject(l).map(cls) ?? "") }
        let first = try XCTUnwrap(streamed.first)
        let at = try XCTUnwrap(replayLines.firstIndex(of: first), "the live reader's first object is not in the replay's")
        let replayed = Array(replayLines[at...])
        let n = min(streamed.count, replayed.count)
        XCTAssertGreaterThan(n, Int(liveSeconds) * 2)
        try diff(streamed.prefix(n).joined(separator: "\n"), replayed.prefix(n).joined(separator: "\n"), "socket lines")

        // The NMEA 0183 door's sentences (no field of them is wall-clock: RMC's time is the fix's), from the
        // first five the live reader got (it connected a moment after the start), byte for byte and in order
        // (the door's sentence groups are runs on one input, which reach them in subscription order).
        let liveSentences = liveNMEA.crlfLines, replaySentences = replayNMEA.crlfLines
        if ProcessInfo.processInfo.environment["BEARING_BLACKBOX_DUMP"] != nil {
            try liveSentences.joined(separator: "\n").write(toFile: "/tmp/bb-live.nmea", atomically: true, encoding: .utf8)
            try replaySentences.joined(separator: "\n").write(toFile: "/tmp/bb-replay.nmea", atomically: true, encoding: .utf8)
        }
        XCTAssertGreaterThan(liveSentences.count, Int(liveSeconds) * 2, "NMEA sentences live")
        let window = Array(liveSentences.prefix(5))
        let start = try XCTUnwrap((0...max(0, replaySentences.count - 5)).first { Array(replaySentences[$0..<min($0 + 5, replaySentences.count)]) == window },
                                  "the live door's first sentences are not in the replay's")
        let m = min(liveSentences.count, replaySentences.count - start)
        XCTAssertGreaterThan(m, liveSentences.count - 5)
        try diff(liveSentences.prefix(m).joined(separator: "\n"), replaySentences[start..<(start + m)].joined(separator: "\n"), "NMEA 0183 sentences")

        // The MQTT door's data messages (the door's own status and spool topics say how it fares, not what the
        // sources said): numbered from 1 in a fresh spool, the replay's are the live ones, byte for byte.
        for (t, liveMessages) in zip(topics, liveMQTT) {
            let replayed = replaySub.messages(on: t).map(\.payload).filter { $0 != "probe" }
            let m = min(liveMessages.count, replayed.count)
            XCTAssertGreaterThan(m, Int(liveSeconds), "\(t): messages live \(liveMessages.count), replayed \(replayed.count)")
            try diff(liveMessages.prefix(m).joined(separator: "\n"), replayed.prefix(m).joined(separator: "\n"), "MQTT \(t)")
        }
    }

    /// Runs diff(1) on the two texts; fails with its output when they differ.
    func diff(_ a: String, _ b: String, _ what: String) throws {
        let dir = temporaryDirectory("blackbox-diff")
        defer { try? FileManager.default.removeItem(at: dir) }
        let fa = dir.appendingPathComponent("live"), fb = dir.appendingPathComponent("replay")
        try a.write(to: fa, atomically: true, encoding: .utf8)
        try b.write(to: fb, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
        p.arguments = [fa.path, fb.path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "\(what): live and replay differ:\n\(text.prefix(3000))")
    }
}
