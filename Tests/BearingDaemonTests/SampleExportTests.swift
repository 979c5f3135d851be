@testable import BearingDaemon
import BearingCalibration
import BearingPOSIX
import BearingRecording
import TestSupport
import XCTest

/// `bearing replay --export-samples`: the CSV `bearing attitude` reads, each field sample once, on the IMU row
/// after it (the daemon fuses a field sample before the inertial sample that follows it), not repeated on every
/// IMU row (which would feed online calibration the same field five times over at 100 Hz IMU and 20 Hz magnetometer).
final class SampleExportTests: XCTestCase {
    func testEachFieldSampleIsExportedOnceOnTheIMURowAfterIt() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/regression/fused-still.bbx")
        let recording = try Recording(bytes: try AtomicFile.read(fixture.path, limit: 1 << 24))
        var imu = 0, magnetic = 0, magneticBeforeTheFirstIMU = 0, magneticAfterTheLastIMU = 0
        for e in recording.events {
            guard case .sensorSample(let sensor, _, _) = e.record else { continue }
            if sensor == .imu {
                imu += 1
                magneticAfterTheLastIMU = 0
            } else {
                magnetic += 1
                magneticAfterTheLastIMU += 1
                if imu == 0 { magneticBeforeTheFirstIMU += 1 }
            }
        }
        let dir = temporaryDirectory("export")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.csv").path
        let rows = try SampleExport.write(recording, to: path)
        let file = try IMUSampleFile.parse(try AtomicFile.readText(path, limit: 1 << 24), source: path)
        let withField = file.samples.filter { $0.magnetometer != nil }.count
        print("export of fused-still.bbx: \(imu) IMU and \(magnetic) field samples recorded; \(rows) rows, \(withField) with a field")
        XCTAssertEqual(file.samples.count, rows)
        XCTAssertGreaterThan(imu, 3 * magnetic, "the fixture's IMU is faster than its magnetometer")
        // Field samples that came in a run before one IMU row: the last of them stands for the run.
        XCTAssertEqual(withField, magnetic - magneticAfterTheLastIMU - Self.superseded(recording), "each field sample once")
        XCTAssertGreaterThan(magneticBeforeTheFirstIMU + withField, 0)
    }

    /// A recording across a step of the wall clock (the corpus's car, its samples stamped a day behind until 2 s in, as
    /// fake-hwclock's time before NTP's step; or a minute ahead until then, as a clock NTP steps back) is exported on the
    /// fusion's clock, as the daemon took the step out with the record times (`SampleClock`): every row's `t` as without
    /// the step, within the interval the first sample after it is put at (measured 2.4 ms). Before, the step forward was
    /// a day's gap in the file, and the step back made `t` go back, which `bearing attitude` refuses.
    func testARecordingAcrossAStepOfTheWallClockIsExportedOnTheFusionsClock() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/regression/fused-car.bbx")
        let recording = try Recording(bytes: try AtomicFile.read(fixture.path, limit: 1 << 24))
        let first = try XCTUnwrap(recording.events.first { if case .sensorSample = $0.record { return true }; return false }?.time)
        let dir = temporaryDirectory("export-stepped")
        defer { try? FileManager.default.removeItem(at: dir) }
        func exported(_ r: Recording, _ name: String) throws -> IMUSampleFile {
            let path = dir.appendingPathComponent(name).path
            _ = try SampleExport.write(r, to: path)
            return try IMUSampleFile.parse(try AtomicFile.readText(path, limit: 1 << 24), source: name)
        }
        let plain = try exported(recording, "plain.csv")
        for (name, by) in [("forward.csv", Int64(-86400)), ("back.csv", 60)] {
            let stepped = try RegressionCorpusTests.recording(recording, withTheSamplesStampedBy: by) { $0 < first + 2_000_000 }
            let file = try exported(stepped, name)
            XCTAssertEqual(file.samples.count, plain.samples.count, name)
            let off = zip(plain.samples, file.samples).map { abs($0.time - $1.time) }.max() ?? .infinity
            print("export of fused-car.bbx with its wall clock stepped (\(name)): \(file.samples.count) rows, t at most \(off) s from the unstepped export's")
            XCTAssertLessThan(off, 0.004, "\(name): t as without the step")
            XCTAssertTrue(zip(plain.samples, file.samples).allSatisfy { $0.accelerometer == $1.accelerometer && $0.gyroscope == $1.gyroscope && $0.magnetometer == $1.magnetometer }, name)
        }
    }

    /// Field samples followed by another before any IMU sample: the row takes the newest.
    static func superseded(_ recording: Recording) -> Int {
        var count = 0, pending = false
        for e in recording.events {
            guard case .sensorSample(let sensor, _, _) = e.record else { continue }
            if sensor == .magnetometer {
                if pending { count += 1 }
                pending = true
            } else {
                pending = false
            }
        }
        return count
    }
}
