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
