import BearingModel
import BearingAttitude
import BearingPOSIX
import BearingSimulator
import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// The WMM field the whole daemon takes from the fixes (with a real gpsd, gpsfake) and the clock: positions out of reach of
/// the last (`PositionJumps`), dates outside the model's validity (`WorldMagneticModel.heldYear`).
final class WMMFieldDaemonTests: XCTestCase {
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
        // ATT's declination from the fix, until gpsd has given the track's 80th epoch (44 after the jump ended: gpsd 3.25
        // plays about ten epochs a second under gpsfake's pace, 3.22 about four).
        var declinations: [Double] = [], jumpSeen = false, lastFix = 0.0
        _ = client.collect(timeout: 60) { o in
            if cls(o) == "ATT", o["decl_src"] as? String == "fix", let d = o["declination"] as? Double { declinations.append(d) }
            if cls(o) == "TPV", let lat = o["lat"] as? Double, let t = (o["time"] as? String).flatMap(GPSTimestamp.init(iso8601:)) {
                if abs(lat - jumped.latitude) < 0.01 { jumpSeen = true }
                lastFix = t.unixTime
            }
            return lastFix >= track.epochs[80].time.unixTime
        }
        let worst = declinations.map { abs($0 - solent) }.max() ?? .nan
        let lines = log.lines.filter { $0.contains("GPS fix") }
        print("daemon, six fixes 2,132 km away: \(declinations.count) ATT from the fix, declination at most \(String(format: "%.3f", worst))° "
              + "from the Solent's \(String(format: "%.2f", solent))° (the Gulf's \(String(format: "%.2f", gulf))°); journal \(lines)")
        XCTAssertTrue(jumpSeen, "gpsd never gave the jumped fixes as TPV")
        XCTAssertGreaterThanOrEqual(declinations.count, 8)
        XCTAssertLessThan(worst, 0.05, "the jump moved the declination")
        XCTAssertEqual(lines.filter { $0.contains("GPS fix at 60.00000, 29.00000 is") }.count, 1, "\(lines)")
        XCTAssertEqual(lines.filter { $0.contains("the jump to 60.00000, 29.00000 was a glitch") }.count, 1, "\(lines)")
        XCTAssertEqual(lines.count, 2, "\(lines)")
    }

    /// A board whose system clock starts in 1970 (a Pi without a real-time clock, before it syncs), no GPS: the fallback
    /// position's declination is WMM2025's at the start of its validity, not its secular variation extrapolated back 55
    /// years, and the journal says why once.
    func testASystemClockIn1970TakesTheFallbacksFieldAtTheModelsStart() throws {
        let log = LogCapture()
        let board = MagnetBoard()
        // The wall clock 1,780,000,000 s behind (1970-01-01 plus the seconds since the test began, near enough).
        let behind = Int64(1_780_000_000) * 1_000_000_000
        let rig = try DaemonRig("clock-1970", gps: false, logger: log.logger, openBus: { _ in board.bus },
                                wallClock: { GPSTimestamp.now().adding(nanoseconds: -behind) })
        defer { rig.finish() }
        let model = WorldMagneticModel.wmm2025
        let truth = model.field(latitude: DaemonRig.fallback.x, longitude: DaemonRig.fallback.y, heightKm: DaemonRig.fallback.z,
                                year: model.validity.lowerBound).declination
        let extrapolated = model.field(latitude: DaemonRig.fallback.x, longitude: DaemonRig.fallback.y, heightKm: DaemonRig.fallback.z,
                                       year: WorldMagneticModel.decimalYear(unixSeconds: GPSTimestamp.now().unixTime - 1_780_000_000)).declination
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let att = try XCTUnwrap(client.attitudes(after: 1, until: 2).last, "no ATT")
        let lines = log.lines.filter { $0.contains("validity") }
        print("daemon, the system clock at \(String(describing: att["time"] ?? "-")): declination \(String(describing: att["declination"] ?? "-"))° "
              + "(WMM2025 at 2025.0 \(String(format: "%.2f", truth))°, extrapolated to the clock's date \(String(format: "%.2f", extrapolated))°); journal \(lines)")
        XCTAssertEqual(att["decl_src"] as? String, "fallback")
        XCTAssertEqual(att["declination"] as? Double ?? .nan, truth, accuracy: 0.01)
        XCTAssertGreaterThan(abs(extrapolated - truth), 1, "the clock's date should matter")
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.contains("the system clock says 1970-") == true, "\(lines)")
    }

    /// gpsd's fixes dated 2052 (a receiver's clock that is wrong, a spoofer's time; gpsd itself takes a date 1,024 weeks
    /// early for a week number rolled over and adds them: an RMC dated 2007-04-23 came out of gpsd 3.22 as 2026-12-07, and
    /// one dated 2052 as it is): the declination from the fix is WMM2025's at the end of its validity, not extrapolated 22
    /// years, and the journal says why once.
    func testFixesDated2052TakeTheFieldAtTheModelsEnd() throws {
        try requireGpsfake()
        let log = LogCapture()
        let rig = try DaemonRig("fix-2052", gps: true, gpsEpochs: 120, logger: log.logger, trackOptions: { o in
            o.start = GPSTimestamp(seconds: 2_597_486_400)
        })
        defer { rig.finish() }
        let track = try XCTUnwrap(rig.track)
        let first = try XCTUnwrap(track.epochs.first { $0.mode >= .twoD })
        let model = WorldMagneticModel.wmm2025
        let truth = model.field(latitude: first.latitude, longitude: first.longitude, heightKm: first.altHAE / 1000, year: model.validity.upperBound).declination
        let extrapolated = model.field(latitude: first.latitude, longitude: first.longitude, heightKm: first.altHAE / 1000,
                                       year: WorldMagneticModel.decimalYear(unixSeconds: first.time.unixTime)).declination
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let seen = client.collect(timeout: 30) { cls($0) == "ATT" && $0["decl_src"] as? String == "fix" }
        let att = try XCTUnwrap(seen.last { cls($0) == "ATT" && $0["decl_src"] as? String == "fix" }, "declination never came from the fix")
        let lines = log.lines.filter { $0.contains("validity") }
        print("daemon, fixes dated 2052: declination \(String(describing: att["declination"] ?? "-"))° (WMM2025 at 2030.0 \(String(format: "%.2f", truth))°, "
              + "extrapolated to 2052 \(String(format: "%.2f", extrapolated))°); journal \(lines)")
        XCTAssertEqual(att["declination"] as? Double ?? .nan, truth, accuracy: 0.01)
        XCTAssertGreaterThan(abs(extrapolated - truth), 0.5, "the fix's date should matter")
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.contains("the GPS fix says 2052-04-23T") == true, "\(lines)")
    }
}
