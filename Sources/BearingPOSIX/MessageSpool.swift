import BearingCore
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
///   last `saveState()` may be sent again (duplicates by sequence number, never a loss).
///
/// Layout, under `directory`:
/// - segments `<first seq, 20 digits>.spool` of `SpoolRecord` lines, the newest one appended to;
/// - `acked`: the last acknowledged sequence number, one fixed-size record rewritten in place (20 digits, a
///   tab, the CRC-32 of the digits in hex, a newline), so that a torn or foreign record is told apart;
/// - `state`: the last acknowledged sequence number, the next one to give and the drops so far, replaced
///   atomically (`AtomicFile`) by `saveState()`.
///
/// On opening, the acknowledged mark is the larger of `state`'s and a valid `acked` record's (numbering goes on
/// after it, should the spool's lines end before it); a record that is not valid is ignored, with a note.
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
    /// corrupt segment. Kept across restarts.
    public private(set) var dropped: UInt64 = 0
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

    /// Opens (making it when missing) the spool in `directory`; throws when the directory cannot be made
    /// or read.
    public init(directory: String, maxBytes: Int) throws(SystemError) {
        self.directory = directory
        self.maxBytes = max(maxBytes, 8 * 4096)
        segmentBytes = self.maxBytes / 8
        try AtomicFile.makeDirectories(directory, mode: 0o750)
        loadState()
        let writtenThrough = loadWrittenThrough()
        acknowledged = max(acknowledged, writtenThrough ?? 0)
        try scan()
        if acknowledged >= nextSeq {
            // The mark is evidence that its numbers were given (the lines may be lost: a power cut that wrote
            // `acked` before them): numbering goes on after it, so that no number is given twice.
            notes.append("\(ackedPath): acknowledged mark \(acknowledged) is past the last number in the spool (\(nextSeq - 1)); numbering goes on at \(acknowledged + 1)")
            nextSeq = acknowledged + 1
            stateDirty = true
        }
        // A fresh, stale, bad or clamped record is replaced at once.
        if writtenThrough != acknowledged { writeThrough() }
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
        let seq = nextSeq
        nextSeq += 1
        stateDirty = true
        let line = SpoolRecord(seq: seq, topic: topic, payload: payload(seq)).line
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
            dropped += 1
            throw error
        }
        return seq
    }

    /// Appends `line` to the current segment in one `write`; a short write is cut off again, so the file
    /// stays whole lines. Returns the error, if any.
    private func writeLine(_ line: [UInt8]) -> SystemError? {
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
            var start = lines.startIndex
            while out.count < limit, let nl = lines[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = lines[start..<nl]
                start = nl + 1
                switch SpoolRecord.parse(line) {
                case .success(let r): if r.seq > acknowledged { out.append(r) }
                case .failure(let f): notes.append("\(segment.path) at byte \(cursor.offset + line.startIndex - lines.startIndex): \(f); the line is not sent")
                }
            }
            cursor.offset += start - lines.startIndex
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
        writeThrough()
        while segments.count > 1, segments[0].last <= acknowledged { removeSegment(0) }
    }

    /// Writes the acknowledged mark over the record in `acked`: one `pwrite`, no fsync. A failure is noted
    /// once until a write succeeds; meanwhile a crash falls back on `state` (duplicates, never a loss).
    private func writeThrough() {
        let record = Self.ackedRecord(acknowledged)
        do throws(SystemError) {
            if ackedFD < 0 {
                ackedFD = try Syscall.check("open", ackedPath) { open(ackedPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o640) }
            }
            let fd = ackedFD
            let n = try Syscall.check("pwrite", ackedPath) { record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
            guard n == record.count else { throw SystemError("pwrite", "\(ackedPath): \(n) of \(record.count) bytes", errno: ENOSPC) }
            if writeThroughFailure != nil { notes.append("\(ackedPath): the acknowledged mark is written through again") }
            writeThroughFailure = nil
        } catch {
            if writeThroughFailure == nil {
                notes.append("cannot write the acknowledged mark through: \(error); until it can, a crash sends again what was acknowledged after the last save of \(statePath)")
            }
            writeThroughFailure = error.errno
        }
    }

    /// Writes `state` when it changed: the durable save (fsync'd, atomic) that a power cut falls back on.
    public func saveState() throws(SystemError) {
        guard stateDirty else { return }
        let text = "acked \(acknowledged)\nnext \(nextSeq)\ndropped \(dropped)\nunconfirmed \(unconfirmed)\n"
        try AtomicFile.write(Array(text.utf8), to: statePath, mode: 0o640)
        stateDirty = false
    }

    /// Closes its files (they are opened again when needed).
    public func close() {
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
        guard let text = try? AtomicFile.readText(statePath, limit: 4096) else { return }
        var values: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let v = UInt64(parts[1]) else {
                notes.append("\(statePath): line \"\(line.prefix(40))\" is not KEY NUMBER; ignored: messages still spooled are sent again unless \(ackedPath) marks them acknowledged")
                return
            }
            values[String(parts[0])] = v
        }
        // Numbers past 2^63 are no spool's (and would overflow): the file is damaged.
        if let (key, v) = values.first(where: { $0.value > UInt64(Int64.max) }) {
            notes.append("\(statePath): \(key) \(v) is out of range; ignored: messages still spooled are sent again unless \(ackedPath) marks them acknowledged")
            return
        }
        acknowledged = values["acked"] ?? 0
        nextSeq = max(values["next"] ?? 1, acknowledged + 1)
        dropped = values["dropped"] ?? 0
        unconfirmed = values["unconfirmed"] ?? 0
    }

    /// The mark in `acked`, when it holds a valid record; a missing or empty file holds none, and anything
    /// else is ignored with a note.
    private func loadWrittenThrough() -> UInt64? {
        let fault: String
        do throws(SystemError) {
            let bytes = try AtomicFile.read(ackedPath, limit: 4096)
            if bytes.isEmpty { return nil }
            switch Self.parseAckedRecord(bytes) {
            case .success(let mark): return mark
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

    private static let ackedRecordSize = 30

    /// The record of `acked` for `mark`: its 20 digits, a tab, their CRC-32 in hex, a newline.
    private static func ackedRecord(_ mark: UInt64) -> [UInt8] {
        let digits = String(mark)
        var bytes = Array((String(repeating: "0", count: 20 - digits.count) + digits).utf8)
        let crc = CRC32.hex(CRC32.checksum(bytes))
        bytes.append(UInt8(ascii: "\t"))
        bytes += Array(crc.utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static func parseAckedRecord(_ bytes: [UInt8]) -> Result<UInt64, AckedRecordFault> {
        guard bytes.count == ackedRecordSize else {
            return .failure(AckedRecordFault(reason: "\(bytes.count) bytes, not a record of \(ackedRecordSize)"))
        }
        let digits = bytes[0..<20]
        guard bytes[20] == UInt8(ascii: "\t"), bytes[29] == UInt8(ascii: "\n"), digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return .failure(AckedRecordFault(reason: "not a record (20 digits, a tab, a CRC-32, a newline)"))
        }
        let expected = CRC32.hex(CRC32.checksum(digits))
        let found = String(decoding: bytes[21..<29], as: UTF8.self)
        guard found == expected else { return .failure(AckedRecordFault(reason: "CRC-32 \(found) does not match the record's (\(expected))")) }
        guard let mark = UInt64(String(decoding: digits, as: UTF8.self)), mark < UInt64.max else {
            return .failure(AckedRecordFault(reason: "the number is out of range"))
        }
        return .success(mark)
    }

    private func scan() throws(SystemError) {
        guard let dir = opendir(directory) else { throw SystemError("opendir", directory) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".spool"), name.count == 26, UInt64(name.prefix(20)) != nil { names.append(name) }
        }
        closedir(dir)
        var previous: UInt64 = 0
        for (n, name) in names.sorted().enumerated() {
            let path = "\(directory)/\(name)"
            let bytes: [UInt8]
            do { bytes = try AtomicFile.read(path, limit: 1 << 30) } catch { setAside(path, error.description, records: 0); continue }
            var segment = Segment(first: UInt64(name.prefix(20))!, last: 0, records: 0, bytes: 0, path: path)
            var fault: String?
            var lineNumber = 0
            var start = 0
            var lowest = UInt64.max
            while start < bytes.count {
                lineNumber += 1
                guard let nl = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                    if n == names.count - 1 {
                        // A power cut mid-write: the lines before it stand.
                        notes.append("\(path) line \(lineNumber): \(SpoolRecord.Fault.unterminated); cut off (\(bytes.count - start) bytes)")
                        if truncate(path, off_t(start)) != 0 { fault = SystemError("truncate", path).description }
                    } else {
                        fault = "line \(lineNumber): \(SpoolRecord.Fault.unterminated)"
                    }
                    break
                }
                switch SpoolRecord.parse(bytes[start..<nl]) {
                case .failure(let f):
                    if fault == nil { fault = "line \(lineNumber): \(f)" }
                case .success(let r) where r.seq <= previous:
                    if fault == nil { fault = "line \(lineNumber): sequence number \(r.seq) after \(previous)" }
                case .success(let r):
                    // After a fault the good lines are only counted (and their numbers never given again).
                    if fault == nil { segment.add(r.seq) }
                    previous = r.seq
                    lowest = min(lowest, r.seq)
                }
                start = nl + 1
            }
            segment.bytes = start
            if let fault {
                // Its numbers run from the lowest to the highest read (a line too damaged to read has one too).
                let from = max(lowest, acknowledged + 1)
                setAside(path, fault, records: lowest == .max || from > previous ? 0 : Int(previous - from + 1))
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
    private func setAside(_ path: String, _ fault: String, records: Int) {
        let aside = "\(path).corrupt"
        let moved = rename(path, aside) == 0
        dropped += UInt64(records)
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
        while bytes + count > maxBytes, segments.count > 1 {
            let oldest = segments[0]
            let handedOut = max(acknowledged, sent)
            let lost = UInt64(oldest.records - oldest.records(through: handedOut))
            dropped += lost
            droppedPastBound += lost
            unconfirmed += UInt64(oldest.records(through: handedOut) - oldest.records(through: acknowledged))
            stateDirty = true
            removeSegment(0)
        }
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
