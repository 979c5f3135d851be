import BearingModel

/// A record's first byte: its kind, and for a sensor sample the sensor and two flags.
enum RecordType {
    static let environment: UInt8 = 0x01
    static let config: UInt8 = 0x02
    static let calibration: UInt8 = 0x03
    static let sensorConnect: UInt8 = 0x04
    static let state: UInt8 = 0x05
    static let sensorFailure: UInt8 = 0x08
    static let gpsd: UInt8 = 0x09
    static let gpsdFailure: UInt8 = 0x0A
    static let timer: UInt8 = 0x0B
    /// `0x40 | flags | sensor` (sensor in the low four bits): a sensor sample.
    static let sample: UInt8 = 0x40
    /// The sample's transactions have the shape of the previous sample of its sensor in the frame.
    static let sameShape: UInt8 = 0x20
    /// The sample's time is written in full, not as a residual from its prediction.
    static let fullTime: UInt8 = 0x10
}

/// A sample's time predicted from the previous sample of its sensor: that time plus the recording clock's
/// advance since, so what is stored is the (small) difference between the two clocks' advances.
enum SampleTime {
    /// The residual, in nanoseconds, that `decode` turns back into `time`; nil when `time` must be written
    /// in full (its nanoseconds outside 0..<10⁹, or numbers too large).
    @inline(__always) static func residual(_ time: GPSTimestamp, previous: GPSTimestamp, elapsedMicros: UInt64) -> Int64? {
        guard time.nanoseconds >= 0, time.nanoseconds < 1_000_000_000 else { return nil }
        let (ds, o1) = time.seconds.subtractingReportingOverflow(previous.seconds)
        let (dsn, o2) = ds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, o3) = dsn.addingReportingOverflow(Int64(time.nanoseconds))
        let (advance, o4) = Int64(bitPattern: elapsedMicros).multipliedReportingOverflow(by: 1000)
        let (predicted, o5) = Int64(previous.nanoseconds).addingReportingOverflow(advance)
        let (r, o6) = total.subtractingReportingOverflow(predicted)
        return o1 || o2 || o3 || o4 || o5 || o6 ? nil : r
    }

    /// The time `residual` stands for (wrapping arithmetic: hostile input cannot trap).
    static func decode(residual: Int64, previous: GPSTimestamp, elapsedMicros: UInt64) -> GPSTimestamp {
        let total = Int64(previous.nanoseconds) &+ Int64(bitPattern: elapsedMicros) &* 1000 &+ residual
        var q = total / 1_000_000_000
        var n = total - q &* 1_000_000_000
        if n < 0 { q &-= 1; n &+= 1_000_000_000 }
        return GPSTimestamp(seconds: previous.seconds &+ q, nanoseconds: Int32(n))
    }
}

extension Array where Element == UInt8 {
    mutating func appendTimestamp(_ t: GPSTimestamp) {
        appendZigzag(t.seconds)
        appendZigzag(Int64(t.nanoseconds))
    }

    mutating func appendTransactions(_ ts: [I2CTransaction]) {
        appendVarint(ts.count)
        for t in ts {
            append(t.operation.rawValue)
            append(t.address)
            append(t.register)
            append(t.count)
            appendVarint(t.data.count)
            appendZigzag(Int64(t.errno))
            append(contentsOf: t.data)
        }
    }

    mutating func appendState(_ state: ConnectionState) {
        switch state {
        case .connecting(let attempt):
            append(0)
            appendZigzag(Int64(attempt))
        case .connected:
            append(1)
        case .disconnected(let reason, let retryIn):
            append(2)
            switch reason {
            case .openFailed(let m): append(0); appendString(m)
            case .closedByPeer: append(1)
            case .silence(let seconds): append(2); appendLE(seconds.bitPattern)
            case .error(let m): append(3); appendString(m)
            case .stopped: append(4)
            }
            if let retryIn {
                append(1)
                appendLE(retryIn.bitPattern)
            } else {
                append(0)
            }
        }
    }
}

extension ByteReader {
    mutating func timestamp() throws(DecodeFailure) -> GPSTimestamp {
        let seconds = try zigzag()
        let nanoseconds = try zigzag()
        guard let n = Int32(exactly: nanoseconds) else { throw DecodeFailure("nanoseconds \(nanoseconds) out of range") }
        return GPSTimestamp(seconds: seconds, nanoseconds: n)
    }

    mutating func transactions() throws(DecodeFailure) -> [I2CTransaction] {
        // A transaction takes at least six bytes.
        let n = try count(atMost: remaining / 6, "transaction count")
        var ts: [I2CTransaction] = []
        ts.reserveCapacity(n)
        for _ in 0..<n {
            let op = try byte()
            guard let operation = I2CTransaction.Operation(rawValue: op) else { throw DecodeFailure("bad I2C operation \(op)") }
            let address = try byte(), register = try byte(), count = try byte()
            let length = try self.count(atMost: remaining, "data length")
            let e = try zigzag()
            guard let errno = Int32(exactly: e) else { throw DecodeFailure("errno \(e) out of range") }
            let data = Array(try take(length))
            ts.append(I2CTransaction(operation, address: address, register: register, count: count, data: data, errno: errno))
        }
        return ts
    }

    /// `previous` with the data changes `appendDataChanges` wrote applied.
    mutating func dataChanges(from previous: [I2CTransaction]) throws(DecodeFailure) -> [I2CTransaction] {
        var length = 0
        for t in previous { length += t.data.count }
        let bitmap = try take((length + 7) >> 3)
        var ts = previous
        var i = 0
        for k in ts.indices {
            for j in ts[k].data.indices {
                if bitmap[i >> 3] & (1 << UInt8(i & 7)) != 0 {
                    let x = try byte()
                    ts[k].data[j] ^= x
                }
                i += 1
            }
        }
        return ts
    }

    mutating func state() throws(DecodeFailure) -> ConnectionState {
        switch try byte() {
        case 0:
            let attempt = try zigzag()
            guard let a = Int(exactly: attempt) else { throw DecodeFailure("attempt \(attempt) out of range") }
            return .connecting(attempt: a)
        case 1:
            return .connected
        case 2:
            let reason: DisconnectReason
            switch try byte() {
            case 0: reason = .openFailed(try string())
            case 1: reason = .closedByPeer
            case 2: reason = .silence(seconds: Double(bitPattern: try u64()))
            case 3: reason = .error(try string())
            case 4: reason = .stopped
            case let r: throw DecodeFailure("bad disconnect reason \(r)")
            }
            switch try byte() {
            case 0: return .disconnected(reason, retryIn: nil)
            case 1: return .disconnected(reason, retryIn: Double(bitPattern: try u64()))
            case let f: throw DecodeFailure("bad retry flag \(f)")
            }
        case let s:
            throw DecodeFailure("bad connection state \(s)")
        }
    }
}
