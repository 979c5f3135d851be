/// The payload's number and string codings: LEB128 varints (7 bits a byte, low first), zigzag for signed
/// values, strings as a varint length and UTF-8.
extension Array where Element == UInt8 {
    @inline(__always) mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always) mutating func appendVarint(_ value: Int) {
        appendVarint(UInt64(value))
    }

    @inline(__always) mutating func appendZigzag(_ value: Int64) {
        appendVarint(Zigzag.encode(value))
    }

    mutating func appendString(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            appendVarint(utf8.count)
            append(contentsOf: utf8)
        }
    }

    mutating func appendLE(_ value: UInt32) {
        for k in 0..<4 { append(UInt8(truncatingIfNeeded: value >> (8 * k))) }
    }

    mutating func appendLE(_ value: UInt64) {
        for k in 0..<8 { append(UInt8(truncatingIfNeeded: value >> (8 * k))) }
    }

    mutating func setLE(_ value: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count, "setLE past the end")
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    mutating func setLE(_ value: UInt64, at offset: Int) {
        precondition(offset >= 0 && offset + 8 <= count, "setLE past the end")
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self) }
    }
}

enum Zigzag {
    @inline(__always) static func encode(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    @inline(__always) static func decode(_ u: UInt64) -> Int64 { Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1))) }
}

/// What is wrong with a frame, for `RecordingError.corrupt`'s reason.
struct DecodeFailure: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Reads the codings above from `bytes[position..<end]`, every read bounds-checked.
struct ByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int
    let end: Int

    var remaining: Int { end - position }

    mutating func byte() throws(DecodeFailure) -> UInt8 {
        guard position < end else { throw DecodeFailure("payload ends inside a record") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func varint() throws(DecodeFailure) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw DecodeFailure("payload ends inside a number") }
            let b = bytes[position]
            position += 1
            if shift == 63 && b > 1 { throw DecodeFailure("number over 64 bits") }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
    }

    mutating func zigzag() throws(DecodeFailure) -> Int64 {
        Zigzag.decode(try varint())
    }

    /// A varint that counts something: at most `limit`.
    mutating func count(atMost limit: Int, _ what: StaticString) throws(DecodeFailure) -> Int {
        let v = try varint()
        guard v <= UInt64(limit) else { throw DecodeFailure("\(what) \(v) over its limit \(limit)") }
        return Int(v)
    }

    mutating func take(_ n: Int) throws(DecodeFailure) -> UnsafeBufferPointer<UInt8> {
        guard n >= 0, n <= remaining else { throw DecodeFailure("payload ends inside a record") }
        defer { position += n }
        return UnsafeBufferPointer(rebasing: bytes[position..<(position + n)])
    }

    mutating func string() throws(DecodeFailure) -> String {
        let n = try count(atMost: remaining, "string length")
        return String(decoding: try take(n), as: UTF8.self)
    }

    mutating func u64() throws(DecodeFailure) -> UInt64 {
        let b = try take(8)
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(b[k]) << (8 * k) }
        return v
    }
}
