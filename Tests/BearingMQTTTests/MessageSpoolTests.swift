import BearingModel
import BearingPOSIX
import BearingMQTT
import BearingDaemon
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The spool on real files: order, acknowledgement, the bound, reopening after a crash, bad files.
final class MessageSpoolTests: XCTestCase {
    var dir: URL!

    override func setUp() { dir = temporaryDirectory("spool") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func payload(_ seq: UInt64) -> String { #"{"class":"ATT","seq":\#(seq),"heading":\#(seq % 360),"pitch":1.25,"roll":-3.5}"# }

    func testMessagesComeOutInOrderAndAcknowledgedOnesAreNotSentAgain() throws {
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        for _ in 0..<10 { try s.append(topic: "t/att", payload: payload) }
        XCTAssertEqual(s.take(4).map(\.seq), [1, 2, 3, 4])
        XCTAssertEqual(s.take(100).map(\.seq), Array(5...10))
        XCTAssertEqual(s.take(5), [])
        s.acknowledge(through: 6)
        XCTAssertEqual(s.pending, 4)
        s.rewind()
        XCTAssertEqual(s.take(100).map(\.seq), [7, 8, 9, 10], "after a reconnect: what is unacknowledged, again")
        try s.append(topic: "t/att", payload: payload)
        XCTAssertEqual(s.take(100).map(\.seq), [11])
        XCTAssertEqual(s.take(1).first?.payload, nil)
        s.rewind()
        XCTAssertEqual(s.take(100).first?.payload, payload(7))
    }

    /// Reopened without `saveState` or `close` (as after kill -9): nothing is lost, numbers go on, and
    /// nothing acknowledged comes again (the mark was written through to `acked`).
    func testReopenedAfterACrashNothingIsLostNumbersGoOnAndNothingAcknowledgedComesAgain() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<5 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 2)
            try s.saveState()
            for _ in 0..<5 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 4) // not saved
        }
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.takeNotes(), [])
        XCTAssertEqual(s.acknowledged, 4)
        XCTAssertEqual(s.take(100).map(\.seq), Array(5...10))
        XCTAssertEqual(s.pending, 6)
        XCTAssertEqual(s.nextSeq, 11)
        XCTAssertEqual(try s.append(topic: "t", payload: payload), 11)
    }

    /// The door's pattern across segments: a window in flight, each acknowledgement moving the mark, the
    /// state saved only now and then; dropped without saving or closing, then reopened: only what was in
    /// flight comes again.
    func testAfterACrashOnlyWhatWasInFlightComesAgain() throws {
        var acked: UInt64 = 0
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10) // segments of 8 KiB
            var inFlight: [UInt64] = []
            for n in 0..<500 {
                try s.append(topic: "t", payload: payload)
                inFlight += s.take(32 - inFlight.count).map(\.seq)
                if inFlight.count == 32 {
                    s.acknowledge(through: inFlight.removeFirst())
                }
                if n == 100 { try s.saveState() }
            }
            acked = s.acknowledged
            XCTAssertEqual(acked, 500 - 31)
        }
        let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10)
        XCTAssertEqual(s.acknowledged, acked)
        XCTAssertEqual(s.take(1000).map(\.seq), Array(acked + 1...500), "the window, and nothing acknowledged")
        XCTAssertEqual(s.pending, 31)
        XCTAssertEqual(s.dropped, 0)
    }

    /// A torn or foreign `acked` record is ignored, named in a note, and replaced: the mark falls back on
    /// `state` (what was acknowledged after it was saved comes again; nothing is lost).
    func testABadAckedRecordIsNamedIgnoredAndStateIsTheFallback() throws {
        let acked = dir.appendingPathComponent("acked")
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<10 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 3)
            try s.saveState()
            s.acknowledge(through: 8)
        }
        let good = try Data(contentsOf: acked)
        XCTAssertEqual(good.count, 192)
        XCTAssertEqual(String(decoding: good.prefix(26), as: UTF8.self), "acked 00000000000000000008")
        var flipped = good
        flipped[25] = UInt8(ascii: "9") // 9, with 8's CRC
        var torn = good
        torn.replaceSubrange(12..<192, with: Data(repeating: 0, count: 180))
        let old = Array("00000000000000000008".utf8)
        var oldFlipped = old + Array("\t\(CRC32.hex(CRC32.checksum(old)))\n".utf8)
        oldFlipped[19] = UInt8(ascii: "9")
        let cases: [(String, Data, String)] = [
            ("a digit changed", flipped, "does not match the record's"),
            ("zeros from a power cut", Data(repeating: 0, count: 192), "not a record"),
            ("torn", torn, "not a record"),
            ("cut short", good.prefix(17), "17 bytes, not a record of 192 (or of 30, the old form)"),
            ("foreign", Data("acked 8\n".utf8), "8 bytes, not a record of 192"),
            ("old form, a digit changed", Data(oldFlipped), "does not match the record's"),
            ("old form, zeros", Data(repeating: 0, count: 30), "not a record"),
        ]
        for (name, bytes, why) in cases {
            try bytes.write(to: acked)
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            let notes = s.takeNotes()
            XCTAssertTrue(notes.contains { $0.hasPrefix("\(acked.path): ") && $0.contains(why) && $0.contains("ignored") }, "\(name): \(notes)")
            XCTAssertEqual(s.acknowledged, 3, name)
            XCTAssertEqual(s.take(100).map(\.seq), Array(4...10), "\(name): state's mark: duplicates, no loss")
            XCTAssertEqual(try Data(contentsOf: acked).prefix(26), Data("acked 00000000000000000003".utf8), "\(name): replaced at once")
        }
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.takeNotes(), [], "the record was replaced")
        XCTAssertEqual(s.acknowledged, 3)
    }

    /// A valid record past the last number in the spool (its lines lost to a power cut that wrote `acked`
    /// first, or a file from elsewhere): numbering goes on after the mark, so no number is given twice.
    func testAnAckedMarkPastTheLastNumberInTheSpoolMovesTheNumberingOn() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<5 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 2)
        }
        // The old form of the record (the mark alone), as the last release wrote it.
        let digits = Array("00000000000000000009".utf8)
        try Data(digits + Array("\t\(CRC32.hex(CRC32.checksum(digits)))\n".utf8)).write(to: dir.appendingPathComponent("acked"))
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertTrue(s.takeNotes().contains { $0.contains("/acked: acknowledged mark 9 is past the last number in the spool (5); numbering goes on at 10") })
        XCTAssertEqual(s.acknowledged, 9)
        XCTAssertEqual(s.take(10), [])
        XCTAssertEqual(try s.append(topic: "t", payload: payload), 10)
    }

    /// `acked` cannot be written (a full disk): said once, messages and numbers unharmed, the fallback is
    /// `state`; written through again once it can be.
    func testAFailingWriteThroughIsNotedOnceAndLosesNothing() throws {
        let spoolDir = dir.appendingPathComponent("spool")
        let unmount = try mountTmpfs(spoolDir, size: "64k")
        defer { unmount() }
        let acked = spoolDir.appendingPathComponent("acked")
        do {
            let s = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
            for _ in 0..<10 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 2)
            try s.saveState()
            XCTAssertEqual(truncate(acked.path, 0), 0) // frees its page: the next pwrite needs a new one
            try fill(spoolDir.appendingPathComponent("filler"))
            s.acknowledge(through: 4)
            s.acknowledge(through: 6)
            let notes = s.takeNotes()
            XCTAssertEqual(notes.count, 1, "\(notes)")
            XCTAssertTrue(notes.first?.contains("cannot write the acknowledged mark through: pwrite(\(acked.path)): No space left on device") ?? false, "\(notes)")
            XCTAssertEqual(s.acknowledged, 6)
            XCTAssertEqual(s.take(100).map(\.seq), Array(7...10))
        }
        // Crashed meanwhile: state's mark, and nothing lost.
        var s: MessageSpool? = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s?.acknowledged, 2)
        XCTAssertEqual(s?.take(100).map(\.seq), Array(3...10))
        XCTAssertTrue(s?.takeNotes().contains { $0.contains("cannot write the acknowledged mark through") } ?? false, "the replacement at opening fails too")
        try FileManager.default.removeItem(at: spoolDir.appendingPathComponent("filler"))
        s?.acknowledge(through: 7)
        XCTAssertEqual(s?.takeNotes(), ["\(acked.path): the acknowledged mark is written through again"])
        s = nil
        s = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s?.acknowledged, 7)
        XCTAssertEqual(s?.take(100).map(\.seq), Array(8...10))
    }

    func testPastTheBoundTheOldestSegmentGoesAndItsUnacknowledgedMessagesAreCounted() throws {
        let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10) // segments of 8 KiB
        for _ in 0..<600 { try s.append(topic: "bearing/dev/att", payload: payload) } // ~40 KB per 600? no: ~100 B each → 60 KB
        XCTAssertEqual(s.dropped, 0)
        for _ in 0..<400 { try s.append(topic: "bearing/dev/att", payload: payload) }
        XCTAssertGreaterThan(s.dropped, 0)
        XCTAssertLessThanOrEqual(s.bytes, 64 << 10)
        let left = s.take(10_000).map(\.seq)
        XCTAssertEqual(UInt64(left.count) + s.dropped, 1000, "every number is either still here or counted")
        XCTAssertEqual(left.first, s.dropped + 1, "the oldest went")
        XCTAssertEqual(left.last, 1000)
        XCTAssertEqual(s.droppedPastBound, s.dropped)
    }

    func testAPartlyAcknowledgedSegmentDroppedPastTheBoundCountsOnlyWhatWasNotAcknowledged() throws {
        let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10)
        for _ in 0..<50 { try s.append(topic: "t", payload: payload) }
        s.acknowledge(through: 20)
        for _ in 0..<1000 { try s.append(topic: "t", payload: payload) }
        let left = s.take(10_000).map(\.seq)
        XCTAssertEqual(UInt64(left.count) + s.dropped + 20, 1050)
    }

    /// Messages handed to the broker and not acknowledged when the connection died may or may not have reached
    /// it: dropped past the bound, they are counted as unconfirmed, not as dropped, and both counts survive a
    /// restart.
    func testInFlightMessagesDroppedPastTheBoundAreUnconfirmedNotDropped() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10)
            for _ in 0..<50 { try s.append(topic: "t", payload: payload) }
            XCTAssertEqual(s.take(40).map(\.seq), Array(1...40))
            s.markSent(through: 40)
            s.acknowledge(through: 8) // 9…40 in flight when the link goes
            for _ in 0..<1000 { try s.append(topic: "t", payload: payload) }
            XCTAssertEqual(s.unconfirmed, 32, "9…40: sent, never acknowledged")
            let left = UInt64(s.take(10_000).count)
            XCTAssertEqual(left + s.dropped + s.unconfirmed + 8, 1050, "every number: acknowledged, still here, dropped or unconfirmed")
            try s.saveState()
        }
        let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10)
        XCTAssertEqual(s.unconfirmed, 32)
        XCTAssertGreaterThan(s.dropped, 0)
    }

    /// A `state` whose numbers are out of any spool's range is damaged: named and ignored, not a crash.
    func testAStateWithNumbersOutOfRangeIsNamedAndIgnored() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try "acked 18446744073709551615\nnext 1\n".write(to: dir.appendingPathComponent("state"), atomically: true, encoding: .utf8)
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertTrue(s.takeNotes().contains { $0.contains("/state: acked 18446744073709551615 is out of range") })
        XCTAssertEqual(try s.append(topic: "t", payload: payload), 1)
    }

    func testACutLastLineIsCutOffAndABadSegmentIsSetAsideWithItsNumbersNotGivenAgain() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10)
            for _ in 0..<300 { try s.append(topic: "t", payload: payload) } // 3 segments of 8 KiB
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".spool") }.sorted()
        XCTAssertGreaterThan(segments.count, 2)
        // The newest: a line cut short (power cut). The first: a flipped byte in the middle.
        let newest = dir.appendingPathComponent(segments.last!)
        let h = try FileHandle(forWritingTo: newest)
        try h.seekToEnd()
        try h.write(contentsOf: Data("301\tt\t{\"class\":".utf8))
        try h.close()
        let first = dir.appendingPathComponent(segments[0])
        var bytes = try Data(contentsOf: first)
        bytes[bytes.count / 2] ^= 0x20
        try bytes.write(to: first)

        let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10)
        let notes = s.takeNotes()
        XCTAssertTrue(notes.contains { $0.hasPrefix("\(first.path): line ") && $0.contains("set aside as \(first.path).corrupt") }, "\(notes)")
        XCTAssertTrue(notes.contains { $0.hasPrefix("\(newest.path) line ") && $0.contains("cut short") }, "\(notes)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: first.path + ".corrupt"))
        let left = s.take(10_000).map(\.seq)
        XCTAssertEqual(left.last, 300)
        XCTAssertEqual(UInt64(left.count) + s.dropped, 300, "the set-aside file's messages are counted as dropped")
        XCTAssertEqual(s.nextSeq, 301)
        XCTAssertEqual(String(decoding: try Data(contentsOf: newest).suffix(1), as: UTF8.self), "\n", "the cut line is gone")
    }

    func testAStateFileThatIsNotOursIsNamedAndEverythingSpooledNotMarkedAcknowledgedIsSentAgain() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<3 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 2)
            try s.saveState()
        }
        try "acked two\n".write(to: dir.appendingPathComponent("state"), atomically: true, encoding: .utf8)
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            XCTAssertTrue(s.takeNotes().contains { $0.contains("/state: line \"acked two\" is not KEY NUMBER") })
            XCTAssertEqual(s.take(10).map(\.seq), [3], "acked still marks 2")
        }
        try FileManager.default.removeItem(at: dir.appendingPathComponent("acked"))
        try "acked two\n".write(to: dir.appendingPathComponent("state"), atomically: true, encoding: .utf8)
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertTrue(s.takeNotes().contains { $0.contains("/state: line \"acked two\" is not KEY NUMBER") })
        XCTAssertEqual(s.take(10).map(\.seq), [1, 2, 3], "acknowledged or not, everything still spooled is sent again")
    }

    /// Taken in small batches as the door does (acknowledging behind a window, rewinding now and then) while
    /// messages come in and acknowledged segments are deleted: every message comes out once, in order, and
    /// after a rewind exactly what is unacknowledged comes again. One descriptor reads the segment the cursor
    /// is in; none is left on a deleted file, and none at all after `close()`.
    func testTakeAcrossSegmentsAsTheyAreDeletedGivesEveryMessageOnceInOrder() throws {
        let s = try MessageSpool(directory: dir.path, maxBytes: 64 << 10) // segments of 8 KiB, ~80 messages
        var taken: [UInt64] = []
        var inFlight: [UInt64] = []
        var deletedSegments = 0
        for round in 0..<400 {
            for _ in 0..<(round % 5) { try s.append(topic: "t/att", payload: payload) }
            if round % 97 == 96 {
                s.rewind()
                inFlight = []
                let again = s.take(3).map(\.seq)
                XCTAssertEqual(again, Array(s.acknowledged + 1..<s.acknowledged + 1 + UInt64(again.count)), "round \(round): after a rewind")
                inFlight = again
                taken = taken.filter { $0 <= s.acknowledged } + again
                continue
            }
            let batch = s.take(1 + round % 4).map(\.seq)
            let expected = (taken.last ?? 0) + 1
            XCTAssertEqual(batch, Array(expected..<expected + UInt64(batch.count)), "round \(round)")
            XCTAssertEqual(UInt64(batch.count), min(UInt64(1 + round % 4), s.nextSeq - expected), "round \(round): all there is, up to the limit")
            taken += batch
            inFlight += batch
            if inFlight.count > 8 {
                let before = spoolFiles().count
                s.acknowledge(through: inFlight[inFlight.count - 9])
                inFlight.removeFirst(inFlight.count - 8)
                deletedSegments += max(0, before - spoolFiles().count)
            }
            let open = openFiles(under: dir.path)
            XCTAssertFalse(open.contains { $0.hasSuffix("(deleted)") }, "round \(round): \(open)")
            XCTAssertLessThanOrEqual(open.filter { $0.hasSuffix(".spool") }.count, 2, "round \(round): the file appended to and the one read: \(open)")
        }
        let rest = s.take(10_000).map(\.seq)
        taken += rest
        XCTAssertEqual(taken, Array(1...s.nextSeq - 1), "every message, once, in order")
        XCTAssertGreaterThan(deletedSegments, 5, "segments were deleted under the cursor")
        XCTAssertEqual(s.dropped, 0)
        XCTAssertEqual(s.pending, UInt64(inFlight.count + rest.count))

        // The cursor in an older segment than the one appended to: that segment is held open between takes.
        for _ in 0..<200 { try s.append(topic: "t/att", payload: payload) }
        s.rewind()
        XCTAssertEqual(s.take(1).first?.seq, s.acknowledged + 1)
        let oldest = try XCTUnwrap(spoolFiles().first)
        XCTAssertEqual(openFiles(under: dir.path).filter { $0 == dir.appendingPathComponent(oldest).path }.count, 1, "\(openFiles(under: dir.path))")
        XCTAssertEqual(s.take(1).first?.seq, s.acknowledged + 2)
        s.close()
        XCTAssertEqual(openFiles(under: dir.path), [])
        XCTAssertEqual(s.take(1).first?.seq, s.acknowledged + 3, "opened again after close()")
    }

    /// The spool's segment files, oldest first.
    func spoolFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".spool") }.sorted()
    }

    /// What this process's descriptors point at under `path`.
    func openFiles(under path: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }.filter { $0.hasPrefix(path + "/") }
    }

    /// A failed write spends a number without a line in the middle of a segment: `pending` counts lines,
    /// before and after reopening.
    func testPendingIsExactWhenAFailedWriteLeftAGapInASegment() throws {
        let spoolDir = dir.appendingPathComponent("spool")
        let unmount = try mountTmpfs(spoolDir, size: "64k")
        defer { unmount() }
        var s: MessageSpool? = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20) // one 128 KiB segment
        var written: [UInt64] = []
        for _ in 0..<10 { written.append(try XCTUnwrap(s).append(topic: "t", payload: payload)) }
        try fill(spoolDir.appendingPathComponent("filler"))
        // The segment's last page takes a few more, then writes fail: three numbers spent without a line.
        var failures = 0
        while failures < 3 {
            do { written.append(try XCTUnwrap(s).append(topic: "t", payload: payload)) } catch { failures += 1 }
            XCTAssertLessThan(written.count, 200, "the tmpfs should be full")
        }
        try FileManager.default.removeItem(at: spoolDir.appendingPathComponent("filler"))
        for _ in 0..<10 { written.append(try XCTUnwrap(s).append(topic: "t", payload: payload)) }
        let gap = try XCTUnwrap(zip(written, written.dropFirst()).first { $0.1 != $0.0 + 1 })
        XCTAssertEqual(gap.1 - gap.0, 4, "three numbers without a line: \(written)")
        XCTAssertEqual(try XCTUnwrap(s).dropped, 3)

        s?.acknowledge(through: gap.0 + 1) // a number without a line
        XCTAssertEqual(s?.pending, UInt64(written.filter { $0 > gap.0 }.count))
        let mark = gap.1 + 2 // past the gap, in the same segment
        s?.acknowledge(through: mark)
        let unacknowledged = written.filter { $0 > mark }
        XCTAssertEqual(s?.pending, UInt64(unacknowledged.count))
        XCTAssertEqual(s?.take(1000).map(\.seq), unacknowledged)
        try XCTUnwrap(s).saveState()
        s = nil
        let reopened = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
        XCTAssertEqual(reopened.pending, UInt64(unacknowledged.count), "the gap found again by reading the segment")
        XCTAssertEqual(reopened.take(1000).map(\.seq), unacknowledged)
        reopened.acknowledge(through: written[written.count - 2])
        XCTAssertEqual(reopened.pending, 1)
    }

    /// Writes `file` until its file system is full.
    func fill(_ file: URL) throws {
        let fd = open(file.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        let page = [UInt8](repeating: 0x2e, count: 4096)
        while page.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    // MARK: Numbers read from disk (issue 26)

    /// Appends `line` to the newest segment of the spool in `dir`.
    func appendToNewestSegment(_ line: [UInt8], in dir: URL) throws {
        let newest = try XCTUnwrap(((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".spool") }.sorted().last)
        let h = try FileHandle(forWritingTo: dir.appendingPathComponent(newest))
        try h.seekToEnd()
        try h.write(contentsOf: Data(line))
        try h.close()
    }

    /// A segment line whose CRC is right but whose number is past any spool's (2^64−1 crashed the daemon at
    /// every start, 2^64−2 at the first append): the segment is named and set aside like a corrupt one, and
    /// numbering goes on after the good lines.
    func testASegmentLineWithANumberOutOfRangeIsSetAsideNotACrash() throws {
        for huge: UInt64 in [.max, .max - 1, UInt64(Int64.max), SpoolRecord.maxSeq + 1] {
            let d = dir.appendingPathComponent("\(huge)")
            do {
                let s = try MessageSpool(directory: d.path, maxBytes: 1 << 20)
                for _ in 0..<5 { try s.append(topic: "t", payload: payload) }
                s.acknowledge(through: 2)
            }
            try appendToNewestSegment(SpoolRecord(seq: huge, topic: "t", payload: payload(huge)).line, in: d)
            let s = try MessageSpool(directory: d.path, maxBytes: 1 << 20)
            let notes = s.takeNotes()
            XCTAssertTrue(notes.contains { $0.contains("00000000000000000001.spool: line 6: sequence number \"\(huge)\" is out of range") && $0.contains("set aside as") }, "\(huge): \(notes)")
            XCTAssertEqual(s.dropped, 3, "\(huge): the set-aside file's unacknowledged messages (3…5) are counted")
            XCTAssertEqual(s.nextSeq, 6, "\(huge)")
            XCTAssertEqual(try s.append(topic: "t", payload: payload), 6, "\(huge)")
            XCTAssertEqual(try s.append(topic: "t", payload: payload), 7, "\(huge)")
            XCTAssertEqual(s.take(10).map(\.seq), [6, 7], "\(huge)")
        }
    }

    /// A segment file whose name's number is out of range is set aside too (one rule for every number read).
    func testASegmentNamedWithANumberOutOfRangeIsSetAside() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<3 { try s.append(topic: "t", payload: payload) }
        }
        for name in ["18446744073709551615.spool", "99999999999999999999.spool"] {
            try Data(SpoolRecord(seq: 4, topic: "t", payload: payload(4)).line).write(to: dir.appendingPathComponent(name))
        }
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        let notes = s.takeNotes()
        for name in ["18446744073709551615.spool", "99999999999999999999.spool"] {
            XCTAssertTrue(notes.contains { $0.hasPrefix(dir.appendingPathComponent(name).path + ": ") && $0.contains("out of range") && $0.contains("set aside") }, "\(name): \(notes)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path + ".corrupt"), name)
        }
        XCTAssertEqual(s.take(10).map(\.seq), [1, 2, 3])
        XCTAssertEqual(try s.append(topic: "t", payload: payload), 5, "4, read in a file set aside, is not given again")
    }

    /// `acked` in its old form (30 bytes) with a number past the bound: named and ignored, not a crash at the
    /// first append (2^64−2 made the next number 2^64−1, and the one after overflowed).
    func testAnAckedMarkOutOfRangeIsNamedAndIgnored() throws {
        for huge: UInt64 in [.max - 1, UInt64(Int64.max), SpoolRecord.maxSeq + 1] {
            let d = dir.appendingPathComponent("\(huge)")
            do {
                let s = try MessageSpool(directory: d.path, maxBytes: 1 << 20)
                for _ in 0..<3 { try s.append(topic: "t", payload: payload) }
                try s.saveState()
            }
            let digits = Array(String(huge).utf8)
            let padded = [UInt8](repeating: UInt8(ascii: "0"), count: 20 - digits.count) + digits
            try Data(padded + Array("\t\(CRC32.hex(CRC32.checksum(padded)))\n".utf8)).write(to: d.appendingPathComponent("acked"))
            let s = try MessageSpool(directory: d.path, maxBytes: 1 << 20)
            let notes = s.takeNotes()
            XCTAssertTrue(notes.contains { $0.hasPrefix(d.appendingPathComponent("acked").path + ": ") && $0.contains("out of range") && $0.contains("ignored") }, "\(huge): \(notes)")
            XCTAssertEqual(s.acknowledged, 0, "\(huge)")
            XCTAssertEqual(try s.append(topic: "t", payload: payload), 4, "\(huge)")
            XCTAssertEqual(try s.append(topic: "t", payload: payload), 5, "\(huge)")
        }
    }

    /// At the bound the numbers are used up: appending is an error that says so, not an overflow, and no number
    /// past the bound is given.
    func testNumbersStopAtTheBoundWithAnError() throws {
        try "acked 0\nnext \(SpoolRecord.maxSeq)\n".write(to: dir.appendingPathComponent("state"), atomically: true, encoding: .utf8)
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.takeNotes(), [])
        XCTAssertEqual(try s.append(topic: "t", payload: payload), SpoolRecord.maxSeq)
        XCTAssertThrowsError(try s.append(topic: "t", payload: payload)) { error in
            XCTAssertTrue("\(error)".contains("used up"), "\(error)")
        }
        XCTAssertEqual(s.nextSeq, SpoolRecord.maxSeq + 1)
        XCTAssertEqual(s.take(10).map(\.seq), [SpoolRecord.maxSeq])
        s.acknowledge(through: .max)
        XCTAssertEqual(s.acknowledged, SpoolRecord.maxSeq)
    }

    /// A restart while the disk is full: `state` cannot be saved, yet no number is given twice, and the drops
    /// counted before it (which SPOOL publishes) are still counted after it.
    func testARestartWhileTheDiskIsFullGivesNoNumberTwiceAndKeepsTheCounts() throws {
        let spoolDir = dir.appendingPathComponent("spool")
        let unmount = try mountTmpfs(spoolDir, size: "64k")
        defer { unmount() }
        var s: MessageSpool? = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
        for _ in 0..<10 { try XCTUnwrap(s).append(topic: "t", payload: payload) }
        s?.acknowledge(through: 2)
        try XCTUnwrap(s).saveState()
        try fill(spoolDir.appendingPathComponent("filler"))
        var written: [UInt64] = []
        var failures = 0
        while failures < 3 {
            do { written.append(try XCTUnwrap(s).append(topic: "t", payload: payload)) } catch { failures += 1 }
            XCTAssertLessThan(written.count, 200, "the tmpfs should be full")
        }
        let spent = try XCTUnwrap(s).nextSeq - 1
        XCTAssertEqual(s?.dropped, 3)
        XCTAssertThrowsError(try XCTUnwrap(s).saveState(), "no room for a new state")
        s = nil // stopped (or killed) with the disk still full

        for round in 1...2 {
            s = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
            XCTAssertEqual(s?.nextSeq, spent + 1, "round \(round): no number spent before is given again")
            XCTAssertEqual(s?.dropped, 3, "round \(round): the drops before the restart are still counted")
            XCTAssertEqual(s?.take(100).map(\.seq), Array(3...10) + written, "round \(round)")
            s = nil
        }
        s = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
        XCTAssertThrowsError(try XCTUnwrap(s).append(topic: "t", payload: payload), "still full")
        XCTAssertEqual(s?.dropped, 4)
        try FileManager.default.removeItem(at: spoolDir.appendingPathComponent("filler"))
        XCTAssertEqual(try XCTUnwrap(s).append(topic: "t", payload: payload), spent + 2)
        try XCTUnwrap(s).saveState()
        s = nil
        s = try MessageSpool(directory: spoolDir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s?.dropped, 4)
        XCTAssertEqual(s?.nextSeq, spent + 3)
    }

    /// Numbers are reserved ahead of use in `acked`: after a power cut (the record from another boot, not
    /// closed) numbering goes on past the reserved mark, since lines of numbers given may be lost, and the
    /// numbers skipped are counted as dropped (a subscriber's gap and the count agree). A crash in the same boot
    /// (the page cache kept everything) or a clean stop skips none.
    func testAfterAPowerCutNumberingGoesOnPastTheReservedNumbers() throws {
        let acked = dir.appendingPathComponent("acked")
        var record = Data()
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<10 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 4)
            record = try Data(contentsOf: acked) // as a power cut would leave it: not closed
        }
        let text = String(decoding: record, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("acked 00000000000000000004 next 00000000000000000011 reserved 00000000000000001024 dropped 00000000000000000000 unconfirmed 00000000000000000000 boot "), text)
        let reopened = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(reopened.takeNotes(), [])
        XCTAssertEqual(reopened.nextSeq, 11, "closed: nothing reserved is skipped")
        reopened.close()

        // The same record in this boot (a kill -9): its `next` is exact.
        try record.write(to: acked)
        var s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.takeNotes(), [])
        XCTAssertEqual(s.nextSeq, 11)
        XCTAssertEqual(s.dropped, 0)
        s.close()

        // From another boot: a power cut.
        var body = Array(record.prefix(182))
        body.replaceSubrange(150..<182, with: Array("0123456789abcdef0123456789abcdef".utf8))
        try Data(body + Array("\t\(CRC32.hex(CRC32.checksum(body)))\n".utf8)).write(to: acked)
        s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        let notes = s.takeNotes()
        XCTAssertTrue(notes.contains { $0.hasPrefix(acked.path + ": numbers 11…1024 were reserved") && $0.contains("numbering goes on at 1025") }, "\(notes)")
        XCTAssertEqual(s.nextSeq, 1025)
        XCTAssertEqual(s.dropped, 1014)
        XCTAssertEqual(s.take(100).map(\.seq), Array(5...10))
        XCTAssertEqual(try s.append(topic: "t", payload: payload), 1025)
        try s.saveState()
        s.close()
        s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.takeNotes(), [])
        XCTAssertEqual(s.dropped, 1014, "counted once")
        XCTAssertEqual(s.nextSeq, 1026)
    }

    /// The files the last release wrote (`acked` of 30 bytes, `state` without `reserved`) are read as they are,
    /// and `acked` is rewritten in the new form.
    func testTheLastReleasesFilesAreRead() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<10 { try s.append(topic: "t", payload: payload) }
        }
        try "acked 3\nnext 11\ndropped 2\nunconfirmed 1\n".write(to: dir.appendingPathComponent("state"), atomically: true, encoding: .utf8)
        let digits = Array("00000000000000000008".utf8)
        try Data(digits + Array("\t\(CRC32.hex(CRC32.checksum(digits)))\n".utf8)).write(to: dir.appendingPathComponent("acked"))
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.takeNotes(), [])
        XCTAssertEqual(s.acknowledged, 8)
        XCTAssertEqual(s.take(100).map(\.seq), [9, 10])
        XCTAssertEqual([s.nextSeq, s.dropped, s.unconfirmed], [11, 2, 1])
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("acked")).count, 192)
    }

    /// `state` of binary garbage is named like text garbage (it was ignored silently, resetting `dropped`);
    /// what a note quotes from the file is escaped.
    func testAStateFileOfBinaryGarbageIsNamedLikeTextGarbage() throws {
        let state = dir.appendingPathComponent("state")
        let cases: [(String, Data, String)] = [
            ("binary", Data([0x00, 0xff, 0xfe, 0x13, 0x88, 0x0a, 0xc3, 0x28, 0x01]), "not text"),
            ("control characters", Data("acked 3\n\u{1b}[31m\u{7}\n".utf8), "is not KEY NUMBER"),
            ("text", Data("acked two\n".utf8), "is not KEY NUMBER"),
            ("too long", Data(repeating: UInt8(ascii: "#"), count: 10_000), "larger than"),
        ]
        for (name, bytes, why) in cases {
            try? FileManager.default.removeItem(at: dir)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try bytes.write(to: state)
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            let notes = s.takeNotes()
            XCTAssertTrue(notes.contains { $0.hasPrefix("\(state.path): ") && $0.contains(why) && $0.contains("ignored") }, "\(name): \(notes)")
            XCTAssertFalse(notes.joined().unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "\(name): a control character in \(notes)")
        }
    }

    func testAnUnwritableDirectoryIsAnErrorThatNamesIt() throws {
        let file = dir.appendingPathComponent("plain")
        try Data().write(to: file)
        XCTAssertThrowsError(try MessageSpool(directory: file.path + "/spool", maxBytes: 1 << 20)) { error in
            XCTAssertTrue("\(error)".contains(file.path), "\(error)")
        }
    }
}
