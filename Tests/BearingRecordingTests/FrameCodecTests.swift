import BearingModel
import BearingRecording
import XCTest

final class FrameCodecTests: XCTestCase {
    func testHeaderIsSixteenBytesOfMagicVersionFlagsReserved() {
        XCTAssertEqual(RecordingFormat.header, Array("BEARBOX\n".utf8) + [1, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(RecordingFormat.version, 1)
    }

    func testCRC32CMatchesTheCheckValueAndABytewiseReference() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([]), 0)
        var rng = SplitMix64(seed: 7)
        for n in [1, 7, 8, 9, 15, 16, 17, 100, 1_000] {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var c: UInt32 = 0xFFFF_FFFF
            for b in bytes {
                c ^= UInt32(b)
                for _ in 0..<8 { c = c & 1 == 1 ? 0x82F6_3B78 ^ (c >> 1) : c >> 1 }
            }
            XCTAssertEqual(CRC32C.checksum(bytes), ~c, "\(n) bytes")
        }
    }

    func testEveryRecordKindRoundTrips() throws {
        let events = Samples.everyKind(from: 5_000_000)
        let (bytes, _) = recordingFile([events])
        let (read, tail) = try readAll(bytes)
        XCTAssertNil(tail)
        XCTAssertEqual(read.count, events.count)
        for (a, b) in zip(read, events) { XCTAssertEqual(a, b) }
    }

    func testDoublesKeepTheirBitPatterns() throws {
        let negativeZero = RecordedEvent(time: 1, .state(.gpsd, .disconnected(.silence(seconds: -0.0), retryIn: -0.0), wallTime: Samples.wall))
        let nan = RecordedEvent(time: 2, .state(.gpsd, .disconnected(.silence(seconds: .nan), retryIn: .signalingNaN), wallTime: Samples.wall))
        let (read, _) = try readAll(recordingFile([[negativeZero, nan]]).bytes)
        XCTAssertEqual(read.count, 2)
        var bits: [UInt64] = []
        for e in read {
            guard case .state(_, .disconnected(.silence(let s), let r?), _) = e.record else { return XCTFail("\(e)") }
            bits += [s.bitPattern, r.bitPattern]
        }
        XCTAssertEqual(bits, [(-0.0).bitPattern, (-0.0).bitPattern, Double.nan.bitPattern, Double.signalingNaN.bitPattern])
        XCTAssertEqual(read[0].record, negativeZero.record)
    }

    func testRecordTimesRoundTripWhateverTheirDeltas() throws {
        let times: [UInt64] = [0, 0, 1, UInt64.max / 2, UInt64.max / 2, UInt64.max, 3, UInt64.max - 1, 0]
        let events = times.enumerated().map { RecordedEvent(time: $0.element, .timer(due: UInt64($0.offset) * 1_000)) }
        XCTAssertEqual(try readAll(recordingFile([events]).bytes).events, events)
    }

    func testSampleTimesRoundTripExactly() throws {
        let shape = Samples.imu([1, 2, 3, 4, 5, 6])
        let stamps: [GPSTimestamp] = [
            Samples.wall,
            GPSTimestamp(seconds: Samples.wall.seconds, nanoseconds: 260_000_007), // the usual: 10 ms and a little
            GPSTimestamp(seconds: Samples.wall.seconds - 2, nanoseconds: 999_999_999), // the wall clock stepped back
            GPSTimestamp(seconds: Samples.wall.seconds + 1, nanoseconds: 0),
            GPSTimestamp(seconds: 0, nanoseconds: -5), // not normalised: written in full
            GPSTimestamp(seconds: 0, nanoseconds: 1_500_000_000),
            GPSTimestamp(seconds: -1, nanoseconds: 999_999_999),
            GPSTimestamp(seconds: Int64.max, nanoseconds: 999_999_999), // the prediction overflows
            GPSTimestamp(seconds: Int64.min, nanoseconds: 0),
            GPSTimestamp(seconds: Int64.min, nanoseconds: Int32.min),
            GPSTimestamp(seconds: Int64.max, nanoseconds: Int32.max),
            GPSTimestamp(seconds: 5, nanoseconds: 5),
            GPSTimestamp(seconds: 5, nanoseconds: 5),
        ]
        let recordTimes: [UInt64] = [100, 10_100, 20_100, 20_100, 30_000, 0, UInt64.max, 7, 8, 8, 9, UInt64.max, 1 << 62]
        var events: [RecordedEvent] = []
        for (t, s) in zip(recordTimes, stamps) {
            events.append(RecordedEvent(time: t, .sensorSample(.imu, time: s, transactions: shape)))
            events.append(RecordedEvent(time: t, .sensorSample(.magnetometer, time: s, transactions: [])))
        }
        XCTAssertEqual(try readAll(recordingFile([events]).bytes).events, events)
    }

    func testTransactionsOfChangingShapesRoundTrip() throws {
        let fail = [I2CTransaction(.readByte, address: 0x6A, register: 0x1E, count: 1, data: [0x07]),
                    I2CTransaction(.readBlock, address: 0x6A, register: 0x22, count: 12, data: [], errno: 121)]
        let shapes: [[I2CTransaction]] = [
            Samples.imu([100, -200, 16_384, 5, -5, 0]),
            Samples.imu([100, -200, 16_384, 5, -5, 0]), // no change at all
            Samples.imu([-100, 200, -16_384, -5, 5, -1]),
            fail,
            fail,
            Samples.imu([0, 0, 0, 0, 0, 0], status: 0),
            Samples.imu([Int16.max, Int16.min, 0, -1, 1, 255], status: 0xFF),
            Samples.connect,
            Samples.connect,
            [],
            [],
            Samples.magnetometer([1, 2, 3]),
            // Data of exactly 8 and 16 bytes: the change bitmap's byte boundaries.
            [I2CTransaction(.readBlock, address: 0x1E, register: 0x28, count: 8, data: [1, 2, 3, 4, 5, 6, 7, 8])],
            [I2CTransaction(.readBlock, address: 0x1E, register: 0x28, count: 8, data: [1, 0, 3, 0, 5, 0, 7, 9])],
            [I2CTransaction(.readBlock, address: 0x1E, register: 0x28, count: 16, data: Array(0..<16))],
            [I2CTransaction(.readBlock, address: 0x1E, register: 0x28, count: 16, data: Array(0..<16).map { $0 == 15 ? 0 : $0 })],
        ] + Self.fifoReads
        let events = shapes.enumerated().map { i, ts in
            RecordedEvent(time: 1_000 + UInt64(i) * 10_000, .sensorSample(.imu, time: Samples.wall, transactions: ts))
        }
        XCTAssertEqual(try readAll(recordingFile([events]).bytes).events, events)
    }

    /// FIFO reads larger than the encoder keeps of a sample to code the next against (512 bytes): each is
    /// written in full, the same shape again included.
    static let fifoReads: [[I2CTransaction]] = (0..<3).map { k in
        (0..<3).map { b in I2CTransaction(.readBlock, address: 0x6A, register: 0x3E, count: 200,
                                          data: (0..<200).map { UInt8(truncatingIfNeeded: $0 * (b + 1) + k) }) }
    }

    func testGPSDMessagesOfAnyBytesRoundTrip() throws {
        var rng = SplitMix64(seed: 11)
        let random = (0..<10_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let repetitive = [UInt8](repeating: 0x41, count: 5_000)
        let messages: [[UInt8]] = [
            [], [0], [0xFF], Array("{}".utf8), Samples.tpv, Samples.tpv, Samples.sky, random, Samples.sky, repetitive,
            Array(Samples.tpv.prefix(5)), Array(#"{"class":"TPV"#.utf8), Array(#"{"class":"TPV""#.utf8), Samples.tpv + random.prefix(3),
            [0xC3, 0x28, 0xA0, 0xA1, 0xE2, 0x28, 0xA1, 0xF0, 0x28, 0x8C, 0xBC], Array(random.suffix(4)), Samples.sky + Samples.sky,
        ]
        let events = messages.enumerated().map { RecordedEvent(time: UInt64($0.offset), .gpsd($0.element)) }
        XCTAssertEqual(try readAll(recordingFile([events]).bytes).events, events)
    }

    func testARepeatedGPSDMessageCostsAFewBytes() {
        var encoder = FrameEncoder()
        encoder.append(RecordedEvent(time: 0, .gpsd(Samples.sky)))
        let first = encoder.pendingBytes
        encoder.append(RecordedEvent(time: 1_000, .gpsd(Samples.tpv)))
        let second = encoder.pendingBytes
        encoder.append(RecordedEvent(time: 2_000, .gpsd(Samples.sky)))
        XCTAssertLessThan(first, Samples.sky.count, "the satellites repeat their keys")
        XCTAssertLessThan(encoder.pendingBytes - second, 12, "the same SKY again, coded against the first")
    }

    func testEncoderStateAndEmptyFrames() {
        var encoder = FrameEncoder()
        XCTAssertTrue(encoder.isEmpty)
        XCTAssertNil(encoder.firstTime)
        XCTAssertEqual(encoder.pendingBytes, 0)
        XCTAssertNil(encoder.finishFrame())
        encoder.append(RecordedEvent(time: 42, .config("x")))
        encoder.append(RecordedEvent(time: 50, .config("y")))
        XCTAssertFalse(encoder.isEmpty)
        XCTAssertEqual(encoder.firstTime, 42)
        XCTAssertGreaterThan(encoder.pendingBytes, 0)
        let frame = encoder.finishFrame()
        XCTAssertEqual(frame?.count, 24 + 8)
        XCTAssertTrue(encoder.isEmpty)
        XCTAssertNil(encoder.firstTime)
        XCTAssertEqual(encoder.pendingBytes, 0)
    }

    func testEachFrameOfAFileDecodesOnItsOwn() throws {
        var frames: [[RecordedEvent]] = []
        for k in 0..<4 {
            let t = UInt64(k) * 1_000_000
            var events = Samples.everyKind(from: t)
            // The second frame starts with references the first built up: it must not lean on them.
            events.insert(RecordedEvent(time: t, .sensorSample(.imu, time: Samples.wall, transactions: Samples.imu([1, 2, 3, 4, 5, 6]))), at: 0)
            events.insert(RecordedEvent(time: t, .gpsd(Samples.sky)), at: 0)
            frames.append(events)
        }
        let (bytes, offsets) = recordingFile(frames)
        XCTAssertEqual(try readAll(bytes).events, frames.flatMap { $0 })
        let ends = offsets.dropFirst() + [bytes.count]
        for (k, (start, end)) in zip(offsets, ends).enumerated() {
            let alone = RecordingFormat.header + bytes[start..<end]
            let (read, tail) = try readAll(alone)
            XCTAssertNil(tail)
            XCTAssertEqual(read, frames[k], "frame \(k) read alone")
        }
    }

    func testReaderOffsetFollowsTheFrames() throws {
        let frames = [[RecordedEvent(time: 1, .config("a"))], [RecordedEvent(time: 2, .config("b")), RecordedEvent(time: 3, .config("c"))]]
        let (bytes, offsets) = recordingFile(frames)
        var reader = try RecordingReader(bytes)
        XCTAssertEqual(reader.offset, 16)
        _ = try reader.next()
        XCTAssertEqual(reader.offset, offsets[0])
        _ = try reader.next()
        XCTAssertEqual(reader.offset, offsets[1])
        _ = try reader.next()
        XCTAssertNil(try reader.next())
        XCTAssertNil(try reader.next())
        XCTAssertNil(reader.damagedTail)
    }

    func testAHeaderAloneIsAnEmptyRecording() throws {
        let (events, tail) = try readAll(RecordingFormat.header)
        XCTAssertEqual(events, [])
        XCTAssertNil(tail)
    }
}
