import BearingModel
import BearingRecording
import XCTest

final class RecordingRingTests: XCTestCase {
    /// One frame per second from `second` on: a few samples, and `keys` first.
    private func frame(second: Int, keys: [Record] = [], samples: Int = 10) -> (bytes: [UInt8], time: UInt64, keys: [RecordedEvent]) {
        let t = UInt64(second) * 1_000_000
        var encoder = FrameEncoder()
        let keyEvents = keys.map { RecordedEvent(time: t, $0) }
        for e in keyEvents { encoder.append(e) }
        for k in 0..<samples {
            encoder.append(RecordedEvent(time: t + UInt64(k) * 10_000 + 1, .sensorSample(.magnetometer, time: Samples.wall,
                                                                                        transactions: Samples.magnetometer([Int16(second), Int16(k), 0]))))
        }
        return (encoder.finishFrame()!, t, keyEvents)
    }

    private func append(_ f: (bytes: [UInt8], time: UInt64, keys: [RecordedEvent]), to ring: inout RecordingRing) {
        ring.append(frame: f.bytes, firstTime: f.time, keys: f.keys)
    }

    func testKeySnapshotKeepsTheLatestOfEachKeyInAStableOrder() {
        var snapshot = KeySnapshot()
        XCTAssertTrue(snapshot.isEmpty)
        let records: [Record] = [
            .state(.imu, .connected, wallTime: Samples.wall),
            .sensorFailure(.imu, message: "ignored: a stream record"),
            .calibration(name: "level", content: "a"),
            .state(.gpsd, .connecting(attempt: 1), wallTime: Samples.wall),
            .sensorConnect(.imu, bus: "/dev/i2c-1", transactions: []),
            .config("first"),
            .calibration(name: "accelerometer", content: nil),
            .sensorConnect(.magnetometer, bus: "/dev/i2c-1", transactions: Samples.connect),
            .environment([.init("bearing", "1.4.0")]),
            .config("second"),
            .state(.gpsd, .connected, wallTime: Samples.wall),
            .calibration(name: "level", content: "b"),
        ]
        for (k, r) in records.enumerated() { snapshot.apply(RecordedEvent(time: UInt64(k), r)) }
        XCTAssertEqual(snapshot.events.map(\.record), [
            .environment([.init("bearing", "1.4.0")]),
            .config("second"),
            .calibration(name: "accelerometer", content: nil),
            .calibration(name: "level", content: "b"),
            .sensorConnect(.magnetometer, bus: "/dev/i2c-1", transactions: Samples.connect),
            .sensorConnect(.imu, bus: "/dev/i2c-1", transactions: []),
            .state(.gpsd, .connected, wallTime: Samples.wall),
            .state(.imu, .connected, wallTime: Samples.wall),
        ])
        XCTAssertEqual(snapshot.events.map(\.time), [8, 9, 6, 11, 7, 4, 10, 0])
    }

    func testTheRingDropsTheOldestFramesOverItsBytes() {
        let size = frame(second: 0).bytes.count
        var ring = RecordingRing(maxBytes: size * 5 + size / 2, maxAge: UInt64.max)
        for s in 0..<20 {
            append(frame(second: s), to: &ring)
            XCTAssertLessThanOrEqual(ring.byteCount, size * 5 + size / 2)
            XCTAssertEqual(ring.frameCount, min(s + 1, 5))
        }
        XCTAssertEqual(ring.byteCount, 5 * size)
        let (events, tail) = try! readAll(ring.file())
        XCTAssertNil(tail)
        XCTAssertEqual(events.first?.time, 15_000_001, "the oldest kept frame is second 15's")
        XCTAssertEqual(events.count, 50)
    }

    func testTheRingAlwaysKeepsTheNewestFrame() {
        var ring = RecordingRing(maxBytes: 10, maxAge: 0)
        for s in 0..<3 {
            append(frame(second: s), to: &ring)
            XCTAssertEqual(ring.frameCount, 1)
        }
        XCTAssertEqual(try readAll(ring.file()).events.first?.time, 2_000_001)
    }

    func testTheRingDropsFramesOlderThanItsAge() {
        var ring = RecordingRing(maxBytes: Int.max, maxAge: 5_000_000)
        for s in 0..<30 {
            append(frame(second: s), to: &ring)
            XCTAssertEqual(ring.frameCount, min(s + 1, 6), "at second \(s): seconds \(max(0, s - 5))…\(s) kept")
        }
        // A gap: everything but the newest is too old.
        append(frame(second: 100), to: &ring)
        XCTAssertEqual(ring.frameCount, 1)
    }

    func testTheFileStartsWithTheKeyStateAsOfTheOldestKeptFrame() throws {
        let environment = Record.environment([.init("bearing", "1.4.0")])
        let connect = Record.sensorConnect(.magnetometer, bus: "/dev/i2c-1", transactions: Samples.connect)
        var ring = RecordingRing(maxBytes: Int.max, maxAge: 3_000_000)
        append(frame(second: 0, keys: [environment, .config("first"), connect, .state(.magnetometer, .connected, wallTime: Samples.wall)]), to: &ring)
        append(frame(second: 1, keys: [.config("second")]), to: &ring)
        append(frame(second: 2), to: &ring)
        append(frame(second: 3, keys: [.config("third"), .calibration(name: "level", content: "x")]), to: &ring)
        XCTAssertEqual(ring.frameCount, 4)
        XCTAssertTrue(ring.base.isEmpty)
        append(frame(second: 5), to: &ring) // seconds 0 and 1 are now too old
        XCTAssertEqual(ring.frameCount, 3)

        let (events, tail) = try readAll(ring.file())
        XCTAssertNil(tail)
        let snapshot = Array(events.prefix(4))
        XCTAssertEqual(snapshot.map(\.record), [environment, .config("second"), connect, .state(.magnetometer, .connected, wallTime: Samples.wall)])
        XCTAssertTrue(snapshot.allSatisfy { $0.time == 2_000_000 }, "stamped with the oldest kept frame's time")
        let rest = events.dropFirst(4)
        XCTAssertEqual(rest.first?.time, 2_000_001)
        XCTAssertEqual(rest.filter { $0.record.key != nil }.map(\.record), [.config("third"), .calibration(name: "level", content: "x")])
        XCTAssertEqual(rest.count, 3 * 10 + 2)
    }

    func testAnEmptyRingIsAHeader() throws {
        let ring = RecordingRing(maxBytes: 1_000, maxAge: 1_000)
        XCTAssertEqual(ring.file(), RecordingFormat.header)
        XCTAssertEqual(ring.frameCount, 0)
        XCTAssertEqual(ring.byteCount, 0)
    }

    func testALongRunKeepsItsBoundsAndReads() throws {
        var ring = RecordingRing(maxBytes: 4_000, maxAge: 60_000_000)
        var last: (bytes: [UInt8], time: UInt64, keys: [RecordedEvent])?
        for s in 0..<500 {
            let f = frame(second: s, keys: s % 7 == 0 ? [.config("at \(s)")] : [])
            append(f, to: &ring)
            last = f
            XCTAssertLessThanOrEqual(ring.byteCount, 4_000)
        }
        let (events, tail) = try readAll(ring.file())
        XCTAssertNil(tail)
        let oldest = 500 - ring.frameCount
        XCTAssertGreaterThan(ring.frameCount, 7)
        XCTAssertEqual(events.first?.record, .config("at \((oldest - 1) / 7 * 7)"), "the latest config as of the oldest kept frame")
        XCTAssertEqual(events.first?.time, UInt64(oldest) * 1_000_000)
        XCTAssertEqual(events.last?.time, (last?.time ?? 0) + 90_001)
    }
}
