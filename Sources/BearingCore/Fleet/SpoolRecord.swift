/// One message in the MQTT spool, as one line: `SEQ⇥TOPIC⇥PAYLOAD⇥CRC\n`, CRC being the CRC-32 (IEEE, as
/// zlib's) of everything before its tab, in 8 lowercase hex digits. A line is written with one `write`, so
/// a crash leaves whole lines; the CRC catches what a power cut or a bad card leaves instead.
public struct SpoolRecord: Equatable, Sendable {
    /// The device's sequence number, carried in the payload too (`WireEncoding.numbered`).
    public var seq: UInt64
    public var topic: String
    /// One line of gpsd JSON: no tab and no newline (JSON escapes them inside strings).
    public var payload: String

    public init(seq: UInt64, topic: String, payload: String) {
        self.seq = seq
        self.topic = topic
        self.payload = payload
    }

    /// Why a line is not a record.
    public enum Fault: Error, Equatable, CustomStringConvertible {
        case fields(Int)
        case sequence(String)
        case checksum(expected: String, found: String)
        case unterminated

        public var description: String {
            switch self {
            case .fields(let n): return "\(n) tab-separated fields, not 4 (SEQ, TOPIC, PAYLOAD, CRC)"
            case .sequence(let s): return "sequence number \"\(s.prefix(24))\" is not a whole number"
            case .checksum(let expected, let found): return "CRC-32 \(found) does not match the line's (\(expected))"
            case .unterminated: return "the line has no newline (cut short)"
            }
        }
    }

    /// The line, newline included.
    public var line: [UInt8] {
        var bytes = Array("\(seq)\t\(topic)\t\(payload)".utf8)
        let crc = CRC32.checksum(bytes)
        bytes.append(UInt8(ascii: "\t"))
        bytes += Array(CRC32.hex(crc).utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// A line without its newline.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<SpoolRecord, Fault> {
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
        guard fields.count == 4 else { return .failure(.fields(fields.count)) }
        let body = line.prefix(fields[0].count + fields[1].count + fields[2].count + 3 - 1)
        let expected = CRC32.hex(CRC32.checksum(body))
        let found = String(decoding: fields[3], as: UTF8.self)
        guard found == expected else { return .failure(.checksum(expected: expected, found: String(found.prefix(16)))) }
        let seqText = String(decoding: fields[0], as: UTF8.self)
        guard let seq = UInt64(seqText) else { return .failure(.sequence(seqText)) }
        return .success(SpoolRecord(seq: seq, topic: String(decoding: fields[1], as: UTF8.self),
                                    payload: String(decoding: fields[2], as: UTF8.self)))
    }

    /// Whether `s` can be a topic or payload in a line (no tab, no newline).
    public static func fits(_ s: String) -> Bool { !s.utf8.contains { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") } }
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
