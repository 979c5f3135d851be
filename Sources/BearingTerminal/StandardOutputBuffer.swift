import BearingPOSIX
import BearingWire

/// Text for standard output, written in blocks of about 64 KiB as it is made (`bearing attitude`'s lines).
public struct StandardOutputBuffer {
    private var buffer: [UInt8] = []
    private static let blockSize = 1 << 16

    public init() { buffer.reserveCapacity(Self.blockSize + 256) }

    public mutating func append(_ s: String) { buffer.append(contentsOf: s.utf8) }
    public mutating func appendFixed(_ v: Double, _ decimals: Int) { JSONObjectWriter.appendFixed(v, decimals: decimals, to: &buffer) }

    /// Writes a full block; false when standard output is closed (the reader went away).
    public mutating func flushIfFull() -> Bool { buffer.count >= Self.blockSize ? flush() : true }

    /// Writes what is buffered; false when standard output is closed (the reader went away).
    public mutating func flush() -> Bool {
        guard !buffer.isEmpty else { return true }
        do { try Syscall.writeStandardOutput(buffer) } catch { return false }
        buffer.removeAll(keepingCapacity: true)
        return true
    }
}
