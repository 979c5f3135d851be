import BearingModel
import BearingRecording
import XCTest

final class RecordingDamageTests: XCTestCase {
    /// Three frames, each with every record kind.
    private func threeFrames() -> (frames: [[RecordedEvent]], bytes: [UInt8], offsets: [Int]) {
        let frames = (0..<3).map { Samples.everyKind(from: UInt64($0) * 1_000_000) }
        let (bytes, offsets) = recordingFile(frames)
        return (frames, bytes, offsets)
    }

    private func corruptOffset(_ bytes: [UInt8]) -> (events: Int, error: RecordingError?) {
        var events = 0
        do {
            var reader = try RecordingReader(bytes)
            while try reader.next() != nil { events += 1 }
            return (events, nil)
        } catch {
            return (events, recordingError(error))
        }
    }

    /// The error as a `RecordingError` (a generic, for compilers that type the `catch` and those that do not).
    private func recordingError<E: Error>(_ error: E) -> RecordingError? {
        error as? RecordingError
    }

    func testADamagedMiddleFrameNamesItsOffset() throws {
        let (frames, bytes, offsets) = threeFrames()
        let middle = offsets[1]..<offsets[2]
        for i in [middle.lowerBound, middle.lowerBound + 4, middle.lowerBound + 9, middle.lowerBound + 20, middle.lowerBound + 30, middle.upperBound - 1] {
            var damaged = bytes
            damaged[i] ^= 0x40
            let (events, error) = corruptOffset(damaged)
            XCTAssertEqual(events, frames[0].count, "byte \(i): the first frame reads")
            guard case .corrupt(let offset, let reason)? = error else { XCTFail("byte \(i): \(String(describing: error))"); continue }
            XCTAssertEqual(offset, offsets[1], "byte \(i): \(reason)")
        }
        var damaged = bytes
        damaged[middle.lowerBound + 40] ^= 1
        guard case .corrupt(_, let reason)? = corruptOffset(damaged).error else { return XCTFail() }
        XCTAssertTrue(reason.contains("CRC mismatch"), reason)
    }

    func testTheErrorStaysOnLaterCalls() throws {
        let (_, bytes, offsets) = threeFrames()
        var damaged = bytes
        damaged[offsets[1] + 50] ^= 0xFF
        var reader = try RecordingReader(damaged)
        while true {
            do {
                guard try reader.next() != nil else { return XCTFail("no error") }
            } catch {
                break
            }
        }
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual(($0 as? RecordingError).map { "\($0)" }?.contains("\(offsets[1])"), true) }
    }

    func testADamagedLastFrameEndsTheReadingQuietly() throws {
        let (frames, bytes, offsets) = threeFrames()
        let expected = Array((frames[0] + frames[1]))
        for i in offsets[2]..<bytes.count {
            for flip: UInt8 in [0x01, 0x80] {
                var damaged = bytes
                damaged[i] ^= flip
                let (events, tail) = try readAll(damaged)
                XCTAssertEqual(events, expected, "byte \(i)")
                XCTAssertEqual(tail, RecordingReader.DamagedTail(offset: offsets[2], bytes: bytes.count - offsets[2]), "byte \(i)")
            }
        }
    }

    func testAFileCutAnywhereInItsLastFrameKeepsWhatPrecedes() throws {
        let (frames, bytes, offsets) = threeFrames()
        let expected = Array((frames[0] + frames[1]))
        XCTAssertEqual(try readAll(Array(bytes[..<offsets[2]])).tail, nil, "cut between frames: nothing damaged")
        for cut in (offsets[2] + 1)..<bytes.count {
            let (events, tail) = try readAll(Array(bytes[..<cut]))
            XCTAssertEqual(events, expected, "cut at \(cut)")
            XCTAssertEqual(tail, RecordingReader.DamagedTail(offset: offsets[2], bytes: cut - offsets[2]), "cut at \(cut)")
        }
    }

    func testGarbageAfterTheLastFrameIsADamagedTail() throws {
        let (frames, bytes, _) = threeFrames()
        let (events, tail) = try readAll(bytes + [UInt8](repeating: 0, count: 4_096))
        XCTAssertEqual(events, frames.flatMap { $0 })
        XCTAssertEqual(tail, RecordingReader.DamagedTail(offset: bytes.count, bytes: 4_096))
    }

    func testAHeaderCutShortIsAnError() {
        for cut in 0..<16 {
            XCTAssertThrowsError(try RecordingReader(Array(RecordingFormat.header.prefix(cut))), "cut at \(cut)") {
                guard case .corrupt(0, let reason)? = $0 as? RecordingError else { return XCTFail("\($0)") }
                XCTAssertTrue(reason.contains("header"), reason)
            }
        }
    }

    func testOtherFilesAndNewerVersionsAreRefused() {
        XCTAssertThrowsError(try RecordingReader(Array("{\"class\":\"TPV\"}\n and more than sixteen".utf8))) {
            XCTAssertEqual($0 as? RecordingError, .notARecording)
        }
        XCTAssertThrowsError(try RecordingReader(Array("BEARBOX\r".utf8))) {
            XCTAssertEqual($0 as? RecordingError, .notARecording)
        }
        var newer = RecordingFormat.header
        newer[8] = 2
        XCTAssertThrowsError(try RecordingReader(newer + Array(recordingFile([[RecordedEvent(time: 1, .config("x"))]]).bytes.dropFirst(16)))) {
            XCTAssertEqual($0 as? RecordingError, .newerVersion(found: 2, supported: 1))
        }
        newer[8] = 0
        newer[9] = 1
        XCTAssertThrowsError(try RecordingReader(newer)) {
            XCTAssertEqual($0 as? RecordingError, .newerVersion(found: 256, supported: 1))
        }
    }

    func testDescriptionsSayWhereAndWhatToDo() {
        let corrupt = RecordingError.corrupt(offset: 1234, reason: "CRC mismatch").description
        for part in ["1234", "0x4d2", "CRC mismatch", "head -c 1234"] { XCTAssertTrue(corrupt.contains(part), corrupt) }
        XCTAssertTrue(RecordingError.newerVersion(found: 2, supported: 1).description.contains("newer bearing"))
        XCTAssertTrue(RecordingError.notARecording.description.contains("BEARBOX"))
    }

    func testHandmadeFramesWithGoodCRCsButBadContentAreRefused() throws {
        let bad: [(payload: [UInt8], count: UInt32, reason: String)] = [
            ([0x3F, 0x00], 1, "bad record type 0x3f at record 0"),
            ([0x02, 0x00, 0x00, 0x3F, 0x00], 2, "bad record type 0x3f at record 1"),
            ([0x02, 0x00, 0x05, 0x41], 1, "at record 0"), // a string longer than the payload
            ([0x02, 0x00, 0x00, 0x00], 1, "1 bytes after the last record"),
            ([0x02, 0x00, 0x00], 1_000, "record count 1000"),
            ([0x41, 0x00, 0x00], 1, "predicted from no earlier sample"),
            ([0x71, 0x00, 0x00, 0x00, 0x00], 1, "shaped like no earlier sample"),
            ([0x5F, 0x00, 0x00, 0x00, 0x00], 1, "bad sensor 15"),
            ([0x09, 0x00, 0x01, 0x00], 1, "gpsd reference 1 over its limit 0"),
            // A message of 16 MiB (the most there may be) whose payload ends after one literal.
            ([0x09, 0x00, 0x00, 0x80, 0x80, 0x80, 0x08, 0x10, 0x41], 1, "payload ends inside a number at record 0"),
            ([0x09, 0x00, 0x00, 0x81, 0x80, 0x80, 0x08], 1, "gpsd message length 16777217 over its limit"),
            ([0x09, 0x00, 0x00, 0x04, 0x00, 0x02], 1, "copy from outside"),
            ([0x09, 0x00, 0x00, 0x04, 0x01, 0x00], 1, "copy runs past"),
            ([0x09, 0x00, 0x00, 0x04, 0x50], 1, "literals run past"),
            ([0x0B, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], 1, "number over 64 bits"),
            ([0x05, 0x00, 0x03, 0x01, 0x00, 0x00], 1, "bad source 3"),
            ([0x05, 0x00, 0x00, 0x02, 0x09], 1, "bad disconnect reason 9"),
            ([0x04, 0x00, 0x00, 0x00, 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00], 1, "bad I2C operation 7"),
        ]
        for (payload, count, reason) in bad {
            let file = RecordingFormat.header + handmadeFrame(payload, count: count)
            let (events, tail) = try readAll(file)
            XCTAssertEqual(events, [], reason)
            XCTAssertEqual(tail?.offset, 16, reason)
            // The same frame followed by a good one: an error saying what is wrong.
            let followed = file + recordingFile([[RecordedEvent(time: 1, .config("x"))]]).bytes.dropFirst(16)
            XCTAssertThrowsError(try readAll(followed), reason) {
                guard case .corrupt(16, let r)? = $0 as? RecordingError else { return XCTFail("\($0)") }
                XCTAssertTrue(r.contains(reason), "\(r) does not say \(reason)")
            }
        }
    }

    func testAFrameExpandingPastItsLimitIsRefusedQuickly() throws {
        // Sixteen messages of 16 MiB each, every one a literal and one overlapping copy: 256 MiB from 200 bytes.
        var payload: [UInt8] = [0x09, 0x00, 0x00, 0x80, 0x80, 0x80, 0x08, 0x1F, 0x41, 0x00]
        var v = UInt64((16 << 20) - 1 - 4 - 15)
        while v >= 0x80 {
            payload.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        payload.append(UInt8(v))
        var records = payload
        for _ in 1..<16 { records += [0x09, 0x00, 0x01] + payload.dropFirst(3) }
        let file = RecordingFormat.header + handmadeFrame(records, count: 16)
        let (events, tail) = try readAll(file)
        XCTAssertEqual(events, [])
        XCTAssertEqual(tail?.offset, 16)
        let followed = file + recordingFile([[RecordedEvent(time: 1, .config("x"))]]).bytes.dropFirst(16)
        XCTAssertThrowsError(try readAll(followed)) {
            guard case .corrupt(16, let r)? = $0 as? RecordingError else { return XCTFail("\($0)") }
            XCTAssertTrue(r.contains("gpsd messages decode to over 67108864 bytes at record 4"), r)
        }
    }

    func testRandomMutationsNeverCrashOrLoop() throws {
        var rng = SplitMix64(seed: 2024)
        var frames: [[RecordedEvent]] = []
        for k in 0..<4 {
            var events = Samples.everyKind(from: UInt64(k) * 1_000_000)
            for j in 0..<20 {
                let t = UInt64(k) * 1_000_000 + 100 + UInt64(j) * 10_000
                events.append(RecordedEvent(time: t, .sensorSample(.imu, time: Samples.wall, transactions: Samples.imu([Int16(j), 2, 3, 4, 5, 6]))))
            }
            frames.append(events)
        }
        let original = recordingFile(frames).bytes
        var outcomes = [0, 0, 0, 0] // read whole, damaged tail, corrupt, refused at the header
        for round in 0..<3_000 {
            var bytes = original
            let kind = round % 6
            switch kind {
            case 0, 1: // a few bytes changed, the CRCs left (caught by them) or made right (reaching the decoder)
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    bytes[Int.random(in: 16..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                if kind == 1 { refreshCRCs(&bytes) }
            case 2:
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            case 3:
                let at = Int.random(in: 0...bytes.count, using: &rng)
                bytes.insert(contentsOf: (0..<Int.random(in: 1...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: at)
                if Bool.random(using: &rng) { refreshCRCs(&bytes) }
            case 4: // a run of bytes copied from elsewhere in the file, CRCs made right
                let from = Int.random(in: 16..<bytes.count, using: &rng), to = Int.random(in: 16..<bytes.count, using: &rng)
                let n = min(Int.random(in: 1...32, using: &rng), bytes.count - max(from, to))
                for k in 0..<n { bytes[to + k] = bytes[from + k] }
                refreshCRCs(&bytes)
            default: // garbage after a good header
                bytes = RecordingFormat.header + (0..<Int.random(in: 0...2_000, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if Bool.random(using: &rng) { bytes += handmadeFrame((0..<40).map { _ in UInt8.random(in: 0...255, using: &rng) }, count: 3) }
            }
            do {
                let (events, tail) = try readAll(bytes)
                XCTAssertLessThanOrEqual(events.count, bytes.count)
                if let tail {
                    XCTAssertEqual(tail.offset + tail.bytes, bytes.count)
                    outcomes[1] += 1
                } else {
                    outcomes[0] += 1
                }
            } catch let e as RecordingError {
                switch e {
                case .corrupt(let offset, _):
                    XCTAssertTrue(offset == 0 || offset >= 16 && offset < bytes.count, "\(e)")
                    outcomes[offset == 0 ? 3 : 2] += 1
                case .notARecording, .newerVersion:
                    outcomes[3] += 1
                }
            }
        }
        // Every outcome is reached, so the mutations test what they mean to.
        XCTAssertTrue(outcomes.allSatisfy { $0 > 0 }, "\(outcomes)")
    }
}
