/// I2C transfers as flat bytes, the way the recording bus notes them on the hot path (no array per
/// transfer or per sample): each transfer is its operation, address, register, count, errno (4 bytes,
/// little-endian) and data length, then its data. `FrameEncoder.appendSample` reads them in place;
/// `transactions(_:)` makes `I2CTransaction`s of them where a record is built.
public enum TransactionBytes {
    /// Bytes before a transfer's data.
    public static let headerSize = 9

    /// Writes one transfer at `to`, which has room for `headerSize` and the data (at most 255 bytes of it).
    @inlinable @inline(__always)
    public static func write(_ operation: I2CTransaction.Operation, address: UInt8, register: UInt8, count: UInt8, errno: Int32,
                             data: UnsafeRawBufferPointer, to p: UnsafeMutablePointer<UInt8>) {
        let e = UInt32(bitPattern: errno)
        let n = min(data.count, 255)
        p[0] = operation.rawValue
        p[1] = address
        p[2] = register
        p[3] = count
        p[4] = UInt8(truncatingIfNeeded: e)
        p[5] = UInt8(truncatingIfNeeded: e >> 8)
        p[6] = UInt8(truncatingIfNeeded: e >> 16)
        p[7] = UInt8(truncatingIfNeeded: e >> 24)
        p[8] = UInt8(truncatingIfNeeded: n)
        if n > 0 { (p + headerSize).initialize(from: data.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n) }
    }

    /// Writes one transfer into `bytes` at `offset`, growing it (to twice its size, or to what the transfer
    /// needs) when there is no room; returns where the transfer ends.
    @inlinable
    public static func write(_ operation: I2CTransaction.Operation, address: UInt8, register: UInt8, count: UInt8, errno: Int32,
                             data: UnsafeRawBufferPointer, into bytes: inout [UInt8], at offset: Int) -> Int {
        let end = offset + headerSize + min(data.count, 255)
        if end > bytes.count { bytes.append(contentsOf: repeatElement(0, count: max(end, 2 * bytes.count) - bytes.count)) }
        bytes.withUnsafeMutableBufferPointer { b in
            write(operation, address: address, register: register, count: count, errno: errno, data: data, to: b.baseAddress! + offset)
        }
        return end
    }

    /// Appends one transfer to `bytes`.
    public static func append(_ operation: I2CTransaction.Operation, address: UInt8, register: UInt8, count: UInt8, errno: Int32,
                              data: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        let end = write(operation, address: address, register: register, count: count, errno: errno, data: data, into: &bytes, at: bytes.count)
        bytes.removeLast(bytes.count - end)
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
        guard let base = b.baseAddress else { return (0, 0) }
        var i = 0, count = 0, data = 0
        while i &+ headerSize <= b.count {
            let n = Int(base[i &+ 8])
            count &+= 1
            data &+= n
            i &+= headerSize &+ n
        }
        return (count, data)
    }

    /// Whether `a` and `b` hold transfers of the same shapes (all but the data bytes), in the same order.
    @inline(__always) static func sameShape(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
        var i = 0
        while i &+ headerSize <= a.count {
            // The header's first eight bytes in one load, then the data length.
            guard ra.loadUnaligned(fromByteOffset: i, as: UInt64.self) == rb.loadUnaligned(fromByteOffset: i, as: UInt64.self),
                  pa[i &+ 8] == pb[i &+ 8] else { return false }
            i &+= headerSize &+ Int(pa[i &+ 8])
        }
        return true
    }
}
