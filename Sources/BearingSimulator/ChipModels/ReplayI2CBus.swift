import BearingI2C
import BearingPOSIX

/// A bus that passes transfers to another bus, records the reads it answers from `startRecording()` on,
/// then (after `replay()`) answers the same reads again from the record, in a loop: the drivers above it do all their work while the chip models behind it cost nothing. For
/// benchmarks of Bearing's own code per sample (`bearing bench-compass --replay`), where a model that
/// computes a moving board's sensor values would otherwise be counted as if it were part of the product.
///
/// Replaying expects the drivers to ask for the same transfers in the same order as when recording (a
/// driver reading the same registers each sample does); any other read fails with EIO naming the address
/// and register, so a benchmark never runs on answers meant for another read. Writes while replaying
/// are accepted and dropped.
public final class ReplayI2CBus: I2CBus {
    private enum Transfer {
        case byte(address: UInt8, register: UInt8, value: UInt8)
        case block(address: UInt8, register: UInt8, bytes: [UInt8])
    }

    private let source: I2CBus
    // Unchecked: a benchmark's bus, used from one thread; the runtime's exclusivity bookkeeping on every
    // transfer would be counted as the product's cost.
    @exclusivity(unchecked) private var record: [Transfer] = []
    @exclusivity(unchecked) private var next = 0
    @exclusivity(unchecked) private var recording = false
    @exclusivity(unchecked) private var replaying = false

    public var path: String { source.path }

    public init(_ source: I2CBus) {
        self.source = source
    }

    /// Records every read from now on (e.g. after the drivers identified and configured their chips).
    public func startRecording() {
        record = []
        recording = true
    }

    /// Ends recording: from now on reads are answered from the record, from its first transfer on.
    public func replay() throws(I2CError) {
        guard !record.isEmpty else { throw I2CError(bus: path, operation: .readByte, errno: 5, detail: "nothing was recorded to replay") }
        recording = false
        replaying = true
        next = 0
    }

    private func take() -> Transfer {
        let t = record[next]
        next = next + 1 == record.count ? 0 : next + 1
        return t
    }

    public func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8 {
        guard replaying else {
            let value = try source.readByte(address: address, register: register)
            if recording { record.append(.byte(address: address, register: register, value: value)) }
            return value
        }
        guard case .byte(address, register, let value) = take() else { throw mismatch(address, register, .readByte) }
        return value
    }

    public func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8] {
        guard replaying else {
            let bytes = try source.readBlock(address: address, register: register, count: count)
            if recording { record.append(.block(address: address, register: register, bytes: bytes)) }
            return bytes
        }
        guard case .block(address, register, let bytes) = take(), bytes.count == count else { throw mismatch(address, register, .readBlock) }
        return bytes
    }

    public func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError) {
        if !replaying { try source.writeByte(address: address, register: register, value: value) }
    }

    public func probe(address: UInt8) throws(I2CError) -> I2CProbeResult {
        try source.probe(address: address)
    }

    private func mismatch(_ address: UInt8, _ register: UInt8, _ op: I2CError.Operation) -> I2CError {
        I2CError(bus: path, address: address, register: register, operation: op, errno: 5,
                 detail: "replay out of step: the recording has another transfer here")
    }
}
