import BearingModel
import BearingWire
/// One message in the MQTT spool, as one line: `SEQ⇥TOPIC⇥PAYLOAD⇥CRC\n`, CRC being the CRC-32 (IEEE, as
/// zlib's) of everything before its tab, in 8 lowercase hex digits. A line is written with one `write`, so
/// a crash leaves whole lines; the CRC catches what a power cut or a bad card leaves instead.
///
/// SEQ is written as `String(seq)` (decimal, no sign, no leading zero) and is 1 to `maxSeq`; TOPIC and
/// PAYLOAD are UTF-8. A line is a record only when it is exactly what `line` writes for it.
public struct SpoolRecord: Equatable, Sendable {
    /// The device's sequence number, written into the payload by the encoder (`Report.line(seq:)`).
    public var seq: UInt64
    public var topic: String
    /// One line of gpsd JSON: no tab and no newline (JSON escapes them inside strings).
    public var payload: String

    /// The largest sequence number: 2^53 − 1, the largest integer every JSON reader holds exactly (a
    /// subscriber's double), and far from UInt64's end, so that no arithmetic on a number read from disk
    /// overflows. Any number read from the spool's files above it (or 0) is out of range: the file is damaged.
    public static let maxSeq: UInt64 = (1 << 53) - 1

    public init(seq: UInt64, topic: String, payload: String) {
        self.seq = seq
        self.topic = topic
        self.payload = payload
    }

    /// Why a line is not a record.
    public enum Fault: Error, Equatable, Sendable, CustomStringConvertible {
        case fields(Int)
        /// SEQ is not written as a number is (decimal digits, no sign, no leading zero).
        case sequence(String)
        /// SEQ is 0 or past `maxSeq`.
        case range(String)
        /// SEQ is not above the number before it.
        case order(UInt64, after: UInt64)
        /// TOPIC or PAYLOAD is not UTF-8.
        case encoding
        case checksum(expected: String, found: String)
        case unterminated

        public var description: String {
            switch self {
            case .fields(let n): return "\(n) tab-separated fields, not 4 (SEQ, TOPIC, PAYLOAD, CRC)"
            case .sequence(let s): return "sequence number \"\(SpoolRecord.shown(s.prefix(24)))\" is not a number (decimal digits, no leading zero)"
            case .range(let s): return "sequence number \"\(SpoolRecord.shown(s.prefix(24)))\" is out of range (1 to \(SpoolRecord.maxSeq))"
            case .order(let seq, let previous): return "sequence number \(seq) after \(previous)"
            case .encoding: return "the topic or payload is not UTF-8"
            case .checksum(let expected, let found): return "CRC-32 \(SpoolRecord.shown(found.prefix(16))) does not match the line's (\(expected))"
            case .unterminated: return "the line has no newline (cut short)"
            }
        }
    }

    /// The line, newline included.
    public var line: [UInt8] {
        SpoolRecord.line(seq: seq, topic: topic) { $0.append(contentsOf: payload.utf8) }
    }

    /// A record's line, newline included, built as bytes: `payload` appends the payload's (one line of gpsd JSON,
    /// as `Report.appendLine` writes it) to the line's, so the payload is encoded once, into the line itself.
    public static func line(seq: UInt64, topic: String, payload: (inout [UInt8]) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(topic.utf8.count + 400)
        bytes.append(contentsOf: String(seq).utf8)
        bytes.append(UInt8(ascii: "\t"))
        bytes.append(contentsOf: topic.utf8)
        bytes.append(UInt8(ascii: "\t"))
        payload(&bytes)
        let crc = CRC32.checksum(bytes)
        bytes.append(UInt8(ascii: "\t"))
        bytes.append(contentsOf: CRC32.hex(crc).utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// A line without its newline.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<SpoolRecord, Fault> { record(line) }

    /// A line without its newline, as the spool reads it (specialised here, so fast from other modules).
    public static func parse(_ line: ArraySlice<UInt8>) -> Result<SpoolRecord, Fault> { record(line) }

    private static func record<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<SpoolRecord, Fault> {
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
        guard fields.count == 4 else { return .failure(.fields(fields.count)) }
        let body = line.prefix(fields[0].count + fields[1].count + fields[2].count + 3 - 1)
        let expected = CRC32.hex(CRC32.checksum(body))
        let found = String(decoding: fields[3], as: UTF8.self)
        guard found == expected else { return .failure(.checksum(expected: expected, found: String(found.prefix(16)))) }
        let seqText = String(decoding: fields[0], as: UTF8.self)
        let digits = fields[0]
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              digits.first != UInt8(ascii: "0") || digits.count == 1 else { return .failure(.sequence(seqText)) }
        // Digits only: past UInt64 (nil) is out of range too.
        guard let seq = UInt64(seqText), (1...maxSeq).contains(seq) else { return .failure(.range(seqText)) }
        guard let topic = String(validating: fields[1], as: UTF8.self),
              let payload = String(validating: fields[2], as: UTF8.self) else { return .failure(.encoding) }
        return .success(SpoolRecord(seq: seq, topic: topic, payload: payload))
    }

    /// Whether `s` can be a topic or payload in a line (no tab, no newline).
    public static func fits(_ s: String) -> Bool { !s.utf8.contains { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") } }

    /// `s` for a log line: printable ASCII as it is, anything else escaped (`\u{1B}`).
    public static func shown<S: StringProtocol>(_ s: S) -> String {
        s.unicodeScalars.map { (0x20..<0x7F).contains($0.value) && $0 != "\\" ? String($0) : $0.escaped(asASCII: true) }.joined()
    }
}

/// One line of a spool segment as `SpoolLines` reads it.
public struct SpoolLine: Equatable, Sendable {
    /// Where it starts in the segment, and its length without the newline.
    public var offset: Int
    public var length: Int
    /// 1 for the first line read.
    public var number: Int
    /// The record, or why the line is not one (`.unterminated`: the bytes after the last newline).
    public var outcome: Result<SpoolRecord, SpoolRecord.Fault>

    public init(offset: Int, length: Int, number: Int, outcome: Result<SpoolRecord, SpoolRecord.Fault>) {
        self.offset = offset
        self.length = length
        self.number = number
        self.outcome = outcome
    }

    /// The offset just past the line's newline (its end, for the unterminated last one).
    public var end: Int { offset + length + (outcome == .failure(.unterminated) ? 0 : 1) }
}

/// A spool segment's bytes read line by line: each line's record or fault (`SpoolRecord.parse`, and a number
/// not above the one before is `.order`), with its offset in the segment; bytes after the last newline are
/// one `.unterminated` line, the last. Pure: `MessageSpool` reads its files through it, and the fuzz target
/// checks it. (On array slices, not generic, so that it is specialised here and fast from other modules.)
public struct SpoolLines: Sequence, IteratorProtocol {
    private let bytes: ArraySlice<UInt8>
    private var position: Int
    private var offset: Int
    private var number = 0
    /// The last number read in order: each record's must be above it.
    public private(set) var previous: UInt64

    /// `bytes`, found at `offset` in the segment, after a record numbered `previous` (0: none).
    public init(_ bytes: ArraySlice<UInt8>, offset: Int = 0, after previous: UInt64 = 0) {
        self.bytes = bytes
        position = bytes.startIndex
        self.offset = offset
        self.previous = previous
    }

    public init(_ bytes: [UInt8], offset: Int = 0, after previous: UInt64 = 0) {
        self.init(bytes[...], offset: offset, after: previous)
    }

    /// Where the next line starts in the segment: past the last line read.
    public var end: Int { offset }

    public mutating func next() -> SpoolLine? {
        guard position != bytes.endIndex else { return nil }
        number += 1
        guard let nl = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else {
            let length = bytes.endIndex - position
            defer { position = bytes.endIndex; offset += length }
            return SpoolLine(offset: offset, length: length, number: number, outcome: .failure(.unterminated))
        }
        let text = bytes[position..<nl]
        var outcome = SpoolRecord.parse(text)
        if case .success(let r) = outcome {
            if r.seq <= previous { outcome = .failure(.order(r.seq, after: previous)) } else { previous = r.seq }
        }
        let line = SpoolLine(offset: offset, length: text.count, number: number, outcome: outcome)
        offset += line.length + 1
        position = nl + 1
        return line
    }
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): zlib's `crc32`.
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    public static func hex(_ crc: UInt32) -> String {
        let digits = String(crc, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
