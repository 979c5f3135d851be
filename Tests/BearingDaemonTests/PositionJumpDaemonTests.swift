import BearingModel
import BearingAttitude
import BearingPOSIX
import BearingSimulator
import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// GPS positions out of reach of the last (`PositionJumps`), through the whole daemon with a real gpsd (gpsfake).
final class PositionJumpDaemonTests: XCTestCase {
    /// Six fixes in the Gulf of Finland in the middle of a track in the Solent (a receiver's glitch, or a spoofer's first
    /// seconds), played by gpsd: the true heading keeps the Solent's declination throughout (the Gulf's is 11° east of it),
    /// and the journal tells the jump once and its end once. The truth is WMM's at the track's first fix.
    func testSixFixesFarAwayMoveNeitherTheDeclinationNorTheJournalMoreThanTwice() throws {
        try requireGpsfake()
        let log = LogCapture()
        let jumped = (latitude: 60.0, longitude: 29.0)
        let rig = try DaemonRig("position-jump", gps: true, gpsEpochs: 120, logger: log.logger, trackOptions: { o in
            for i in 30..<36 { o.jumps[i] = jumped }
        })
        defer { rig.finish() }
        let track = try XCTUnwrap(rig.track)
        let solent = track.firstFixField.declination.value
        let gulf = DaemonRig.wmmField(latitude: jumped.latitude, longitude: jumped.longitude, unixSeconds: track.epochs[30].time.unixTime,
                                      source: .fix).declination.value
        XCTAssertGreaterThan(abs(gulf - solent), 5)
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        // ATT's declination from the fix, until gpsd has given the track's 50th epoch (14 after the jump ended).
        var declinations: [Double] = [], jumpSeen = false, lastFix = 0.0
        _ = client.collect(timeout: 60) { o in
            if cls(o) == "ATT", o["decl_src"] as? String == "fix", let d = o["declination"] as? Double { declinations.append(d) }
            if cls(o) == "TPV", let lat = o["lat"] as? Double, let t = (o["time"] as? String).flatMap(GPSTimestamp.init(iso8601:)) {
                if abs(lat - jumped.latitude) < 0.01 { jumpSeen = true }
                lastFix = t.unixTime
            }
            return lastFix >= track.epochs[50].time.unixTime
        }
        let worst = declinations.map { abs($0 - solent) }.max() ?? .nan
        let lines = log.lines.filter { $0.contains("GPS fix") }
        print("daemon, six fixes 2,000 km away: \(declinations.count) ATT from the fix, declination at most \(String(format: "%.3f", worst))° "
              + "from the Solent's \(String(format: "%.2f", solent))° (the Gulf's \(String(format: "%.2f", gulf))°); journal \(lines)")
        XCTAssertTrue(jumpSeen, "gpsd never gave the jumped fixes as TPV")
        XCTAssertGreaterThan(declinations.count, 10)
        XCTAssertLessThan(worst, 0.05, "the jump moved the declination")
        XCTAssertEqual(lines.filter { $0.contains("GPS fix at 60.00000, 29.00000 is") }.count, 1, "\(lines)")
        XCTAssertEqual(lines.filter { $0.contains("the jump to 60.00000, 29.00000 was a glitch") }.count, 1, "\(lines)")
        XCTAssertEqual(lines.count, 2, "\(lines)")
    }
}
