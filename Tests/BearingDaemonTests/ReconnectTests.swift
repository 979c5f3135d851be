import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The link to gpsd: absent at start, killed mid-stream, restarted, frozen.
final class ReconnectTests: XCTestCase {
    /// A long track that keeps its fix until near the end.
    func writeTrack(_ dir: URL, epochs: Int) throws -> URL {
        try DaemonTestRig.writeTrack(in: dir) {
            $0.epochs = epochs
            $0.lossStart = 0.9
            $0.lossEnd = 0.95
        }.url
    }

    func testAbsentAtStartThenKilledAndRestarted() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("reconnect")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try writeTrack(dir, epochs: 400)
        let port = freePort()
        let (agent, client) = try startWatchedAgent(makeAgentConfig(gpsdPort: port, dir: dir))
        defer { agent.stop() }

        // No gpsd at all: the agent keeps serving and says why it has no data.
        let absent = client.collect(timeout: 10) { isState($0, "disconnected") }
        let reason = absent.last.flatMap { $0["reason"] as? String }
        XCTAssertEqual(reason, "open-failed", "expected an open-failed STATE while gpsd is absent: \(absent)")

        for round in 1...2 {
            let fake = try GPSFake(log: log, port: port, pace: 0.01)
            var fixes = 0
            let seen = client.collect(timeout: 30) { o in
                if cls(o) == "TPV", o["lat"] != nil { fixes += 1 }
                return fixes >= 5
            }
            XCTAssertTrue(seen.contains { isState($0, "connected") }, "round \(round): no connected STATE")
            XCTAssertEqual(fixes, 5, "round \(round): fixes stopped arriving")
            // gpsd is found as gpsfake's child, so before gpsfake dies: after, it is reparented, would be
            // missed, and would keep the port from the next round's gpsd.
            guard let gpsd = fake.gpsdPID() else { return XCTFail("round \(round): cannot find gpsfake's gpsd") }
            kill(fake.pid, SIGKILL)
            kill(gpsd, SIGKILL)
            fake.stop()
            let after = client.collect(timeout: 15) { isState($0, "disconnected") }
            XCTAssertTrue(after.last.map { isState($0, "disconnected") } ?? false, "round \(round): no disconnected STATE after the kill")
        }
    }

    func testFrozenGpsdIsNoticedBySilence() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("silence")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = try writeTrack(dir, epochs: 400)
        let port = freePort()
        var config = makeAgentConfig(gpsdPort: port, dir: dir)
        config.gpsd.silenceTimeout = 1
        let (agent, client) = try startWatchedAgent(config)
        defer { agent.stop() }
        let fake = try GPSFake(log: log, port: port, pace: 0.01)
        defer { fake.stop() }
        _ = client.collect(timeout: 30) { cls($0) == "TPV" }
        guard let gpsd = fake.gpsdPID() else { return XCTFail("cannot find gpsfake's gpsd") }
        kill(gpsd, SIGSTOP)
        kill(fake.pid, SIGSTOP)
        defer { kill(gpsd, SIGCONT); kill(fake.pid, SIGCONT) }
        let frozen = client.collect(timeout: 10) { isState($0, "disconnected") }
        XCTAssertEqual(frozen.last?["reason"] as? String, "silence", "a frozen gpsd must be noticed by the silence timeout")
    }
}
