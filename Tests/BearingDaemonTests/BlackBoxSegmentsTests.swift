import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingRecording
import Foundation
import TestSupport
import XCTest

/// Continuous recording: rotated segments on disk within `disk_bytes`, the oldest removed first, each one
/// readable on its own (it starts with the key state).
final class BlackBoxSegmentsTests: XCTestCase {
    func testSegmentsStayWithinTheirBoundOldestFirstAndEachReadsAlone() throws {
        let dir = temporaryDirectory("bb-segments")
        defer { try? FileManager.default.removeItem(at: dir) }
        var c = BlackBoxConfig()
        c.continuous = true
        c.directory = dir.path
        c.diskBytes = 1 << 20
        c.segmentMinutes = 60
        let recorder = BlackBoxRecorder(config: c, logger: testLogger())
        recorder.append(RecordedEvent(time: 0, .config("magnetometer: {bus: simulator}")))
        // Noisy data (it does not compress): about 4 MB in all, four times the bound.
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let count = 200_000
        for i in 0..<count {
            var data = [UInt8](repeating: 0, count: 12)
            for k in 0..<12 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                data[k] = UInt8(truncatingIfNeeded: seed >> 33)
            }
            let t = GPSTimestamp(seconds: 1_780_000_000 + Int64(i / 1000), nanoseconds: Int32(i % 1000) * 1_000_000)
            recorder.append(RecordedEvent(time: UInt64(i) * 1_000, .sensorSample(.imu, time: t, transactions: [
                I2CTransaction(.readByte, address: 0x6A, register: 0x1E, count: 1, data: [0x03]),
                I2CTransaction(.readBlock, address: 0x6A, register: 0x22, count: 12, data: data),
            ])))
        }
        recorder.flush()
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("segment-") }.sorted()
        let sizes = try names.map { try XCTUnwrap(FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent($0).path)[.size] as? Int) }
        print("continuous segments: \(names.count) kept, \(sizes.reduce(0, +)) bytes of \(c.diskBytes)")
        XCTAssertLessThanOrEqual(sizes.reduce(0, +), c.diskBytes)
        XCTAssertGreaterThanOrEqual(names.count, 3)
        var samples = 0
        var last: UInt64 = 0
        for name in names {
            let r = try Recording(bytes: AtomicFile.read(dir.appendingPathComponent(name).path, limit: 1 << 24))
            XCTAssertNil(r.damagedTail, name)
            XCTAssertEqual(r.configText, "magnetometer: {bus: simulator}", "\(name) starts with the key state")
            samples += r.events.filter { if case .sensorSample = $0.record { return true }; return false }.count
            last = r.events.last?.time ?? last
        }
        XCTAssertLessThan(samples, count, "the oldest segments were removed")
        XCTAssertGreaterThan(samples, count / 8)
        XCTAssertEqual(last, UInt64(count - 1) * 1_000, "the newest is kept")
    }

    /// A gpsd message is encoded after its delivery (the readers do not wait for its coding) but in its place: a
    /// record made during the delivery (a failure the message reports) comes after it, one made from another
    /// thread meanwhile (a save) sees it, and the next message is coded against it.
    func testAMessageRecordedAroundItsDeliveryKeepsItsPlace() throws {
        let recorder = BlackBoxRecorder(config: BlackBoxConfig(), logger: testLogger())
        let tpv = Array(#"{"class":"TPV","mode":3,"lat":50.1}"#.utf8), error = Array(#"{"class":"ERROR","message":"x"}"#.utf8)
        var order: [String] = []
        recorder.append(RecordedEvent(time: 1, .gpsd(tpv))) { order.append("delivered") }
        recorder.append(RecordedEvent(time: 2, .gpsd(error))) {
            order.append("delivered")
            recorder.append(RecordedEvent(time: 2, .gpsdFailure("gpsd replied with an ERROR")))
        }
        var saved: Recording?
        recorder.append(RecordedEvent(time: 3, .gpsd(tpv))) { saved = try? Recording(bytes: recorder.ringFile()) }
        recorder.append(RecordedEvent(time: 4, .timer(due: 4)))
        let events = try Recording(bytes: recorder.ringFile()).events
        XCTAssertEqual(order, ["delivered", "delivered"])
        XCTAssertEqual(events.map(\.time), [1, 2, 2, 3, 4])
        guard case .gpsd(let second) = events[1].record, case .gpsdFailure = events[2].record, case .gpsd(let third) = events[3].record else {
            return XCTFail("\(events)")
        }
        XCTAssertEqual(second, error)
        XCTAssertEqual(third, tpv)
        XCTAssertEqual(saved?.events.map(\.time), [1, 2, 2, 3], "a save during a delivery holds the message being delivered")
    }
}
