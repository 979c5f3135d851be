import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// The generated track through a real gpsd (gpsfake) and the agent, read from the UNIX socket,
/// checked epoch by epoch against the values the generator wrote into the sentences.
final class GeneratedTrackTests: XCTestCase {
    func testEveryEpochArrivesWithTheValuesItWasGeneratedWith() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("track")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (track, log) = try writeTrack(in: dir) { $0.epochs = 40 }

        let port = freePort()
        let (agent, client) = try startWatchedAgent(makeAgentConfig(gpsdPort: port, dir: dir))
        defer { agent.stop() }
        let fake = try GPSFake(log: log, port: port)
        defer { fake.stop() }

        let (objects, sawConnected) = client.collectSession(timeout: 60)
        XCTAssertTrue(sawConnected, "never connected to gpsfake's gpsd")
        let tpvs = objects.filter { cls($0) == "TPV" }
        XCTAssertGreaterThan(objects.filter { cls($0) == "SKY" }.count, 0)

        let truth = Dictionary(uniqueKeysWithValues: track.epochs.map { ($0.time.iso8601, $0) })
        var lastOfEpoch: [String: [String: Any]] = [:]
        for tpv in tpvs {
            guard let time = tpv["time"] as? String else { continue }
            let epoch = try XCTUnwrap(truth[time], "TPV with a time the track does not have: \(time)")
            lastOfEpoch[time] = tpv
            XCTAssertEqual(tpv["mode"] as? Int, epoch.mode.rawValue, "mode at \(time)")
            if epoch.mode >= .twoD {
                XCTAssertEqual(tpv["lat"] as? Double ?? .nan, epoch.latitude, accuracy: 2e-9, "lat at \(time)")
                XCTAssertEqual(tpv["lon"] as? Double ?? .nan, epoch.longitude, accuracy: 2e-9, "lon at \(time)")
            } else {
                XCTAssertNil(tpv["lat"], "no-fix epoch \(time) has a latitude")
            }
            if epoch.mode == .threeD {
                XCTAssertEqual(tpv["altHAE"] as? Double ?? .nan, epoch.altHAE, accuracy: 1e-4, "altHAE at \(time)")
            }
        }
        for (time, tpv) in lastOfEpoch {
            let epoch = truth[time]!
            guard epoch.mode == .threeD else { continue }
            XCTAssertEqual(tpv["speed"] as? Double ?? .nan, epoch.speed, accuracy: 1e-3, "speed at \(time)")
            XCTAssertEqual(tpv["track"] as? Double ?? .nan, epoch.track, accuracy: 1e-4, "track at \(time)")
        }
        let fixEpochs = track.epochs.filter { $0.mode >= .twoD }.map(\.time.iso8601)
        let missing = fixEpochs.filter { lastOfEpoch[$0] == nil }
        // gpsd reports the first epoch before it has a time (no RMC yet); every other fix must arrive.
        XCTAssertLessThanOrEqual(missing.count, 1, "epochs with a fix that never arrived: \(missing)")
        let modes = track.epochs.map(\.mode)
        XCTAssertTrue(modes.contains(.noFix) && modes.contains(.twoD), "the track should lose and regain the fix")
        XCTAssertTrue(tpvs.contains { $0["mode"] as? Int == 1 }, "the loss of fix reached the socket")
    }
}
