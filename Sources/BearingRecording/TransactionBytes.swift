/// I2C transfers as flat bytes, the way the recording bus notes them on the hot path (no array per
/// transfer or per sample): each transfer is its operation, address, register, count, errno (4 bytes,
/// little-endian) and data length, then its data. `FrameEncoder.appendSample` reads them in place;
/// `transactions(_:)` makes `I2CTransaction`s of them where a record is built.
public enum TransactionBytes {
    /// Bytes before a transfer's data.
    public static let headerSize = 9

    /// Appends one transfer to `bytes`.
    @inline(__always)
    public static func append(_ operation: I2CTransaction.Operation, address: UInt8, register: UInt8, count: UInt8, errno: Int32,
                              data: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        let e = UInt32(bitPattern: errno)
        let n = min(data.count, 255)
        // Two block copies (the header from a tuple, then the data): no per-byte append.
        let header = (operation.rawValue, address, register, count, UInt8(truncatingIfNeeded: e), UInt8(truncatingIfNeeded: e >> 8),
                      UInt8(truncatingIfNeeded: e >> 16), UInt8(truncatingIfNeeded: e >> 24), UInt8(truncatingIfNeeded: n))
        withUnsafeBytes(of: header) { h in bytes.append(contentsOf: UnsafeBufferPointer(start: h.baseAddress!.assumingMemoryBound(to: UInt8.self), count: headerSize)) }
        if n > 0 { bytes.append(contentsOf: UnsafeBufferPointer(start: data.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)) }
    }

    /// `t` appended as flat bytes.
    public static func append(_ t: I2CTransaction, to bytes: inout [UInt8]) {
        t.data.withUnsafeBytes { d in
            append(t.operation, address: t.address, register: t.register, count: t.count, errno: t.errno, data: d, to: &bytes)
        }
    }

    /// The transfers of `bytes` (well formed: as `append` writes them).
    public static func transactions(_ bytes: UnsafeBufferPointer<UInt8>) -> [I2CTransaction] {
        var out: [I2CTransaction] = []
        var i = 0
        while i + headerSize <= bytes.count {
            let n = Int(bytes[i + 8])
            guard let op = I2CTransaction.Operation(rawValue: bytes[i]), i + headerSize + n <= bytes.count else { break }
            out.append(I2CTransaction(op, address: bytes[i + 1], register: bytes[i + 2], count: bytes[i + 3],
                                      data: Array(bytes[(i + headerSize)..<(i + headerSize + n)]), errno: errno(bytes, at: i)))
            i += headerSize + n
        }
        return out
    }

    @inline(__always) static func errno(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int32 {
        Int32(bitPattern: UInt32(b[i + 4]) | UInt32(b[i + 5]) << 8 | UInt32(b[i + 6]) << 16 | UInt32(b[i + 7]) << 24)
    }

    /// How many transfers `bytes` holds, and their data bytes in all.
    @inline(__always) static func summary(_ b: UnsafeBufferPointer<UInt8>) -> (count: Int, dataLength: Int) {
        var i = 0, count = 0, data = 0
        while i + headerSize <= b.count {
            let n = Int(b[i + 8])
            count += 1
            data += n
            i += headerSize + n
        }
        return (count, data)
    }

    /// Whether `a` and `b` hold transfers of the same shapes (all but the data bytes), in the same order.
    @inline(__always) static func sameShape(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var i = 0
        while i + headerSize <= a.count {
            for k in 0..<headerSize where a[i + k] != b[i + k] { return false }
            i += headerSize + Int(a[i + 8])
        }
        return true
    }
}
