import BearingModel
import BearingRecording
import XCTest

/// A deterministic generator, so a failing mutation can be found again.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A recording file of the given frames, and the offset of each frame in it.
func recordingFile(_ frames: [[RecordedEvent]]) -> (bytes: [UInt8], offsets: [Int]) {
    var bytes = RecordingFormat.header
    var offsets: [Int] = []
    var encoder = FrameEncoder()
    for events in frames {
        for e in events { encoder.append(e) }
        offsets.append(bytes.count)
        bytes += encoder.finishFrame() ?? []
    }
    return (bytes, offsets)
}

/// Every event of a file, and the damaged tail if the reading stopped at one.
func readAll(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> (events: [RecordedEvent], tail: RecordingReader.DamagedTail?) {
    var reader = try RecordingReader(bytes)
    var events: [RecordedEvent] = []
    while let e = try reader.next() {
        events.append(e)
        if events.count > bytes.count {
            XCTFail("more events than bytes: the reader loops", file: file, line: line)
            break
        }
    }
    return (events, reader.damagedTail)
}

/// A frame of `payload` as `FrameEncoder` would frame it, for payloads made by hand.
func handmadeFrame(_ payload: [UInt8], time: UInt64 = 1_000, count: UInt32) -> [UInt8] {
    var covered: [UInt8] = []
    let length = UInt32(payload.count)
    for k in 0..<4 { covered.append(UInt8(truncatingIfNeeded: length >> (8 * k))) }
    for k in 0..<8 { covered.append(UInt8(truncatingIfNeeded: time >> (8 * k))) }
    for k in 0..<4 { covered.append(UInt8(truncatingIfNeeded: count >> (8 * k))) }
    let crc = CRC32C.checksum(covered + payload)
    var frame: [UInt8] = [0xB5, 0x46, 0x52, 0x4D]
    frame += covered[0..<4]
    for k in 0..<4 { frame.append(UInt8(truncatingIfNeeded: crc >> (8 * k))) }
    frame += covered[4...]
    return frame + payload
}

/// Recomputes the CRC of every frame whose header still reads, so that a mutation reaches the decoder.
func refreshCRCs(_ bytes: inout [UInt8]) {
    var p = RecordingFormat.header.count
    while p + 24 <= bytes.count {
        let length = Int(UInt32(bytes[p + 4]) | UInt32(bytes[p + 5]) << 8 | UInt32(bytes[p + 6]) << 16 | UInt32(bytes[p + 7]) << 24)
        guard length <= bytes.count - p - 24 else { return }
        let crc = CRC32C.checksum(Array(bytes[(p + 4)..<(p + 8)]) + Array(bytes[(p + 12)..<(p + 24 + length)]))
        for k in 0..<4 { bytes[p + 8 + k] = UInt8(truncatingIfNeeded: crc >> (8 * k)) }
        p += 24 + length
    }
}

enum Samples {
    static let wall = GPSTimestamp(seconds: 1_748_779_200, nanoseconds: 250_000_000)

    static func imu(_ values: [Int16], status: UInt8 = 0x07) -> [I2CTransaction] {
        var data: [UInt8] = []
        for v in values { data += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        return [
            I2CTransaction(.readByte, address: 0x6A, register: 0x1E, count: 1, data: [status]),
            I2CTransaction(.readBlock, address: 0x6A, register: 0x22, count: UInt8(data.count), data: data),
        ]
    }

    static func magnetometer(_ values: [Int16]) -> [I2CTransaction] {
        var data: [UInt8] = []
        for v in values { data += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        return [
            I2CTransaction(.readByte, address: 0x1E, register: 0x27, count: 1, data: [0x0F]),
            I2CTransaction(.readBlock, address: 0x1E, register: 0x28, count: 6, data: data),
        ]
    }

    static let connect: [I2CTransaction] = [
        I2CTransaction(.probe, address: 0x1C, data: [0]),
        I2CTransaction(.probe, address: 0x1E, data: [1]),
        I2CTransaction(.probe, address: 0x6A, data: [2], errno: 16),
        I2CTransaction(.readByte, address: 0x1E, register: 0x0F, count: 1, data: [0x3D]),
        I2CTransaction(.writeByte, address: 0x1E, register: 0x20, count: 1, data: [0x7C]),
        I2CTransaction(.readBlock, address: 0x1E, register: 0x28, count: 6, data: [], errno: 121),
    ]

    static let tpv = Array(#"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2025-06-01T12:00:00.000Z","lat":59.912345678,"lon":10.751234567,"altHAE":45.123,"speed":2.345,"track":123.4567}"#.utf8)
    static let sky = Array(#"{"class":"SKY","device":"/dev/ttyACM0","satellites":[{"PRN":1,"el":45.0,"az":120.0,"ss":35.0,"used":true},{"PRN":7,"el":12.0,"az":301.0,"ss":20.0,"used":false}]}"#.utf8)

    /// One frame's worth of every record kind, with edge values.
    static func everyKind(from t: UInt64) -> [RecordedEvent] {
        [
            RecordedEvent(time: t, .environment([.init("bearing", "1.4.0"), .init("", ""), .init("kernel", "6.6.51+rpt-rpi-v8 ✓ ünï")])),
            RecordedEvent(time: t, .environment([])),
            RecordedEvent(time: t + 1, .config("gpsd:\n  host: 127.0.0.1\n")),
            RecordedEvent(time: t + 1, .config("")),
            RecordedEvent(time: t + 2, .calibration(name: "magnetometer", content: nil)),
            RecordedEvent(time: t + 2, .calibration(name: "", content: "")),
            RecordedEvent(time: t + 3, .calibration(name: "level", content: "roll: 1.5\npitch: -0.25\n")),
            RecordedEvent(time: t + 4, .sensorConnect(.magnetometer, bus: "/dev/i2c-1", transactions: connect)),
            RecordedEvent(time: t + 4, .sensorConnect(.imu, bus: "", transactions: [])),
            RecordedEvent(time: t + 5, .state(.gpsd, .connecting(attempt: 1), wallTime: wall)),
            RecordedEvent(time: t + 5, .state(.gpsd, .connecting(attempt: Int.min), wallTime: GPSTimestamp(seconds: Int64.min, nanoseconds: Int32.min))),
            RecordedEvent(time: t + 5, .state(.imu, .connecting(attempt: Int.max), wallTime: GPSTimestamp(seconds: Int64.max, nanoseconds: Int32.max))),
            RecordedEvent(time: t + 6, .state(.magnetometer, .connected, wallTime: GPSTimestamp(seconds: -1, nanoseconds: -1))),
            RecordedEvent(time: t + 7, .state(.gpsd, .disconnected(.openFailed("connection refused"), retryIn: 2.5), wallTime: wall)),
            RecordedEvent(time: t + 7, .state(.gpsd, .disconnected(.openFailed(""), retryIn: 0), wallTime: wall)),
            RecordedEvent(time: t + 7, .state(.gpsd, .disconnected(.closedByPeer, retryIn: 1e-300), wallTime: wall)),
            RecordedEvent(time: t + 7, .state(.imu, .disconnected(.silence(seconds: 5.25), retryIn: nil), wallTime: wall)),
            RecordedEvent(time: t + 7, .state(.imu, .disconnected(.silence(seconds: .infinity), retryIn: .greatestFiniteMagnitude), wallTime: wall)),
            RecordedEvent(time: t + 7, .state(.magnetometer, .disconnected(.error("read: Remote I/O error"), retryIn: 30), wallTime: wall)),
            RecordedEvent(time: t + 7, .state(.gpsd, .disconnected(.stopped, retryIn: nil), wallTime: wall)),
            RecordedEvent(time: t + 10, .sensorFailure(.imu, message: "read failed: errno 121")),
            RecordedEvent(time: t + 10, .sensorFailure(.magnetometer, message: "")),
            RecordedEvent(time: t + 11, .gpsd([])),
            RecordedEvent(time: t + 11, .gpsd([0xFF, 0xFE, 0x00, 0x80, 0xC3])),
            RecordedEvent(time: t + 12, .gpsd(tpv)),
            RecordedEvent(time: t + 13, .gpsd(sky)),
            RecordedEvent(time: t + 14, .gpsd(tpv)),
            RecordedEvent(time: t + 14, .gpsd(Array(#"{"class":""#.utf8))),
            RecordedEvent(time: t + 14, .gpsd(Array(#"{"class":"SUBFRAMES_LONG","x":1}"#.utf8) + sky)),
            RecordedEvent(time: t + 15, .gpsdFailure("")),
            RecordedEvent(time: t + 15, .gpsdFailure("gps_read: -1")),
            RecordedEvent(time: t + 16, .timer(due: t + 16)),
            RecordedEvent(time: t + 17, .timer(due: t + 2)),
            RecordedEvent(time: t + 17, .timer(due: t + 5_000)),
            RecordedEvent(time: t + 17, .timer(due: 0)),
            RecordedEvent(time: t + 17, .timer(due: UInt64.max)),
            RecordedEvent(time: t + 20, .sensorSample(.imu, time: wall, transactions: imu([100, -200, 16_384, 5, -5, 0]))),
            RecordedEvent(time: t + 10_020, .sensorSample(.imu, time: GPSTimestamp(seconds: wall.seconds, nanoseconds: 260_000_123),
                                                         transactions: imu([101, -190, 16_390, -5, 5, 1]))),
            RecordedEvent(time: t + 10_030, .sensorSample(.magnetometer, time: wall, transactions: magnetometer([300, -3_000, 120]))),
            RecordedEvent(time: t + 20_030, .sensorSample(.magnetometer, time: GPSTimestamp(seconds: wall.seconds, nanoseconds: 260_000_001),
                                                         transactions: magnetometer([302, -3_001, 118]))),
        ]
    }
}
