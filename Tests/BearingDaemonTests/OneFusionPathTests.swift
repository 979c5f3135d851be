@testable import BearingDaemon
import BearingCalibration
import BearingCalibrationWorkflow
import BearingModel
import BearingPublishing
import BearingSimulator
import BearingWire
import Synchronization
import TestSupport
import XCTest

/// One algorithm path: `bearing attitude` (`OfflineAttitude`) runs the daemon's own fusion stage, not a copy.
/// One recording — a car's drive behind a hard iron, its magnetometer at half the IMU's rate, with a GNSS track —
/// goes through the daemon as a replay feeds it (an `Agent` with `feed: .replay`, the samples through its
/// sensors' adapters, each epoch as gpsd's fix through its gpsd adapter, every ATT taken from the hub with no
/// chain) and through `OfflineAttitude`: the attitudes are the same, to the bit.
final class OneFusionPathTests: XCTestCase {
    func testBearingAttitudeGivesTheDaemonsAttitudesToTheBit() throws {
        let dir = temporaryDirectory("one-path")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (file, track) = Self.drive()
        let base: Int64 = 1_790_000_000
        let position = Vector3(51, 0, 0)

        // bearing attitude --samples … --gnss … --position 51,0 (a car, online calibration from nothing known).
        var options = OfflineAttitude.Options()
        options.position = position
        var offline: [Attitude] = []
        var notes: [String] = []
        let outcome = OfflineAttitude.run(file, track: track, options: options, now: Double(base), note: { notes.append($0) }) { o in
            if let a = o.attitude { offline.append(a) }
        }

        // The daemon: the same board (chip axes x forward, y left, z up), the fallback position, a car.
        var config = makeFusedAgentConfig(dir: dir, magnetometer: "qmc5883l", imu: "lsm6dsox", fallback: position)
        config.vehicle = .car
        config.heading.trueNorth = true
        config.calibration.autoFile = dir.appendingPathComponent("none-auto.json").path
        XCTAssertEqual(config.imu.orientation, OfflineAttitude.orientation(options.axes))
        XCTAssertEqual(config.magnetometer.orientation, OfflineAttitude.orientation(options.axes))
        let agent = Agent(config: config, logger: testLogger(), feed: .replay(startTime: GPSTimestamp(seconds: base)))
        try agent.startPublishing()
        let daemon = Mutex<[Attitude]>([])
        let subscription = agent.core.queue.sync {
            agent.core.hub.subscribe(StreamKey(.att, .compass), through: []) { report in
                if case .attitude(let a) = report.payload { daemon.withLock { $0.append(a) } }
            }
        }
        let entry = agent.core.entry
        entry.run { agent.gpsAdapter.gpsdClient(agent.gpsd, didChangeState: .connected) }
        var next = 0
        for (i, row) in OfflineAttitude.rows(file, base: base).enumerated() {
            while next < track.epochs.count, track.epochs[next].time <= file.samples[i].time {
                let fix = OfflineAttitude.fix(track.epochs[next], base: base)
                entry.run { agent.gpsAdapter.gpsdClient(agent.gpsd, didReceive: fix) }
                next += 1
            }
            if let m = row.magnetic { agent.magAdapter.sensorReader(didReceive: m) }
            agent.imuAdapter.sensorReader(didReceive: row.inertial)
        }
        agent.core.queue.sync { subscription.cancel() }
        let live = daemon.withLock { $0 }

        let learnt = outcome.calibration?.origin == .auto
        print("one fusion path: \(offline.count) attitudes from bearing attitude, \(live.count) from the daemon; "
              + "calibration learnt: \(learnt); \(notes.count) notes; deviation from driving: \(outcome.driving ?? "none")")
        XCTAssertGreaterThan(offline.count, file.samples.count - 5, "an attitude per inertial sample once a field sample came")
        XCTAssertTrue(learnt, "the drive teaches the hard iron: \(notes)")
        XCTAssertTrue(outcome.driving?.contains("sectors") == true, "the deviation from driving was learnt: \(outcome.driving ?? "none")")
        XCTAssertEqual(live.count, offline.count)
        let firstDifference = zip(live, offline).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        XCTAssertNil(firstDifference, firstDifference.map { "attitude \($0) differs: daemon \(live[$0]), bearing attitude \(offline[$0])" } ?? "")
    }

    /// A car driving eight 20 s legs with 45° turns of 5 s between them (twice round), rolling gently, 15 m/s,
    /// its magnetometer behind a 25 µT hard iron and read at 50 Hz beside a 100 Hz IMU (chip axes x forward,
    /// y left, z up), with one fix a second near Greenwich carrying speed and course.
    static func drive() -> (IMUSampleFile, GNSSTrackFile) {
        @Sendable func heading(_ t: Double) -> Double {
            let leg = Int(t / 25), into = t - Double(leg) * 25
            return Double(leg) * 45 + (into > 20 ? 45 * (into - 20) / 5 : 0)
        }
        var imu = VirtualIMU(heading: heading)
        imu.roll = { 2 * sin($0 / 3) }
        imu.fieldNorm = 49.0
        imu.dip = 66.1
        imu.magNoise = 0.2
        imu.gyroNoise = 0.002
        imu.accNoise = 0.03
        let duration = 400.0
        let hardIron = Vector3(25, -12, 8)
        var samples: [IMUSample] = []
        for (k, r) in imu.readings(duration: duration).enumerated() {
            var s = r.sample
            s.magnetometer = k % 2 == 0 ? s.magnetometer.map { $0 + hardIron } : nil
            samples.append(s)
        }
        var epochs: [GNSSTrackFile.Epoch] = []
        var lat = 51.0, lon = 0.0
        for k in 0...Int(duration) {
            let t = Double(k), course = Compass.normalize(heading(t) + 1.3)
            if k > 0 {
                let h = (heading(t - 0.5) + 1.3) * .pi / 180
                lat += 15 * cos(h) / 6_371_000 * 180 / .pi
                lon += 15 * sin(h) / (6_371_000 * cos(lat * .pi / 180)) * 180 / .pi
            }
            epochs.append(GNSSTrackFile.Epoch(time: t, latitude: lat, longitude: lon, speed: 15, track: course, eps: nil))
        }
        return (IMUSampleFile(samples: samples, hasMagnetometer: true), GNSSTrackFile(epochs: epochs))
    }
}
