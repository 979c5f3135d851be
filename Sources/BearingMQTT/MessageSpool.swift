import BearingModel
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// A bounded first-in first-out queue of numbered messages on disk: what the MQTT door has not yet seen
/// acknowledged by the broker.
///
/// - `kill -9`: every message is one `write` of one line, and every acknowledgement one `pwrite` of the
///   mark to `acked`, both in the kernel's page cache when the call returns (no fsync: the cache outlives
///   the process). Nothing is lost, and only what was in flight and not yet acknowledged is sent again:
///   at most the door's window.
/// - A power cut: the kernel writes lines and mark out within its writeback delay (~30 s; a clean shutdown
///   flushes them at once). `state`, fsync'd by `saveState()`, is the floor: what was acknowledged after the
///   last `saveState()` may be sent again (duplicates by sequence number, never a loss). Numbers are
///   reserved ahead of use, fdatasync'd, so none is given twice (below).
/// - A full disk: the record in `acked` is rewritten in place, so the numbers spent and the counts outlast a
///   restart even when `state` cannot be saved.
///
/// Layout, under `directory`:
/// - segments `<first seq, 20 digits>.spool` of `SpoolRecord` lines, the newest one appended to;
/// - `acked`: the marks, one fixed-size record of 192 bytes rewritten in place (a `pwrite` at offset 0: it
///   allocates nothing, so it works on a full disk):
///   `acked A next N reserved R dropped D unconfirmed U boot B⇥CRC\n`, the numbers in 20 digits, B the
///   kernel's boot id (32 hex digits), CRC the CRC-32 of everything before the tab in 8 hex digits, so that
///   a torn or foreign record is told apart. Written at each acknowledgement, each drop, each reservation and
///   at `close()`. (The old record, 30 bytes: the acknowledged mark in 20 digits, a tab, its CRC-32, a
///   newline, is still read.)
/// - `state`: the last acknowledged sequence number, the next one to give and the drops so far (`KEY NUMBER`
///   lines), replaced atomically (`AtomicFile`) by `saveState()`.
///
/// Numbers are never given twice. They are reserved ahead of use, `reserveBlock` at a time: the record is
/// written with the reserved mark and fdatasync'd before a number past the old mark is given. `close()` gives
/// back what was not used. On opening, numbering goes on after the largest number the lines, `state` and the
/// record show was given (the record's `next` is exact while the page cache holds it: a crash in the same
/// boot); when the record comes from another boot and was not closed (a power cut), it goes on after the
/// reserved mark, and the numbers between, perhaps given to messages whose lines were lost, are counted as
/// dropped. The acknowledged mark and the counts are the largest of `state`'s and the record's (they only
/// grow); a record or `state` that is not valid is ignored, with a note.
///
/// Every number read from these files (a line's, a segment's name, the record's, `state`'s) must be 1 to
/// `SpoolRecord.maxSeq` (counts: 0 to it), so that no arithmetic on it overflows: a line or name out of range
/// sets its segment aside like a corrupt one, and a record or `state` out of range is ignored. Past the bound
/// the numbers are used up: `append` throws.
///
/// Past `maxBytes` the oldest segment goes: its messages never sent are counted as dropped, and those sent
/// but not acknowledged (in flight when a connection died) as unconfirmed.
/// A segment with a line that is not a record (bad CRC, out of order: a bad card, a hand edit) is renamed
/// `….corrupt`, named in `notes`, and none of it is sent; a last line cut short (a power cut mid-write) is
/// cut off. Not thread-safe: its owner serialises calls.
public final class MessageSpool {
    public let directory: String
    public let maxBytes: Int
    /// Segments are an eighth of the bound, so that dropping the oldest frees an eighth.
    public let segmentBytes: Int

    /// The last sequence number the broker acknowledged (every one before it was, too).
    public private(set) var acknowledged: UInt64 = 0
    /// The number the next message gets.
    public private(set) var nextSeq: UInt64 = 1
    /// Messages given a number that will never be sent: dropped past the bound, unwritable, or in a
    /// corrupt segment; and numbers reserved and skipped after a power cut. Kept across restarts.
    public private(set) var dropped: UInt64 = 0
    /// Counts `n` messages dropped before they were numbered (the door's writer fell too far behind a stalled
    /// disk): a subscriber sees them in `dropped`, with no gap in the numbers.
    public func countDropped(_ n: UInt64) {
        guard n > 0 else { return }
        dropped = Self.sum(dropped, n)
        stateDirty = true
    }

    /// Runs before each line's write: a test's slow disk (a stalled SD card), at the file, not in the logic.
    var beforeWrite: (@Sendable () -> Void)?
    /// The highest number handed to the broker (sent, perhaps not acknowledged) since opening: a message up
    /// to it that goes past the bound was sent, so it is not counted as dropped.
    public private(set) var sent: UInt64 = 0
    /// Of `dropped`, those dropped past the bound since opening.
    public private(set) var droppedPastBound: UInt64 = 0
    /// Messages dropped past the bound that had been handed to the broker and not acknowledged: in flight when
    /// a connection died, so the broker may or may not have them. Not in `dropped`; kept across restarts. A
    /// subscriber missing M messages sees `dropped` ≤ M ≤ `dropped` + `unconfirmed`.
    public private(set) var unconfirmed: UInt64 = 0
    /// What opening found and did (files set aside, a cut line), and lines found bad since, for the log.
    public private(set) var notes: [String] = []

    /// The notes not yet taken.
    public func takeNotes() -> [String] {
        defer { notes = [] }
        return notes
    }

    private struct Segment {
        var first: UInt64
        var last: UInt64
        var records: Int
        var bytes: Int
        var path: String
        /// Numbers between `first` and `last` with no line (spent by a failed write), in order.
        var gaps: [ClosedRange<UInt64>] = []

        /// Its records numbered up to `mark`.
        func records(through mark: UInt64) -> Int {
            guard records > 0, mark >= first else { return 0 }
            let top = min(mark, last)
            var count = top - first + 1
            for gap in gaps where gap.lowerBound <= top { count -= min(gap.upperBound, top) - gap.lowerBound + 1 }
            return Int(count)
        }

        /// Adds the record numbered `seq`, after the others.
        mutating func add(_ seq: UInt64) {
            if records == 0 {
                first = seq
            } else if seq > last + 1 {
                gaps.append(last + 1...seq - 1)
            }
            last = seq
            records += 1
        }
    }
    private var segments: [Segment] = []
    private var appendFD: Int32 = -1
    /// The next record to hand out: the segment (by its first number) and the byte offset in it.
    private var cursor: (segment: UInt64, offset: Int) = (0, 0)

    /// The segment the cursor reads: its descriptor, open while the cursor is in it, and whole lines of it
    /// read ahead (and appended while they follow on), so that `take` after each acknowledgement seldom
    /// makes a system call.
    private struct Reader {
        var path: String
        var fd: Int32
        /// The file's bytes from `offset`, ending with a newline (or empty).
        var bytes: [UInt8] = []
        var offset = 0
    }
    private var reader: Reader?
    /// The most a read-ahead holds.
    private static let readAhead = 1 << 16

    /// `acked`, open for writing the acknowledged mark through (-1: not open yet, or closed).
    private var ackedFD: Int32 = -1
    /// The errno of the write-throughs failing, noted once until one succeeds.
    private var writeThroughFailure: Int32?
    private var stateDirty = false
    /// The highest number reserved in `acked`: numbers up to it may be given without writing the record.
    private var reserved: UInt64 = 0
    /// Numbers reserved at a time: one `pwrite` and `fdatasync` of `acked` per this many messages.
    static let reserveBlock: UInt64 = 1024
    /// This boot's id ("" when it cannot be read: never taken as the same boot).
    private static let boot = bootID()

    /// Opens (making it when missing) the spool in `directory`; throws when the directory cannot be made
    /// or read.
    public init(directory: String, maxBytes: Int) throws(SystemError) {
        self.directory = directory
        self.maxBytes = max(maxBytes, 8 * 4096)
        segmentBytes = self.maxBytes / 8
        try AtomicFile.makeDirectories(directory, mode: 0o750)
        loadState()
        let written = loadMarks()
        if let m = written?.marks {
            // Each only grows: the larger is the later.
            nextSeq = max(nextSeq, m.next)
            dropped = max(dropped, m.dropped)
            unconfirmed = max(unconfirmed, m.unconfirmed)
        }
        let savedAcknowledged = acknowledged
        acknowledged = max(acknowledged, written?.marks.acked ?? 0)
        try scan()
        if acknowledged > savedAcknowledged, acknowledged >= nextSeq {
            // The mark is evidence that its numbers were given (the lines may be lost: a power cut that wrote
            // `acked` before them): numbering goes on after it, so that no number is given twice.
            notes.append("\(ackedPath): acknowledged mark \(acknowledged) is past the last number in the spool (\(nextSeq - 1)); numbering goes on at \(acknowledged + 1)")
        }
        nextSeq = max(nextSeq, acknowledged + 1)
        if let m = written?.marks, m.boot != Self.boot || m.boot.isEmpty, m.reserved >= nextSeq {
            // Reserved, not closed, and from another boot: a power cut, which may have lost lines of numbers
            // given (and sent). None is given again; those never seen are counted as dropped.
            notes.append("\(ackedPath): numbers \(nextSeq)…\(m.reserved) were reserved before a stop that was not clean (a power cut?) and may have been given to messages since lost; numbering goes on at \(m.reserved + 1), and they are counted as dropped")
            dropped = Self.sum(dropped, m.reserved - nextSeq + 1)
            nextSeq = m.reserved + 1
        }
        reserved = nextSeq - 1
        stateDirty = true
        // A fresh, stale, bad, old or clamped record is replaced at once.
        if written?.bytes != marks.bytes { writeMarks() }
        rewind()
    }

    deinit { close() }

    /// Messages not yet acknowledged: exact, since each segment knows the numbers in its span that have no
    /// line (a failed write spends a number).
    public var pending: UInt64 { segments.reduce(0) { $0 + UInt64($1.records - $1.records(through: acknowledged)) } }
    /// Bytes on disk.
    public var bytes: Int { segments.reduce(0) { $0 + $1.bytes } }

    /// Gives the next number to `payload(seq)` and appends the message. On a failed write the number is
    /// spent and counted as dropped (a subscriber sees the gap and the count agree) and the error names
    /// the file; what was spooled before stays.
    @discardableResult
    public func append(topic: String, payload: (UInt64) -> String) throws(SystemError) -> UInt64 {
        try append(topic: topic, payloadBytes: { seq, out in out.append(contentsOf: payload(seq).utf8) })
    }

    /// `append(topic:payload:)` with the payload appended as bytes to the line being built (`Report.appendLine`):
    /// encoded once, straight into the line.
    public func append(topic: String, payloadBytes payload: (UInt64, inout [UInt8]) -> Void) throws(SystemError) -> UInt64 {
        let seq = nextSeq
        guard seq <= SpoolRecord.maxSeq else {
            throw SystemError("append", "\(directory): the sequence numbers are used up (the last is \(SpoolRecord.maxSeq))", errno: EOVERFLOW)
        }
        if seq > reserved {
            reserved = min(seq - 1 + Self.reserveBlock, SpoolRecord.maxSeq)
            writeMarks(sync: true)
        }
        nextSeq += 1
        stateDirty = true
        let line = SpoolRecord.line(seq: seq, topic: topic) { payload(seq, &$0) }
        do throws(SystemError) {
            try makeRoom(for: line.count)
            if appendFD < 0 || segments.isEmpty || segments[segments.count - 1].bytes + line.count > segmentBytes && segments[segments.count - 1].records > 0 {
                try startSegment(at: seq)
            }
            var written = writeLine(line)
            if written != nil, segments[segments.count - 1].records > 0, segments[segments.count - 1].last <= acknowledged {
                // A full disk, and the file being appended to holds nothing unacknowledged: start it over.
                removeSegment(segments.count - 1)
                try startSegment(at: seq)
                written = writeLine(line)
            }
            if let written { throw written }
            let i = segments.count - 1
            let path = segments[i].path, end = segments[i].bytes
            if reader.map({ $0.path == path && $0.offset + $0.bytes.count == end && $0.bytes.count < Self.readAhead }) ?? false {
                reader?.bytes.append(contentsOf: line)
            }
            segments[i].add(seq)
            segments[i].bytes += line.count
        } catch {
            dropped = Self.sum(dropped, 1)
            writeMarks()
            throw error
        }
        return seq
    }

    /// Appends `line` to the current segment in one `write`; a short write is cut off again, so the file
    /// stays whole lines. Returns the error, if any.
    private func writeLine(_ line: [UInt8]) -> SystemError? {
        beforeWrite?()
        let i = segments.count - 1
        let path = segments[i].path
        let n = line.withUnsafeBytes { write(appendFD, $0.baseAddress, $0.count) }
        guard n != line.count else { return nil }
        let error = n < 0 ? SystemError("write", path) : SystemError("write", "\(path): \(n) of \(line.count) bytes", errno: ENOSPC)
        if n > 0, ftruncate(appendFD, off_t(segments[i].bytes)) != 0 {
            // The file ends in part of a line: what follows goes to a new segment.
            notes.append("\(path): cannot cut off a line written in part (\(SystemError("ftruncate", path).message)); the next message starts a new file")
            closeAppendFile()
        }
        return error
    }

    /// Up to `limit` messages after the last one handed out, in order.
    public func take(_ limit: Int) -> [SpoolRecord] {
        var out: [SpoolRecord] = []
        while out.count < limit {
            guard let i = segments.firstIndex(where: { $0.first >= cursor.segment && $0.records > 0 }) else { break }
            if segments[i].first != cursor.segment { cursor = (segments[i].first, 0) }
            let segment = segments[i]
            guard cursor.offset < segment.bytes else {
                guard i + 1 < segments.count else { break }
                cursor = (segments[i + 1].first, 0)
                continue
            }
            let lines: ArraySlice<UInt8>
            do throws(SystemError) {
                lines = try readLines(segment, at: cursor.offset)
            } catch {
                notes.append("\(error); the rest of \(segment.path) is not sent")
                cursor.offset = segment.bytes
                continue
            }
            guard !lines.isEmpty else {
                // A line longer than the read-ahead, or a file changed under us: skip the segment rather than spin.
                notes.append("\(segment.path): no whole line at byte \(cursor.offset); the rest of it is not sent")
                cursor.offset = segment.bytes
                continue
            }
            var reader = SpoolLines(lines, offset: cursor.offset)
            while out.count < limit, let line = reader.next() {
                switch line.outcome {
                case .success(let r): if r.seq > acknowledged { out.append(r) }
                case .failure(let f): notes.append("\(segment.path) at byte \(line.offset): \(f); the line is not sent")
                }
            }
            cursor.offset = reader.end
        }
        return out
    }

    /// Whole lines of `segment` from byte `offset` (within its size): read ahead earlier, or read now
    /// (empty when no line ends within the read-ahead).
    private func readLines(_ segment: Segment, at offset: Int) throws(SystemError) -> ArraySlice<UInt8> {
        if let r = reader, r.path == segment.path, r.offset <= offset, offset < r.offset + r.bytes.count {
            return r.bytes[(offset - r.offset)...]
        }
        if reader?.path != segment.path {
            closeReader()
            let fd = try Syscall.check("open", segment.path) { open(segment.path, O_RDONLY | O_CLOEXEC) }
            reader = Reader(path: segment.path, fd: fd)
        }
        guard let fd = reader?.fd else { return [] }
        var bytes = [UInt8](repeating: 0, count: min(segment.bytes - offset, Self.readAhead))
        let n = try Syscall.check("pread", segment.path) { bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) } }
        let end = bytes[..<n].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        bytes.removeSubrange(end...)
        reader?.bytes = bytes
        reader?.offset = offset
        return bytes[...]
    }

    /// Notes that every message up to `seq` has been handed to the broker.
    public func markSent(through seq: UInt64) { sent = max(sent, seq) }

    /// Hands out again everything not yet acknowledged (after a reconnect: the broker may have lost what
    /// was in flight).
    public func rewind() { cursor = (0, 0) }

    /// Marks every message up to `seq` acknowledged, writes the mark through to `acked`, and deletes the
    /// segments wholly acknowledged (the one being appended to stays).
    public func acknowledge(through seq: UInt64) {
        guard seq > acknowledged else { return }
        acknowledged = min(seq, nextSeq - 1)
        stateDirty = true
        writeMarks()
        while segments.count > 1, segments[0].last <= acknowledged { removeSegment(0) }
    }

    /// Writes the marks over the record in `acked`: one `pwrite`, no fsync unless `sync` (a reservation, which
    /// must outlast a power cut). A failure is noted once until a write succeeds; meanwhile a crash falls back
    /// on `state` (duplicates, never a loss) and the lines.
    private func writeMarks(sync: Bool = false) {
        let record = marks.bytes
        do throws(SystemError) {
            if ackedFD < 0 {
                ackedFD = try Syscall.check("open", ackedPath) { open(ackedPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o640) }
            }
            let fd = ackedFD
            let n = try Syscall.check("pwrite", ackedPath) { record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
            guard n == record.count else { throw SystemError("pwrite", "\(ackedPath): \(n) of \(record.count) bytes", errno: ENOSPC) }
            if sync { try Syscall.check("fdatasync", ackedPath) { fdatasync(fd) } }
            if writeThroughFailure != nil { notes.append("\(ackedPath): the acknowledged mark is written through again") }
            writeThroughFailure = nil
        } catch {
            if writeThroughFailure == nil {
                notes.append("cannot write the acknowledged mark through: \(error); until it can, a crash sends again what was acknowledged after the last save of \(statePath), and may count fewer drops")
            }
            writeThroughFailure = error.errno
        }
    }

    /// The record `acked` holds now.
    private var marks: Marks {
        Marks(acked: acknowledged, next: nextSeq, reserved: reserved, dropped: dropped, unconfirmed: unconfirmed, boot: Self.boot)
    }

    /// `a + b`, held to `SpoolRecord.maxSeq`: a count cannot pass the numbers there are.
    private static func sum(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (s, overflow) = a.addingReportingOverflow(b)
        return overflow ? SpoolRecord.maxSeq : min(s, SpoolRecord.maxSeq)
    }

    /// Writes `state` when it changed: the durable save (fsync'd, atomic) that a power cut falls back on.
    public func saveState() throws(SystemError) {
        guard stateDirty else { return }
        let text = "acked \(acknowledged)\nnext \(nextSeq)\ndropped \(dropped)\nunconfirmed \(unconfirmed)\n"
        try AtomicFile.write(Array(text.utf8), to: statePath, mode: 0o640)
        stateDirty = false
    }

    /// Gives back the numbers reserved and not used (so that a restart after a power cut skips none) and
    /// closes its files (they are opened again when needed).
    public func close() {
        if reserved >= nextSeq {
            reserved = nextSeq - 1
            writeMarks()
        }
        closeAppendFile()
        closeReader()
        if ackedFD >= 0 { Glibc.close(ackedFD) }
        ackedFD = -1
    }

    private func closeAppendFile() {
        if appendFD >= 0 { Glibc.close(appendFD) }
        appendFD = -1
    }

    private func closeReader() {
        if let fd = reader?.fd { Glibc.close(fd) }
        reader = nil
    }

    // MARK: Disk

    private var statePath: String { "\(directory)/state" }
    private var ackedPath: String { "\(directory)/acked" }

    private func loadState() {
        let ignored = "ignored: messages still spooled are sent again unless \(ackedPath) marks them acknowledged"
        let text: String
        do throws(SystemError) {
            text = try AtomicFile.readText(statePath, limit: 4096)
        } catch {
            if error.errno != ENOENT {
                notes.append("\(statePath): \(error.errno == EILSEQ ? "not text (not UTF-8)" : "cannot be read (\(error))"); \(ignored)")
            }
            return
        }
        if text.isEmpty {
            notes.append("\(statePath): empty; \(ignored)")
            return
        }
        var values: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let v = UInt64(parts[1]) else {
                notes.append("\(statePath): line \"\(SpoolRecord.shown(line.prefix(40)))\" is not KEY NUMBER; \(ignored)")
                return
            }
            values[String(parts[0])] = v
        }
        // Numbers past the bound are no spool's (and could overflow): the file is damaged.
        if let (key, v) = values.first(where: { $0.value > SpoolRecord.maxSeq + ($0.key == "next" ? 1 : 0) }) {
            notes.append("\(statePath): \(SpoolRecord.shown(key.prefix(40))) \(v) is out of range; \(ignored)")
            return
        }
        acknowledged = values["acked"] ?? 0
        nextSeq = max(values["next"] ?? 1, acknowledged + 1)
        dropped = values["dropped"] ?? 0
        unconfirmed = values["unconfirmed"] ?? 0
    }

    /// The marks in `acked` and the bytes they were read from, when it holds a valid record; a missing or
    /// empty file holds none, and anything else is ignored with a note.
    private func loadMarks() -> (marks: Marks, bytes: [UInt8])? {
        let fault: String
        do throws(SystemError) {
            let bytes = try AtomicFile.read(ackedPath, limit: 4096)
            if bytes.isEmpty { return nil }
            switch Marks.parse(bytes) {
            case .success(let marks): return (marks, bytes)
            case .failure(let f): fault = f.reason
            }
        } catch {
            if error.errno == ENOENT { return nil }
            fault = "cannot be read (\(error.message))"
        }
        notes.append("\(ackedPath): \(fault); ignored: the acknowledged mark is \(statePath)'s (\(acknowledged)), so what was acknowledged after it was saved is sent again")
        return nil
    }

    /// Why `acked` does not hold a record.
    private struct AckedRecordFault: Error {
        var reason: String
    }

    /// The record of `acked` (see the class's comment).
    private struct Marks {
        var acked: UInt64
        var next: UInt64
        var reserved: UInt64
        var dropped: UInt64
        var unconfirmed: UInt64
        /// 32 hex digits, or "" (unknown: written as zeros).
        var boot: String

        static let size = 192
        /// The old record: the acknowledged mark alone.
        static let oldSize = 30
        static let keys = ["acked", "next", "reserved", "dropped", "unconfirmed", "boot"]

        var bytes: [UInt8] {
            let values = [acked, next, reserved, dropped, unconfirmed].map { v -> String in
                let digits = String(v)
                return String(repeating: "0", count: 20 - digits.count) + digits
            } + [boot.isEmpty ? String(repeating: "0", count: 32) : boot]
            var bytes = Array(zip(Self.keys, values).map { "\($0) \($1)" }.joined(separator: " ").utf8)
            let crc = CRC32.hex(CRC32.checksum(bytes))
            bytes.append(UInt8(ascii: "\t"))
            bytes += Array(crc.utf8)
            bytes.append(UInt8(ascii: "\n"))
            return bytes
        }

        static func parse(_ bytes: [UInt8]) -> Result<Marks, AckedRecordFault> {
            if bytes.count == oldSize { return parseOld(bytes) }
            guard bytes.count == size else {
                return .failure(AckedRecordFault(reason: "\(bytes.count) bytes, not a record of \(size) (or of \(oldSize), the old form)"))
            }
            let body = bytes[0..<size - 10]
            let words = body.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            guard bytes[size - 10] == UInt8(ascii: "\t"), bytes[size - 1] == UInt8(ascii: "\n"), words.count == 2 * keys.count,
                  keys.indices.allSatisfy({ words[2 * $0] == keys[$0] }),
                  words[1..<words.count - 1].enumerated().allSatisfy({ $0.offset % 2 == 1 || $0.element.utf8.count == 20 && $0.element.utf8.allSatisfy(isDigit) }),
                  words[words.count - 1].utf8.count == 32, words[words.count - 1].utf8.allSatisfy(isHexDigit) else {
                return .failure(AckedRecordFault(reason: "not a record (acked, next, reserved, dropped, unconfirmed in 20 digits, a boot id, a tab, a CRC-32, a newline)"))
            }
            let expected = CRC32.hex(CRC32.checksum(body))
            let found = String(decoding: bytes[size - 9..<size - 1], as: UTF8.self)
            guard found == expected else { return .failure(AckedRecordFault(reason: "CRC-32 \(SpoolRecord.shown(found)) does not match the record's (\(expected))")) }
            var v: [UInt64] = []
            for i in 0..<5 {
                guard let n = UInt64(words[2 * i + 1]), n <= SpoolRecord.maxSeq + (i == 1 ? 1 : 0) else {
                    return .failure(AckedRecordFault(reason: "\(keys[i]) \(words[2 * i + 1]) is out of range"))
                }
                v.append(n)
            }
            let boot = words[words.count - 1]
            return .success(Marks(acked: v[0], next: v[1], reserved: v[2], dropped: v[3], unconfirmed: v[4],
                                  boot: boot.utf8.allSatisfy { $0 == UInt8(ascii: "0") } ? "" : boot))
        }

        /// The old record: 20 digits, a tab, their CRC-32 in hex, a newline. Only its mark is known.
        private static func parseOld(_ bytes: [UInt8]) -> Result<Marks, AckedRecordFault> {
            let digits = bytes[0..<20]
            guard bytes[20] == UInt8(ascii: "\t"), bytes[29] == UInt8(ascii: "\n"), digits.allSatisfy(isDigit) else {
                return .failure(AckedRecordFault(reason: "not a record (20 digits, a tab, a CRC-32, a newline)"))
            }
            let expected = CRC32.hex(CRC32.checksum(digits))
            let found = String(decoding: bytes[21..<29], as: UTF8.self)
            guard found == expected else { return .failure(AckedRecordFault(reason: "CRC-32 \(SpoolRecord.shown(found)) does not match the record's (\(expected))")) }
            let text = String(decoding: digits, as: UTF8.self)
            guard let mark = UInt64(text), mark <= SpoolRecord.maxSeq else {
                return .failure(AckedRecordFault(reason: "acked \(text) is out of range"))
            }
            return .success(Marks(acked: mark, next: 0, reserved: 0, dropped: 0, unconfirmed: 0, boot: ""))
        }

        private static func isDigit(_ b: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
        private static func isHexDigit(_ b: UInt8) -> Bool { isDigit(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b) }
    }

    /// The kernel's boot id in 32 lowercase hex digits, or "" when it cannot be read.
    private static func bootID() -> String {
        guard let text = try? AtomicFile.readText("/proc/sys/kernel/random/boot_id", limit: 64) else { return "" }
        let hex = text.lowercased().filter { $0 != "-" && $0 != "\n" }
        return hex.utf8.count == 32 && hex.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) ? hex : ""
    }

    private func scan() throws(SystemError) {
        let names = try Directory.names(directory).filter { name in
            name.hasSuffix(".spool") && name.utf8.count == 26 && name.utf8.prefix(20).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        }
        var previous: UInt64 = 0
        for (n, name) in names.sorted().enumerated() {
            let path = "\(directory)/\(name)"
            let bytes: [UInt8]
            do { bytes = try AtomicFile.read(path, limit: 1 << 30) } catch { setAside(path, error.description, records: 0); continue }
            let first = UInt64(name.prefix(20)).flatMap { (1...SpoolRecord.maxSeq).contains($0) ? $0 : nil }
            var fault: String? = first == nil ? "the number in its name is out of range (1 to \(SpoolRecord.maxSeq))" : nil
            var segment = Segment(first: first ?? 0, last: 0, records: 0, bytes: 0, path: path)
            var lines = SpoolLines(bytes, after: previous)
            var lowest = UInt64.max
            while let line = lines.next() {
                switch line.outcome {
                case .failure(.unterminated) where n == names.count - 1:
                    // A power cut mid-write: the lines before it stand.
                    notes.append("\(path) line \(line.number): \(SpoolRecord.Fault.unterminated); cut off (\(line.length) bytes)")
                    if truncate(path, off_t(line.offset)) != 0 { fault = SystemError("truncate", path).description }
                case .failure(let f):
                    if fault == nil { fault = "line \(line.number): \(f)" }
                case .success(let r):
                    // After a fault the good lines are only counted (and their numbers never given again).
                    if fault == nil { segment.add(r.seq) }
                    lowest = min(lowest, r.seq)
                }
                if line.outcome != .failure(.unterminated) { segment.bytes = line.end }
            }
            previous = lines.previous
            if let fault {
                // Its numbers run from the lowest to the highest read (a line too damaged to read has one too).
                let from = max(lowest, acknowledged + 1)
                setAside(path, fault, records: lowest == .max || from > previous ? 0 : previous - from + 1)
            } else if segment.records > 0 && segment.last <= acknowledged {
                unlink(path)
            } else if segment.records > 0 {
                segments.append(segment)
            } else {
                unlink(path)
            }
        }
        // Numbers seen in files set aside are not given again either.
        nextSeq = max(nextSeq, previous + 1)
        stateDirty = true
    }

    /// A segment that cannot be trusted: kept for a person to read, never sent.
    private func setAside(_ path: String, _ fault: String, records: UInt64) {
        let aside = "\(path).corrupt"
        let moved = rename(path, aside) == 0
        dropped = Self.sum(dropped, records)
        notes.append("\(path): \(fault); \(moved ? "set aside as \(aside)" : "could not be set aside (\(SystemError("rename", path).message)) and is ignored"); none of it is sent (its \(records) good unacknowledged messages are counted as dropped)")
    }

    private func startSegment(at seq: UInt64) throws(SystemError) {
        closeAppendFile()
        let digits = String(seq)
        let path = "\(directory)/\(String(repeating: "0", count: 20 - digits.count))\(digits).spool"
        let fd = try Syscall.check("open", path) { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640) }
        var st = stat()
        do throws(SystemError) {
            try Syscall.check("fstat", path) { fstat(fd, &st) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        appendFD = fd
        let size = Int(st.st_size)
        if size > 0, let i = segments.firstIndex(where: { $0.path == path }) {
            segments[i].bytes = size
        } else {
            segments.append(Segment(first: seq, last: seq, records: 0, bytes: size, path: path))
        }
    }

    /// Drops the oldest segments until `count` more bytes fit under the bound.
    private func makeRoom(for count: Int) throws(SystemError) {
        var counted = false
        while bytes + count > maxBytes, segments.count > 1 {
            let oldest = segments[0]
            let handedOut = max(acknowledged, sent)
            let lost = UInt64(oldest.records - oldest.records(through: handedOut))
            let inFlight = UInt64(oldest.records(through: handedOut) - oldest.records(through: acknowledged))
            dropped = Self.sum(dropped, lost)
            droppedPastBound = Self.sum(droppedPastBound, lost)
            unconfirmed = Self.sum(unconfirmed, inFlight)
            counted = counted || lost + inFlight > 0
            stateDirty = true
            removeSegment(0)
        }
        // The counts outlast a restart on a full disk.
        if counted { writeMarks() }
    }

    /// Deletes segment `i`: its file, and the reader's descriptor when it reads it.
    private func removeSegment(_ i: Int) {
        let segment = segments.remove(at: i)
        if reader?.path == segment.path { closeReader() }
        if unlink(segment.path) != 0, errno != ENOENT {
            notes.append("\(segment.path): cannot be deleted (\(SystemError("unlink", segment.path).message)); it is left as it is")
        }
    }

}
