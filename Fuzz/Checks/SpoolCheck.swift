// The spool line reader fuzz target's checks (Fuzz/Spool): a segment's bytes as a card may hold them after a
// crash, a power cut or a hand edit, through `SpoolLines` (which `MessageSpool` reads its files with).
//
// For any bytes: nothing crashes; the lines cover the bytes in order, each from the offset after the one
// before, numbered 1, 2, 3 …, without a newline inside, a newline after (only the last may be cut short);
// every record re-encodes (`SpoolRecord.line`) to exactly its line's bytes, its number in range and above
// the one before; a fault is what `SpoolRecord.parse` says of the line (`.order` when it parses, but its number
// is not above the one before); reading whole lines a read-ahead at a time, as `MessageSpool.take` does, from
// an offset in a slice, gives the same lines. The same again with every line's CRC made right, so that the
// fuzzer reaches past the checksum.
import BearingModel
import BearingMQTT

public enum SpoolCheck {
    static let newline = UInt8(ascii: "\n")

    /// Runs every check on `bytes`; returns a description of the first failure, nil when all hold.
    public static func failure(_ bytes: [UInt8]) -> String? {
        if let f = readingFailure(bytes) { return f }
        let fixed = withCRCsMadeRight(bytes)
        if fixed != bytes, let f = readingFailure(fixed) { return "with the CRCs made right: \(f)" }
        return nil
    }

    public static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) { FuzzFailure.abort("fuzz-spool", f) }
    }

    /// `bytes` with each line's last tab-separated field replaced by the CRC-32 of what comes before it.
    public static func withCRCsMadeRight(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        let lines = bytes.split(separator: newline, omittingEmptySubsequences: false)
        for (i, line) in lines.enumerated() {
            if let tab = line.lastIndex(of: UInt8(ascii: "\t")) {
                out += line[..<tab]
                out.append(UInt8(ascii: "\t"))
                out += Array(CRC32.hex(CRC32.checksum(line[..<tab])).utf8)
            } else {
                out += line
            }
            if i < lines.count - 1 { out.append(newline) }
        }
        return out
    }

    static func readingFailure(_ bytes: [UInt8]) -> String? {
        var reader = SpoolLines(bytes)
        var lines: [SpoolLine] = []
        var previous: UInt64 = 0
        var offset = 0
        while let line = reader.next() {
            let at = "line \(line.number) at \(line.offset)"
            guard line.number == lines.count + 1 else { return "\(at): numbered after line \(lines.count)" }
            guard line.offset == offset, line.length >= 0, line.offset + line.length <= bytes.count else {
                return "\(at), \(line.length) bytes: expected at \(offset), within \(bytes.count) bytes"
            }
            let text = bytes[line.offset..<line.offset + line.length]
            if text.contains(newline) { return "\(at): a newline inside" }
            let cutShort = line.outcome == .failure(.unterminated)
            if cutShort {
                if line.offset + line.length != bytes.count { return "\(at): cut short, yet not the end of the bytes" }
            } else if line.offset + line.length >= bytes.count || bytes[line.offset + line.length] != newline {
                return "\(at): no newline after it"
            }
            if line.end != line.offset + line.length + (cutShort ? 0 : 1) { return "\(at): end \(line.end)" }
            switch line.outcome {
            case .success(let r):
                let encoded = r.line
                if encoded != Array(text) + [newline] {
                    return "\(at): \(r) re-encodes as \(String(decoding: encoded, as: UTF8.self).debugDescription), not as read: \(String(decoding: text, as: UTF8.self).debugDescription)"
                }
                if !(1...SpoolRecord.maxSeq).contains(r.seq) { return "\(at): number \(r.seq) out of range, yet a record" }
                if r.seq <= previous { return "\(at): number \(r.seq) after \(previous), yet a record" }
                if !SpoolRecord.fits(r.topic) || !SpoolRecord.fits(r.payload) { return "\(at): a tab or newline in \(r)" }
                previous = r.seq
            case .failure(.order(let seq, let after)):
                guard after == previous, seq <= previous, case .success(let r) = SpoolRecord.parse(text), r.seq == seq else {
                    return "\(at): out of order (\(seq) after \(after)), with \(previous) before and \(SpoolRecord.parse(text)) alone"
                }
            case .failure(.unterminated):
                break
            case .failure(let f):
                let alone = SpoolRecord.parse(text)
                if alone != .failure(f) { return "\(at): \(f) in the reader, \(alone) alone" }
            }
            offset = line.end
            lines.append(line)
        }
        if offset != bytes.count || reader.end != bytes.count {
            return "the lines end at \(offset) (the reader at \(reader.end)), the bytes at \(bytes.count)"
        }
        if reader.previous != previous { return "the reader's last number \(reader.previous), the records' \(previous)" }

        // As `MessageSpool.take` reads: whole lines, at most a read-ahead from the cursor (more when no line
        // ends within it), from a slice of a buffer that holds other bytes before.
        let whole = lines.last.map { $0.outcome == .failure(.unterminated) ? $0.offset : $0.end } ?? 0
        let readAhead = SessionCheck.splitPoints(bytes).first ?? max(bytes.count, 1)
        let buffer = [UInt8](repeating: 0x2e, count: 3) + bytes[..<whole]
        var chunked: [SpoolLine] = []
        var cursor = 0
        var after: UInt64 = 0
        while cursor < whole {
            let window = bytes[cursor..<min(cursor + readAhead, whole)]
            let last = (window.lastIndex(of: newline) ?? bytes[cursor..<whole].firstIndex(of: newline)!) + 1
            var r = SpoolLines(buffer[cursor + 3..<last + 3], offset: cursor, after: after)
            while let line = r.next() { chunked.append(line) }
            guard r.end == last else { return "read from \(cursor) to \(last): the reader ends at \(r.end)" }
            cursor = last
            after = r.previous
        }
        let expected = lines.filter { $0.outcome != .failure(.unterminated) }
        func same(_ a: SpoolLine, _ b: SpoolLine) -> Bool { a.offset == b.offset && a.length == b.length && a.outcome == b.outcome }
        if chunked.count != expected.count || !zip(chunked, expected).allSatisfy(same) {
            let i = zip(chunked, expected).enumerated().first { !same($0.element.0, $0.element.1) }?.offset ?? min(chunked.count, expected.count)
            return "read \(readAhead) bytes at a time: line \(i + 1) is \(i < chunked.count ? "\(chunked[i])" : "missing"), read whole \(i < expected.count ? "\(expected[i])" : "none")"
        }
        return nil
    }
}
