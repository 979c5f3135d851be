import BearingMQTT
import BearingDaemon
import FuzzChecks
import TestSupport
import XCTest

/// Replays the spool line reader's fuzzing corpus (Fuzz/corpus/spool, grown by `scripts/fuzz spool`; it may be
/// empty) and the hand-written seeds (Fuzz/seeds/spool, not) through the fuzz target's checks, without
/// libFuzzer: no crash, every record re-encodes to its line's bytes, offsets follow on, faults are the parser's,
/// and reading a read-ahead at a time gives the same lines, with the CRCs as found and made right (SpoolCheck).
final class SpoolFuzzCorpusTests: XCTestCase {
    func testSpoolCorpusAndSeedsReplay() throws {
        try FuzzCorpus.replay(target: "spool", check: SpoolCheck.failure)
    }

    /// The checks can fail: a reader that took a number out of range, or one that re-encodes otherwise, is caught.
    func testTheChecksCatchWhatTheyAreFor() {
        let good = SpoolRecord(seq: 7, topic: "t", payload: "{}").line
        XCTAssertNil(SpoolCheck.failure(good + good))
        XCTAssertNil(SpoolCheck.failure(Array("7\tt\t{}\tdeadbeef\n00".utf8)))
        // Made right, "007" must not read back as 7.
        XCTAssertEqual(SpoolCheck.withCRCsMadeRight(Array("007\tt\t{}\tx\nab".utf8)),
                       Array("007\tt\t{}\t\(CRC32.hex(CRC32.checksum(Array("007\tt\t{}".utf8))))\nab".utf8))
    }
}

/// The segment line reader (`SpoolLines`) and the record parser's bounds, as `MessageSpool` uses them.
final class SpoolLinesTests: XCTestCase {
    func line(_ seq: String, _ payload: String = "{}") -> [UInt8] {
        let body = Array("\(seq)\tt\t\(payload)".utf8)
        return body + Array("\t\(CRC32.hex(CRC32.checksum(body)))\n".utf8)
    }

    /// A number with a right CRC but past the bound (2^64−1 crashed the spool) is a fault, not a record.
    func testNumbersOutOfRangeOrNotWrittenAsOursAreFaults() {
        for s in ["18446744073709551615", "18446744073709551614", "9223372036854775807", "9007199254740992", "99999999999999999999999", "0"] {
            XCTAssertEqual(SpoolRecord.parse(line(s).dropLast()), .failure(.range(s)), s)
        }
        for s in ["007", "+8", "-9", "", " 1", "1e3"] {
            XCTAssertEqual(SpoolRecord.parse(line(s).dropLast()), .failure(.sequence(s)), s)
        }
        XCTAssertEqual(try SpoolRecord.parse(line("9007199254740991").dropLast()).get().seq, SpoolRecord.maxSeq)
        var bad = Array("1\tt\t".utf8) + [0xC3, 0x28]
        bad += Array("\t\(CRC32.hex(CRC32.checksum(bad)))".utf8)
        XCTAssertEqual(SpoolRecord.parse(bad), .failure(.encoding))
        XCTAssertEqual(SpoolRecord.Fault.range("18446744073709551615").description, "sequence number \"18446744073709551615\" is out of range (1 to 9007199254740991)")
        XCTAssertEqual(SpoolRecord.Fault.sequence("\u{1b}[31m").description, #"sequence number "\u{1B}[31m" is not a number (decimal digits, no leading zero)"#)
    }

    func testLinesComeWithTheirOffsetsOrderAndTheCutShortEnd() {
        let a = line("1"), b = line("3"), c = line("2"), d = line("18446744073709551615")
        let bytes = a + b + c + d + Array("4\tt".utf8)
        var reader = SpoolLines(bytes)
        let lines = Array(IteratorSequence(reader))
        XCTAssertEqual(lines.map(\.offset), [0, a.count, a.count + b.count, a.count + b.count + c.count, bytes.count - 3])
        XCTAssertEqual(lines.map(\.number), [1, 2, 3, 4, 5])
        XCTAssertEqual(lines[0].outcome, .success(SpoolRecord(seq: 1, topic: "t", payload: "{}")))
        XCTAssertEqual(lines[2].outcome, .failure(.order(2, after: 3)))
        XCTAssertEqual(lines[3].outcome, .failure(.range("18446744073709551615")))
        XCTAssertEqual(lines[4].outcome, .failure(.unterminated))
        XCTAssertEqual(lines[4].length, 3)
        while reader.next() != nil {}
        XCTAssertEqual(reader.end, bytes.count)
        XCTAssertEqual(reader.previous, 3)
        // From an offset in a slice, after a number read before.
        let slice = ([0x2e] + a + b)[1...]
        let more = Array(IteratorSequence(SpoolLines(slice, offset: 100, after: 2)))
        XCTAssertEqual(more.map(\.offset), [100, 100 + a.count])
        XCTAssertEqual(more.map(\.outcome), [.failure(.order(1, after: 2)), .success(SpoolRecord(seq: 3, topic: "t", payload: "{}"))])
    }
}
