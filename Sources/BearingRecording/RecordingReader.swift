/// Reads a whole recording held in memory, one event at a time. A damaged frame followed by good ones is
/// an error naming its offset; a damaged or partial last frame (a power cut or kill -9 while writing) ends
/// the reading quietly and is told by `damagedTail`.
public struct RecordingReader: Sendable {
    /// Where the last good frame ended, and how many bytes after it were dropped.
    public struct DamagedTail: Equatable, Sendable {
        public var offset: Int
        public var bytes: Int

        public init(offset: Int, bytes: Int) {
            self.offset = offset
            self.bytes = bytes
        }
    }

    /// How many bytes of frames found after a damaged one are CRC-checked, at most, before the damaged frame
    /// is taken for one in the middle (a hostile file full of frame magics costs no more).
    private static let resyncBudget = 64 << 20

    private let bytes: [UInt8]
    /// Where the next frame starts.
    private var position = RecordingFormat.headerSize
    private var events: [RecordedEvent] = []
    private var index = 0

    /// File offset of the frame being read (the one the last event came from).
    public private(set) var offset = RecordingFormat.headerSize
    /// Set once `next()` returned nil because the file ended in a partial or damaged last frame.
    public private(set) var damagedTail: DamagedTail?

    /// Checks the header: a file cut inside it, of another kind, or of a newer format is refused.
    public init(_ bytes: [UInt8]) throws(RecordingError) {
        let magic = RecordingFormat.fileMagic
        let n = min(bytes.count, magic.count)
        guard bytes[0..<n].elementsEqual(magic[0..<n]) else { throw RecordingError.notARecording }
        guard bytes.count >= RecordingFormat.headerSize else {
            throw RecordingError.corrupt(offset: 0, reason: "the file ends inside its 16-byte header (\(bytes.count) bytes)")
        }
        let version = UInt16(bytes[8]) | UInt16(bytes[9]) << 8
        guard version <= RecordingFormat.version else { throw RecordingError.newerVersion(found: version, supported: RecordingFormat.version) }
        guard version >= 1 else { throw RecordingError.corrupt(offset: 8, reason: "format version 0 does not exist") }
        self.bytes = bytes
    }

    /// The next event; nil at the end of the file (see `damagedTail`). Throws `.corrupt` for a damaged
    /// frame that is not the last, and again on every later call.
    public mutating func next() throws(RecordingError) -> RecordedEvent? {
        while index == events.count {
            guard damagedTail == nil, position < bytes.count else { return nil }
            let start = position
            let outcome = bytes.withUnsafeBufferPointer { Self.frame(in: $0, at: start) }
            switch outcome {
            case .frame(let e, let end):
                events = e
                index = 0
                offset = start
                position = end
            case .damaged(let reason):
                offset = start
                if bytes.withUnsafeBufferPointer({ Self.goodFrameFollows($0, after: start) }) {
                    throw RecordingError.corrupt(offset: start, reason: reason)
                }
                damagedTail = DamagedTail(offset: start, bytes: bytes.count - start)
                events = []
                index = 0
                return nil
            }
        }
        defer { index += 1 }
        return events[index]
    }

    enum Outcome {
        case frame([RecordedEvent], end: Int)
        case damaged(String)
    }

    /// The frame at `start`: its events and where it ends, or what is wrong with it.
    static func frame(in b: UnsafeBufferPointer<UInt8>, at start: Int) -> Outcome {
        let header = RecordingFormat.frameHeaderSize
        let available = b.count - start
        guard available >= header else {
            return .damaged("the file ends inside a frame header (\(available) of \(header) bytes)")
        }
        let magic = u32(b, start)
        guard magic == RecordingFormat.frameMagic else { return .damaged("bad frame magic 0x\(hex(magic))") }
        let length = Int(u32(b, start + 4))
        guard length <= RecordingFormat.maxPayload else {
            return .damaged("payload length \(length) over the limit of \(RecordingFormat.maxPayload)")
        }
        guard length <= available - header else {
            return .damaged("the file ends inside the frame (\(available - header) of \(length) payload bytes)")
        }
        let stored = u32(b, start + 8), computed = CRC32C.frame(b, start: start, payloadLength: length)
        guard stored == computed else { return .damaged("CRC mismatch (stored 0x\(hex(stored)), computed 0x\(hex(computed)))") }
        let time = UInt64(u32(b, start + 12)) | UInt64(u32(b, start + 16)) << 32
        let count = Int(u32(b, start + 20))
        // A record takes at least two bytes (its type and time).
        guard count <= length / 2 else { return .damaged("record count \(count) too large for \(length) payload bytes") }
        let payload = UnsafeBufferPointer(rebasing: b[(start + header)..<(start + header + length)])
        do {
            return .frame(try FrameDecoder.decode(payload, firstTime: time, count: count), end: start + header + length)
        } catch {
            return .damaged(reason(error))
        }
    }

    /// Whether a frame with a good header and CRC starts somewhere after `start`: then the damaged frame at
    /// `start` is not the last.
    static func goodFrameFollows(_ b: UnsafeBufferPointer<UInt8>, after start: Int) -> Bool {
        let header = RecordingFormat.frameHeaderSize
        var budget = resyncBudget
        var p = start + 1
        while p + header <= b.count {
            if b[p] == UInt8(truncatingIfNeeded: RecordingFormat.frameMagic) && u32(b, p) == RecordingFormat.frameMagic {
                let length = Int(u32(b, p + 4))
                if length <= RecordingFormat.maxPayload && length <= b.count - p - header {
                    budget -= header + length
                    if budget < 0 { return true }
                    if u32(b, p + 8) == CRC32C.frame(b, start: p, payloadLength: length) { return true }
                }
            }
            p += 1
        }
        return false
    }

    @inline(__always) static func u32(_ b: UnsafeBufferPointer<UInt8>, _ p: Int) -> UInt32 {
        UInt32(b[p]) | UInt32(b[p + 1]) << 8 | UInt32(b[p + 2]) << 16 | UInt32(b[p + 3]) << 24
    }

    static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
