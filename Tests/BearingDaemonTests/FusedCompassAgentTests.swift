import BearingCompass
import BearingModel
import BearingAttitude
import BearingPublishing
import BearingPOSIX
import BearingSensors
import BearingDaemon
import BearingSimulator
import BearingOnlineCalibration
import DaemonTestRig
import Foundation
import Synchronization
import TestSupport
import XCTest

/// The fused compass in the running agent: an LSM6DSOX model and a QMC5883L model on one simulated bus,
/// both fed by one virtual board heeled 20°, read by their own threads, fused on the pipeline queue and
/// published as ATT on the real socket. No gpsd: the declination comes from the fallback position.
final class FusedCompassAgentTests: XCTestCase {
    // The board is at the rig's fallback (`DaemonRig.fallback`, Sydney: declination ≈ +12.8°, dip ≈ −64°), in WMM2025's
    // field there now (`DaemonRig.fallbackField()`): the truth the tests judge the published heading by.

    func testHeeledBoardPublishesTrueTiltCompensatedHeadingRollPitchAtTheATTRate() throws {
        let dir = temporaryDirectory("fused")
        defer { try? FileManager.default.removeItem(at: dir) }
        let field = DaemonRig.fallbackField()
        // Heading 100° magnetic, heeled 20° to starboard, nose 3° up.
        let config = makeFusedAgentConfig(dir: dir, magnetometer: "qmc5883l", imu: "lsm6dsx", fallback: DaemonRig.fallback)
        let bus = stillBoardBus(heading: 100, roll: 20, pitch: 3, field: field, imu: "lsm6dsox", magnetometer: "qmc5883l")
        let agent = ServedAgent(config: config, logger: testLogger(), openBus: { _ in bus })
        try agent.start()
        defer { agent.stop() }
        let client = try SocketClient(path: agent.socketPath)
        client.watch()

        // Let the heading settle (the filter's fast start lasts `tauMag`), then look at 3 s of ATT.
        let late = client.attitudes(after: 5, until: 8)
        let att = try XCTUnwrap(late.last, "no ATT from the fused compass")
        let declination = field.declination.value
        let heading = try XCTUnwrap(att["heading"] as? Double)
        var error = abs(heading - Compass.normalize(100 + declination))
        if error > 180 { error = 360 - error }
        XCTAssertLessThan(error, 1, "true heading \(heading), expected \(Compass.normalize(100 + declination))")
        XCTAssertEqual(att["mheading"] as? Double ?? .nan, 100, accuracy: 1)
        XCTAssertEqual(att["roll"] as? Double ?? .nan, 20, accuracy: 0.5)
        XCTAssertEqual(att["pitch"] as? Double ?? .nan, 3, accuracy: 0.5)
        XCTAssertEqual(att["declination"] as? Double ?? .nan, declination, accuracy: 0.01)
        XCTAssertEqual(att["decl_src"] as? String, "fallback")
        // Specific force in m/s² (board z down: the level part of gravity reads negative), gyro in °/s.
        XCTAssertEqual(att["acc_len"] as? Double ?? .nan, 9.81, accuracy: 0.05)
        XCTAssertEqual(att["acc_z"] as? Double ?? .nan, -9.81 * cos(20 * .pi / 180) * cos(3 * .pi / 180), accuracy: 0.05)
        // Heeled right side down, "up" leans to the left of the board: negative on y (right).
        XCTAssertEqual(att["acc_y"] as? Double ?? .nan, -9.81 * sin(20 * .pi / 180) * cos(3 * .pi / 180), accuracy: 0.05)
        XCTAssertEqual(att["gyro_z"] as? Double ?? .nan, 0, accuracy: 0.05)
        XCTAssertEqual(att["temp"] as? Double ?? .nan, 25, accuracy: 0.1, "the LSM6DSOX model's die temperature")
        XCTAssertEqual((att["quat"] as? [Double])?.count, 4)

        // A level-board compass on this field would be far off: the tilt compensation is doing the work.
        let b = Vector3(att["mag_x"] as? Double ?? 0, att["mag_y"] as? Double ?? 0, att["mag_z"] as? Double ?? 0)
        var levelError = abs(Compass.magneticHeading(b) - 100)
        if levelError > 180 { levelError = 360 - levelError }
        XCTAssertGreaterThan(levelError, 5, "the heel should throw a level compass off")

        // ATT at the chain's rate (throttle 0.25 s: about 4 a second), not the gyro's 100 Hz.
        XCTAssertLessThanOrEqual(late.count, 16, "\(late.count) ATT in ~3 s")
        XCTAssertGreaterThanOrEqual(late.count, 8, "\(late.count) ATT in ~3 s")
        let devices = agent.liveness.map { "\($0)" }.joined(separator: " ")
        XCTAssertTrue(devices.contains("imu reader"), devices)
        XCTAssertTrue(agent.statusLine.contains("imu connected"), agent.statusLine)
    }

    /// An episode of magnetic interference in the running agent, as its users are told of it: a calibration kept by an
    /// earlier run in force (the board's own: no iron), a magnet brought near the still board for 4 s (20 µT downwards,
    /// against Sydney's upward field: about a third less; shorter than a step's `stepTime`) and taken away. CALIBRATION says so while it
    /// lasts (`interference`, `interference_seconds`) and no longer once it has passed; the journal has one line when it
    /// began and one when it ended, with its length; the heading rides it out on the gyroscope.
    func testAMagnetBroughtNearIsToldAsAnEpisodeOfInterference() throws {
        try assertAMagnetBroughtNearIsToldAsAnEpisode()
    }

    /// The same magnet, while the system's wall clock, which stamps the samples, steps forward by a day 2 s after it came
    /// near (a Pi without a real-time clock syncing: fake-hwclock had restored the time of its last shutdown). The
    /// agent gives the fusion each sample's time on the pipeline's monotonic clock too, and the fusion takes the step
    /// out: the episode is told as without the step (HEALTH's seconds, the journal's length), the heading rides it out,
    /// and the journal says once that the clock stepped. Before it did, the journal said "ended after 86404.0 s".
    func testAMagnetBroughtNearWhileTheWallClockStepsForward() throws {
        try assertAMagnetBroughtNearIsToldAsAnEpisode(clockSteppedBy: 86400)
    }

    /// The same magnet, while the wall clock steps back by 0.3 s 2 s after it came near (ntpd steps any offset over
    /// 0.128 s), less than the stamps alone take for a step: with the monotonic time the fusion takes it out too, and the
    /// journal says once that the clock stepped back. Before it did (checked against `SampleClock` of 8af898c), the
    /// journal said nothing of it and the samples stamped behind were dropped until the clock caught up.
    func testAMagnetBroughtNearWhileTheWallClockStepsBackAFewTenthsOfASecond() throws {
        try assertAMagnetBroughtNearIsToldAsAnEpisode(clockSteppedBy: -0.3)
    }

    /// The magnet's test, with the wall clock stepped `clockSteppedBy` seconds 2 s after the magnet came near.
    func assertAMagnetBroughtNearIsToldAsAnEpisode(clockSteppedBy step: Double? = nil) throws {
        // The system's wall clock, stepped by the test.
        let clockOffset = Setting(Int64(0))  // nanoseconds
        let wallClock: @Sendable () -> GPSTimestamp = { GPSTimestamp.now().adding(nanoseconds: clockOffset.value) }
        // The still board, with a magnet the test brings near and takes away.
        let board = MagnetBoard(), field = board.field, magnet = board.magnet, bus = board.bus
        let log = LogCapture()
        // The whole daemon (HEALTH is the daemon's), on this board, with a calibration kept by an earlier run in force:
        // no iron, WMM's field.
        let rig = try DaemonRig("magnet-near", gps: false, configure: { board.keepCalibration(for: $0) }, logger: log.logger,
                                openBus: { _ in bus }, wallClock: wallClock)
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let declination = field.declination.value
        /// What one watch saw: the CALIBRATION objects' `online` and the ATT headings' largest error.
        struct Seen {
            var online: [[String: Any]]
            var worst: Double
            /// This watch and `next`, the one after it, as one.
            mutating func add(_ next: Seen) {
                online += next.online
                worst = max(worst, next.worst)
            }
        }
        /// What the next `seconds` show.
        func watch(for seconds: Double) -> Seen {
            var online: [[String: Any]] = [], worst = 0.0
            let end = Syscall.monotonicSeconds() + seconds
            _ = client.collect(timeout: seconds + 1) { o in
                if cls(o) == "CALIBRATION", let x = o["online"] as? [String: Any] { online.append(x) }
                if cls(o) == "ATT", let h = o["heading"] as? Double {
                    var e = abs(h - Compass.normalize(MagnetBoard.heading + declination))
                    if e > 180 { e = 360 - e }
                    worst = max(worst, e)
                }
                return Syscall.monotonicSeconds() >= end
            }
            return Seen(online: online, worst: worst)
        }

        let before = watch(for: 6)
        XCTAssertEqual(before.online.last?["source"] as? String, "auto", "the kept calibration in force: \(before.online)")
        XCTAssertNil(before.online.last?["interference"], "no interference before the magnet")
        magnet.set(Vector3(0, 0, -20))
        let nearFrom = Syscall.monotonicSeconds(), nearAt = wallClock()
        var near = watch(for: 2)
        if let step { clockOffset.set(Int64((step * 1e9).rounded())) }
        near.add(watch(for: 1))
        // HEALTH 3 s into it: the magnetometer's episode going on, and for how long.
        client.send("?HEALTH;\n")
        let health = client.collect(timeout: 2) { cls($0) == "HEALTH" }.last { cls($0) == "HEALTH" }
        let polledAt = Syscall.monotonicSeconds() - nearFrom
        // CALIBRATION asked for then, seconds after the state it tells was published (when the episode began).
        client.send("?CALIBRATION;\n")
        let asked = client.collect(timeout: 2) { cls($0) == "CALIBRATION" }.last { cls($0) == "CALIBRATION" }
        near.add(watch(for: max(0, 4 - polledAt)))
        magnet.set(.zero)
        let after = watch(for: 5)
        let told = near.online.filter { $0["interference"] != nil }
        let lines = log.lines.filter { $0.contains("magnetic interference") }
        print("daemon, a magnet near for 4 s: CALIBRATION told \(told.map { "\($0["interference"]!) \($0["interference_seconds"] ?? "-") s" }), "
              + "then \(after.online.map { "\($0["interference"] ?? "none")" }); heading at most \(String(format: "%.2f", near.worst))° off while near; journal \(lines)")
        XCTAssertEqual(told.first?["interference"] as? String, "norm", "CALIBRATION tells the interference as it begins")
        // Since when, in the samples' time (a client works out how long from the ATT it last had, where the seconds
        // are those of the moment it was published).
        let since = try XCTUnwrap((told.first?["interference_since"] as? String).flatMap(GPSTimestamp.init(iso8601:)), "\(told)")
        XCTAssertEqual(since.unixTime, nearAt.unixTime, accuracy: 1, "the interference began when the magnet came near")
        // Asked for seconds later, the same beginning: in the samples' frame now, so moved by the step where the clock
        // stepped (within the samples' interval: the step is measured from them).
        let askedOnline = asked?["online"] as? [String: Any]
        let askedSince = try XCTUnwrap((askedOnline?["interference_since"] as? String).flatMap(GPSTimestamp.init(iso8601:)), "\(String(describing: asked))")
        XCTAssertEqual(askedSince.unixTime - since.unixTime, step ?? 0, accuracy: 0.1,
                       "?CALIBRATION \(polledAt) s into it: since \(askedSince), \(askedOnline?["interference_seconds"] ?? "-") s; published as it began: since \(since)")
        // The field with the magnet: its horizontal part as it was, its vertical (ENU up: −norm·sin(dip), dip down
        // positive) 20 µT lower.
        let (norm, dip) = (field.reference.norm, field.reference.dip * .pi / 180)
        let withMagnet = ((norm * cos(dip)) * (norm * cos(dip)) + (-norm * sin(dip) - 20) * (-norm * sin(dip) - 20)).squareRoot()
        XCTAssertEqual(told.last?["interference_norm"] as? Double ?? .nan, abs(100 * (withMagnet / norm - 1)), accuracy: 1,
                       "its size: the field's magnitude off by the magnet's")
        let sources = try XCTUnwrap(health?["sources"] as? [[String: Any]], "HEALTH: \(String(describing: health))")
        let magnetometer = try XCTUnwrap(sources.first { $0["source"] as? String == "magnetometer" }, "\(sources)")
        let going = try XCTUnwrap(magnetometer["interference"] as? [String: Any], "HEALTH's magnetometer tells the interference: \(magnetometer)")
        print("daemon, a magnet near: HEALTH \(String(format: "%.1f", polledAt)) s into it says \(going)")
        XCTAssertEqual(going["cause"] as? String, "norm")
        XCTAssertEqual(going["seconds"] as? Double ?? .nan, polledAt, accuracy: 1, "HEALTH: how long it has gone on")
        XCTAssertNotNil(after.online.last, "CALIBRATION published when it ended")
        XCTAssertNil(after.online.last?["interference"], "CALIBRATION no longer tells it once it has passed")
        XCTAssertEqual(lines.filter { $0.contains("magnetic interference began (norm") }.count, 1, "\(lines)")
        let ended = try XCTUnwrap(lines.first { $0.contains("magnetic interference ended after") }, "\(lines)")
        let seconds = try XCTUnwrap(Double(ended.components(separatedBy: "ended after ")[1].prefix { $0 != " " }), ended)
        XCTAssertEqual(seconds, 4, accuracy: 1, "its length, as the magnet was near")
        XCTAssertLessThan(near.worst, 1, "the heading rides it out on the gyroscope")
        let steps = log.lines.filter { $0.contains("clock stepped") }
        if let step {
            print("daemon, the wall clock stepped by \(step) s: journal \(steps)")
            XCTAssertEqual(steps.count, 1, "the journal says once that the clock stepped: \(steps)")
            // By the step, within the samples' jitter (the step is what the stamps did less the time that passed).
            let direction = step > 0 ? "forward" : "back"
            let told = try XCTUnwrap(steps.first?.components(separatedBy: "\(direction) by ").dropFirst().first.flatMap { Double($0.prefix { $0 != " " }) }, "\(steps)")
            XCTAssertEqual(told, abs(step), accuracy: step > 0 ? 1 : 0.1, "\(steps)")
        } else {
            XCTAssertEqual(steps, [], "no step")
        }
    }

    /// The IMU lost and found again, in the running agent: its chip answers nothing for 6 s (`SimulatedI2CBus.unplug`,
    /// a loose connector, a stalled bus), longer than `AttitudeFilter.longestBridge`, while the board is turned from 100°
    /// to 190° magnetic; its reader finds it again after the back-off (`imu.retry_max` 1 s here) and the gyroscope,
    /// still again, saw nothing of the turn. The heading published after the IMU is back is the board's new one, the
    /// field's: within 2° of it from 4 s after the chip answers again, as the drives test it in the fusion alone
    /// (`RoadDriveTests.testLongGapsInTheSamples`). Measured: 0.00° (the board is noise-free) from 1 s after. Bridged
    /// across the gap, as until 2026-12-06 (`longestBridge` set beyond the gap), the gyroscope's "no turn" held the
    /// old heading against the field: 51.3° off at 1 s, 48.0° at 5 s.
    func testAnIMULostWhileTheBoardTurnsComesBackOnTheNewHeading() throws {
        let dir = temporaryDirectory("imu-lost")
        defer { try? FileManager.default.removeItem(at: dir) }
        let field = DaemonRig.fallbackField()
        var config = makeFusedAgentConfig(dir: dir, magnetometer: "qmc5883l", imu: "lsm6dsx", fallback: DaemonRig.fallback)
        config.imu.reader.retryInitial = 0.5
        config.imu.reader.retryMax = 1

        // The board's heading, magnetic degrees: turned while its IMU is lost.
        let heading = Setting(100.0)
        let bus = boardBus(VirtualIMU(heading: { _ in heading.value }), field: field, imu: "lsm6dsox", magnetometer: "qmc5883l")

        let agent = ServedAgent(config: config, logger: testLogger(), openBus: { _ in bus })
        try agent.start()
        defer { agent.stop() }
        let client = try SocketClient(path: agent.socketPath)
        client.watch()
        let declination = field.declination.value
        /// The ATT headings' errors from `truth`° magnetic over the next `seconds`, with the seconds since `since`.
        func errors(for seconds: Double, truth: Double, since: Double) -> [(t: Double, error: Double)] {
            var out: [(t: Double, error: Double)] = []
            let end = Syscall.monotonicSeconds() + seconds
            _ = client.collect(timeout: seconds + 1) { o in
                let now = Syscall.monotonicSeconds()
                if cls(o) == "ATT", let h = o["heading"] as? Double {
                    var e = abs(h - Compass.normalize(truth + declination))
                    if e > 180 { e = 360 - e }
                    out.append((now - since, e))
                }
                return now >= end
            }
            return out
        }

        let start = Syscall.monotonicSeconds()
        let settled = errors(for: 7, truth: 100, since: start).filter { $0.t > 4 }
        XCTAssertFalse(settled.isEmpty, "no ATT before the IMU was lost")
        XCTAssertLessThan(settled.map(\.error).max() ?? .nan, 1, "the heading before the IMU was lost")

        bus.unplug(0x6A)
        heading.set(190)
        _ = errors(for: 6, truth: 190, since: start)
        bus.plug(0x6A)
        let back = Syscall.monotonicSeconds()
        let after = errors(for: 8, truth: 190, since: back)
        let late = after.filter { $0.t > 4 }.map(\.error)
        print(String(format: "the IMU lost 6 s while the board turned 90°: heading error from 4 s after it answers again at most %.2f° "
                     + "(%d ATT), at 1 s %.2f°", late.max() ?? .nan, late.count, after.first { $0.t > 1 }?.error ?? .nan))
        XCTAssertGreaterThan(late.count, 5, "ATT after the IMU came back")
        XCTAssertLessThan(late.max() ?? .nan, 2, "the heading after the IMU came back is the board's new one")
        XCTAssertTrue(agent.statusLine.contains("imu connected"), agent.statusLine)
    }
}
