import BearingCore
import BearingPOSIX
import Foundation
import TestSupport
import XCTest

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

    /// Reopened without `saveState` (as after kill -9): nothing is lost, numbers go on, acknowledged
    /// messages since the last save come again (duplicates, never a gap).
    func testReopenedAfterACrashNothingIsLostAndNumbersGoOn() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<5 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 2)
            try s.saveState()
            for _ in 0..<5 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 4) // not saved
        }
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertEqual(s.take(100).map(\.seq), Array(3...10))
        XCTAssertEqual(s.nextSeq, 11)
        XCTAssertEqual(try s.append(topic: "t", payload: payload), 11)
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

    func testAStateFileThatIsNotOursIsNamedAndEverythingSpooledIsSentAgain() throws {
        do {
            let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
            for _ in 0..<3 { try s.append(topic: "t", payload: payload) }
            s.acknowledge(through: 2)
            try s.saveState()
        }
        try "acked two\n".write(to: dir.appendingPathComponent("state"), atomically: true, encoding: .utf8)
        let s = try MessageSpool(directory: dir.path, maxBytes: 1 << 20)
        XCTAssertTrue(s.takeNotes().contains { $0.contains("/state: line \"acked two\" is not KEY NUMBER") })
        XCTAssertEqual(s.take(10).map(\.seq), [1, 2, 3], "acknowledged or not, everything still spooled is sent again")
    }

    func testAnUnwritableDirectoryIsAnErrorThatNamesIt() throws {
        let file = dir.appendingPathComponent("plain")
        try Data().write(to: file)
        XCTAssertThrowsError(try MessageSpool(directory: file.path + "/spool", maxBytes: 1 << 20)) { error in
            XCTAssertTrue("\(error)".contains(file.path), "\(error)")
        }
    }
}
