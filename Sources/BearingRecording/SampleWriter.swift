import BearingModel

/// Writes a sensor sample's record through a pointer, into room its caller made (`bound`): the hot path,
/// 100–200 samples a second.
struct SampleWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private var p: UnsafeMutablePointer<UInt8>

    init(_ room: UnsafeMutablePointer<UInt8>) {
        start = room
        p = room
    }

    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: p - start) }

    /// The most bytes a sample record takes, whichever way its transactions are written: type, time delta,
    /// time, then the transactions in full or as data changes.
    @inline(__always) static func bound(transactions count: Int, dataLength: Int) -> Int {
        1 + 10 + 20 + 10 + count * 24 + dataLength + (dataLength + 7) / 8
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        p.pointee = b
        p += 1
    }

    @inline(__always) mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            p.pointee = UInt8(truncatingIfNeeded: v) | 0x80
            p += 1
            v >>= 7
        }
        p.pointee = UInt8(truncatingIfNeeded: v)
        p += 1
    }

    @inline(__always) mutating func zigzag(_ v: Int64) {
        varint(Zigzag.encode(v))
    }

    @inline(__always) mutating func timestamp(_ t: GPSTimestamp) {
        zigzag(t.seconds)
        zigzag(Int64(t.nanoseconds))
    }
}

extension SampleWriter {
    /// The transfers of flat bytes (`TransactionBytes`) holding `count` of them, in full.
    mutating func transactions(flat b: UnsafeBufferPointer<UInt8>, count: Int) {
        varint(UInt64(count))
        var i = 0
        while i + TransactionBytes.headerSize <= b.count {
            let n = Int(b[i + 8])
            byte(b[i])
            byte(b[i + 1])
            byte(b[i + 2])
            byte(b[i + 3])
            varint(UInt64(n))
            zigzag(Int64(TransactionBytes.errno(b, at: i)))
            if n > 0 { p.initialize(from: b.baseAddress! + i + TransactionBytes.headerSize, count: n) }
            p += n
            i += TransactionBytes.headerSize + n
        }
    }

    /// `now`'s data bytes XOR-ed with `before`'s (same shape, `dataLength` bytes in all): a bitmap of the
    /// non-zero results (bit i % 8 of byte i / 8 for data byte i, counted across the transfers), then those
    /// results.
    mutating func dataChanges(flat now: UnsafeBufferPointer<UInt8>, from before: UnsafeBufferPointer<UInt8>, dataLength: Int) {
        let bitmap = p
        let bitmapBytes = (dataLength &+ 7) &>> 3
        var out = p + bitmapBytes
        guard let a = now.baseAddress, let b = before.baseAddress else { return }
        // Bits gather in a register and are stored a byte at a time.
        var bits = 0, i = 0, at = bitmap
        var k = 0
        while k &+ TransactionBytes.headerSize <= now.count {
            var j = k &+ TransactionBytes.headerSize
            let end = j &+ Int(a[k &+ 8])
            while j < end {
                let x = a[j] ^ b[j]
                out.pointee = x
                let changed = Int(truncatingIfNeeded: (x | (0 &- x)) >> 7)
                out += changed
                bits |= changed &<< (i & 7)
                i &+= 1
                if i & 7 == 0 {
                    at.pointee = UInt8(truncatingIfNeeded: bits)
                    at += 1
                    bits = 0
                }
                j &+= 1
            }
            k = end
        }
        if i & 7 != 0 { at.pointee = UInt8(truncatingIfNeeded: bits) }
        p = out
    }
}
