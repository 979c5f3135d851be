import BearingModel
import BearingRecording
import XCTest

/// The flat transfers the recording bus notes, and the encoder's hot path that reads them in place.
final class TransactionBytesTests: XCTestCase {
    let transfers: [I2CTransaction] = [
        I2CTransaction(.readByte, address: 0x0D, register: 0x06, count: 1, data: [0x05]),
        I2CTransaction(.readBlock, address: 0x0D, register: 0x00, count: 6, data: [1, 2, 3, 4, 250, 255]),
        I2CTransaction(.writeByte, address: 0x6A, register: 0x10, count: 1, data: [0x4C], errno: 121),
        I2CTransaction(.probe, address: 0x1E, data: [1]),
        I2CTransaction(.readBlock, address: 0x68, register: 0x3B, count: 14, errno: 6),
    ]

    func flat(_ ts: [I2CTransaction]) -> [UInt8] {
        var bytes: [UInt8] = []
        for t in ts { TransactionBytes.append(t, to: &bytes) }
        return bytes
    }

    func testFlatBytesRoundTrip() {
        let bytes = flat(transfers)
        XCTAssertEqual(bytes.count, transfers.count * TransactionBytes.headerSize + transfers.map(\.data.count).reduce(0, +))
        XCTAssertEqual(bytes.withUnsafeBufferPointer(TransactionBytes.transactions), transfers)
    }

    /// Samples appended as flat bytes make the same frame as the same samples appended as records, and
    /// read back as those records.
    func testTheHotPathWritesWhatARecordWrites() throws {
        var viaRecords = FrameEncoder(), viaFlat = FrameEncoder()
        var events: [RecordedEvent] = []
        for i in 0..<50 {
            var ts = transfers
            ts[1].data = [UInt8(i), 2, UInt8(3 &* i), 4, 250, UInt8(255 - i)]
            if i % 7 == 0 { ts.removeLast() }
            let time = GPSTimestamp(seconds: 1_780_000_000, nanoseconds: Int32(i * 10_000_000 + 37))
            let e = RecordedEvent(time: 5_000_000 + UInt64(i) * 10_000, .sensorSample(i % 3 == 0 ? .imu : .magnetometer, time: time, transactions: ts))
            events.append(e)
            viaRecords.append(e)
            guard case .sensorSample(let sensor, _, _) = e.record else { continue }
            flat(ts).withUnsafeBufferPointer { viaFlat.appendSample(sensor, time: time, transfers: $0, at: e.time) }
        }
        let a = try XCTUnwrap(viaRecords.finishFrame()), b = try XCTUnwrap(viaFlat.finishFrame())
        XCTAssertEqual(a, b)
        var reader = try RecordingReader(RecordingFormat.header + b)
        var read: [RecordedEvent] = []
        while let e = try reader.next() { read.append(e) }
        XCTAssertEqual(read, events)
    }
}
