/// gpsd messages coded LZ77-style against a reference (an earlier message of the frame): the message is
/// literals and copies from the window "reference, then the message so far". A copy's source is stored
/// relative to where the previous copy's source ended, so a message that follows its reference's layout
/// costs about two bytes per changed stretch.
///
/// Layout: varint message length n; then, until n bytes are produced, sequences: a token byte (literal
/// count L in the high four bits, copy length − 4 = M in the low four; 15 means 15 + a varint that
/// follows), the L literal bytes, and — unless the message is complete — a zigzag varint
/// `source − expected` (then M's varint, if any): copy M + 4 bytes from window position `source`, byte by
/// byte, so a copy may overlap what it writes; `expected` is the window position after the previous
/// copy's source (0 at first).
struct MessageEncoder: Sendable {
    private static let hashBits = 12
    private static let chainDepth = 16
    private static let minimumCopy = 4

    private var window: [UInt8] = []
    private var head = [Int32](repeating: -1, count: 1 << hashBits)
    private var chain: [Int32] = []

    mutating func encode(_ message: [UInt8], reference: [UInt8], into out: inout [UInt8]) {
        out.appendVarint(message.count)
        guard !message.isEmpty else { return }
        window.removeAll(keepingCapacity: true)
        window.append(contentsOf: reference)
        window.append(contentsOf: message)
        chain.removeAll(keepingCapacity: true)
        chain.append(contentsOf: repeatElement(-1, count: window.count))
        head.withUnsafeMutableBufferPointer { $0.update(repeating: -1) }
        let start = reference.count
        window.withUnsafeBufferPointer { w in
            head.withUnsafeMutableBufferPointer { head in
                chain.withUnsafeMutableBufferPointer { chain in
                    Self.encode(w, start: start, head: head, chain: chain, into: &out)
                }
            }
        }
    }

    private static func encode(_ w: UnsafeBufferPointer<UInt8>, start: Int, head: UnsafeMutableBufferPointer<Int32>,
                               chain: UnsafeMutableBufferPointer<Int32>, into out: inout [UInt8]) {
        let end = w.count
        @inline(__always) func insert(_ p: Int) {
            let word = UInt32(w[p]) | UInt32(w[p + 1]) << 8 | UInt32(w[p + 2]) << 16 | UInt32(w[p + 3]) << 24
            let h = Int((word &* 2_654_435_761) >> UInt32(32 - hashBits))
            chain[p] = head[h]
            head[h] = Int32(p)
        }
        @inline(__always) func candidates(_ p: Int) -> Int32 {
            let word = UInt32(w[p]) | UInt32(w[p + 1]) << 8 | UInt32(w[p + 2]) << 16 | UInt32(w[p + 3]) << 24
            return head[Int((word &* 2_654_435_761) >> UInt32(32 - hashBits))]
        }
        @inline(__always) func matchLength(_ source: Int, _ p: Int) -> Int {
            var n = 0
            while p + n < end && w[source + n] == w[p + n] { n += 1 }
            return n
        }
        func sequence(_ from: Int, _ to: Int, copy length: Int, delta: Int) {
            let l = to - from, m = length - minimumCopy
            out.append(UInt8(min(l, 15)) << 4 | UInt8(min(max(m, 0), 15)))
            if l >= 15 { out.appendVarint(l - 15) }
            if l > 0 { out.append(contentsOf: UnsafeBufferPointer(rebasing: w[from..<to])) }
            guard length > 0 else { return }
            out.appendZigzag(Int64(delta))
            if m >= 15 { out.appendVarint(m - 15) }
        }

        var p = 0
        while p < start && p + 4 <= end {
            insert(p)
            p += 1
        }
        var literalStart = start
        var expected = 0
        p = start
        while p + minimumCopy <= end {
            var best = 0, source = 0
            if expected < p {
                best = matchLength(expected, p)
                source = expected
            }
            var c = candidates(p)
            var depth = 0
            while c >= 0 && depth < chainDepth {
                let n = matchLength(Int(c), p)
                if n > best {
                    best = n
                    source = Int(c)
                }
                c = chain[Int(c)]
                depth += 1
            }
            if best >= minimumCopy {
                sequence(literalStart, p, copy: best, delta: source - expected)
                expected = source + best
                let next = p + best
                while p < next {
                    if p + 4 <= end { insert(p) }
                    p += 1
                }
                literalStart = p
            } else {
                insert(p)
                p += 1
            }
        }
        if literalStart < end { sequence(literalStart, end, copy: 0, delta: 0) }
    }
}

enum MessageDecoder {
    /// The message `MessageEncoder` wrote against `reference`; `budget` (bytes a frame's messages may still
    /// decode to) shrinks by its length.
    static func decode(_ r: inout ByteReader, reference: [UInt8], budget: inout Int) throws(DecodeFailure) -> [UInt8] {
        let n = try r.count(atMost: RecordingFormat.maxPayload, "gpsd message length")
        guard n <= budget else { throw DecodeFailure("gpsd messages decode to over \(RecordingFormat.maxDecodedMessageBytes) bytes") }
        budget -= n
        guard n > 0 else { return [] }
        let start = reference.count
        var failure: DecodeFailure?
        let window = [UInt8](unsafeUninitializedCapacity: start + n) { w, initialized in
            if start > 0 { reference.withUnsafeBufferPointer { w.baseAddress!.initialize(from: $0.baseAddress!, count: start) } }
            do {
                try tokens(&r, into: w.baseAddress!, start: start, end: start + n)
                initialized = start + n
            } catch {
                failure = DecodeFailure(reason(error))
                initialized = start
            }
        }
        if let failure { throw failure }
        return start == 0 ? window : Array(window[start...])
    }

    /// Decodes tokens into `w[start..<end]`; `w[..<start]` holds the reference.
    private static func tokens(_ r: inout ByteReader, into w: UnsafeMutablePointer<UInt8>, start: Int, end: Int) throws(DecodeFailure) {
        var o = start
        var expected = 0
        while o < end {
            let token = try r.byte()
            var l = Int(token >> 4)
            if l == 15 { l += try r.count(atMost: end - o, "literal count") }
            guard l <= end - o else { throw DecodeFailure("literals run past the gpsd message's end") }
            let literals = try r.take(l)
            if l > 0 { (w + o).initialize(from: literals.baseAddress!, count: l) }
            o += l
            guard o < end else { break }
            let (source, overflow) = Int64(expected).addingReportingOverflow(try r.zigzag())
            var m = Int(token & 0x0F)
            if m == 15 { m += try r.count(atMost: end - o, "copy length") }
            let length = m + 4
            guard length <= end - o else { throw DecodeFailure("copy runs past the gpsd message's end") }
            guard !overflow, source >= 0, source < Int64(o) else { throw DecodeFailure("copy from outside the gpsd message's window") }
            copy(w, from: Int(source), to: o, count: length)
            o += length
            expected = Int(source) + length
        }
    }

    /// Copies as a byte-by-byte loop would, so that a source overlapping the destination repeats what was
    /// just written (period `to − from`), in chunks that double.
    private static func copy(_ w: UnsafeMutablePointer<UInt8>, from source: Int, to destination: Int, count: Int) {
        let period = destination - source
        var done = 0
        while done < count {
            let chunk = min(count - done, period + done - done % period)
            (w + destination + done).initialize(from: w + source + done % period, count: chunk)
            done += chunk
        }
    }
}
