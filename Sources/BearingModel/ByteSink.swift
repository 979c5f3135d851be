/// Where the number and string formatters write: a byte array, or a JSON writer's own buffer.
public protocol ByteSink: ~Copyable {
    mutating func append(_ byte: UInt8)
    /// The last `width` (1…20) decimal digits of `v`, zero-padded on the left.
    mutating func appendDigits(_ v: UInt, width: Int)
    /// `q` as a decimal with a point before its last `decimals` (1…19) digits, e.g. 12345, 3 → `12.345`
    /// and 5, 3 → `0.005`.
    mutating func appendDecimal(_ q: UInt64, decimals: Int)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension ByteSink where Self: ~Copyable {
    @inlinable public mutating func appendDecimal(_ q: UInt64, decimals: Int) {
        var p: UInt64 = 1
        for _ in 0..<decimals { p &*= 10 }
        appendDigits(UInt(q / p))
        append(UInt8(ascii: "."))
        appendDigits(UInt(q % p), width: decimals)
    }

    @inlinable public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { append(byte) }
    }

    @inlinable public mutating func appendDigits(_ v: UInt, width: Int) {
        var divisor: UInt = 1
        for _ in 1..<min(max(width, 1), 20) { divisor &*= 10 }
        var v = width < 20 ? v % (divisor &* 10) : v
        while divisor > 0 {
            let digit = v / divisor
            v -= digit &* divisor
            append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit))
            divisor /= 10
        }
    }
}

extension ByteSink where Self: ~Copyable {
    /// The decimal digits of `v`, most significant first, as many as it has.
    @inlinable public mutating func appendDigits(_ v: UInt) {
        var width = 1
        var limit: UInt = 10
        while width < 20 && v >= limit { width += 1; limit &*= 10 }
        appendDigits(v, width: width)
    }
}

extension Array: ByteSink where Element == UInt8 {}
