/// The black box's file format (docs/blackbox-format.md): a 16-byte header, then self-contained frames.
public enum RecordingFormat {
    /// The format this code writes and the newest it reads.
    public static let version: UInt16 = 1

    /// The file header: magic `BEARBOX\n`, the version (u16 LE), flags (u16 LE, 0), reserved (u32, 0).
    public static let header: [UInt8] = fileMagic + [UInt8(version & 0xFF), UInt8(version >> 8), 0, 0, 0, 0, 0, 0]

    static let headerSize = 16
    static let fileMagic: [UInt8] = Array("BEARBOX\n".utf8)

    /// A frame's first four bytes: `B5 'F' 'R' 'M'`, read as a u32 LE.
    static let frameMagic: UInt32 = 0x4D52_46B5
    /// Magic, payload length, CRC-32C, first record's time, record count.
    static let frameHeaderSize = 24
    /// The largest frame payload a reader accepts (16 MiB), and the largest gpsd message it decodes: a writer
    /// finishes its frames well before (`FrameEncoder.pendingBytes`).
    public static let maxPayload = 16 << 20
    /// The most a frame's gpsd messages may decode to together (64 MiB): a frame cannot expand without bound.
    static let maxDecodedMessageBytes = 64 << 20
}

/// Why a recording cannot be read.
public enum RecordingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file does not start with `BEARBOX\n`.
    case notARecording
    /// The file was written in a format newer than this reader's.
    case newerVersion(found: UInt16, supported: UInt16)
    /// The frame at byte `offset` of the file is damaged and frames follow it (or the header is cut).
    case corrupt(offset: Int, reason: String)

    public var description: String {
        switch self {
        case .notARecording:
            return "not a Bearing recording (the file does not start with BEARBOX): check the file name"
        case .newerVersion(let found, let supported):
            return "recording format version \(found) is newer than this bearing reads (\(supported)): read it with a newer bearing"
        case .corrupt(let offset, let reason):
            let at = "recording damaged at byte \(offset) (0x\(String(offset, radix: 16))): \(reason)"
            guard offset >= RecordingFormat.headerSize else { return at + "; nothing in it can be read" }
            return at + "; the frames before it read: keep its first \(offset) bytes (head -c \(offset)) to read them alone"
        }
    }
}

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven eight bytes at a time.
public enum CRC32C {
    /// Eight tables of 256: table k gives the CRC of a byte followed by k zero bytes.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 == 1 ? 0x82F6_3B78 ^ (c >> 1) : c >> 1 }
            t[n] = c
        }
        for n in 0..<256 {
            for k in 1..<8 { t[k * 256 + n] = (t[(k - 1) * 256 + n] >> 8) ^ t[Int(t[(k - 1) * 256 + n] & 0xFF)] }
        }
        return t
    }()

    /// The CRC of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { update(0, $0) }
    }

    /// `crc` (of the bytes before) continued over `bytes`; start from 0.
    static func update(_ crc: UInt32, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        tables.withUnsafeBufferPointer { (t: UnsafeBufferPointer<UInt32>) -> UInt32 in
            var c = ~crc
            var i = 0
            let n = bytes.count
            while i + 8 <= n {
                let lo = c ^ load32(bytes, i)
                let hi = load32(bytes, i + 4)
                var x = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                x ^= t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                x ^= t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                c = x ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                c = t[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                i += 1
            }
            return ~c
        }
    }

    @inline(__always) private static func load32(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt32 {
        let b0 = UInt32(b[i]), b1 = UInt32(b[i + 1]) << 8, b2 = UInt32(b[i + 2]) << 16, b3 = UInt32(b[i + 3]) << 24
        return b0 | b1 | b2 | b3
    }

    /// The CRC a frame header stores: over the payload length (bytes 4..<8), the time and record count
    /// (12..<24) and the payload, of the frame starting at `start` in `bytes`.
    static func frame(_ bytes: UnsafeBufferPointer<UInt8>, start: Int, payloadLength: Int) -> UInt32 {
        let crc = update(0, UnsafeBufferPointer(rebasing: bytes[(start + 4)..<(start + 8)]))
        return update(crc, UnsafeBufferPointer(rebasing: bytes[(start + 12)..<(start + RecordingFormat.frameHeaderSize + payloadLength)]))
    }
}
