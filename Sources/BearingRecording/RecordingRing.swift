/// The latest key record of each `RecordKey`: the state a replay starts from, which a recording repeats
/// at its start.
public struct KeySnapshot: Equatable, Sendable {
    private var latest: [RecordKey: RecordedEvent] = [:]

    public init() {}

    /// Keeps `event` if it is a key record (replacing the one with its key); ignores stream records.
    public mutating func apply(_ event: RecordedEvent) {
        if let key = event.record.key { latest[key] = event }
    }

    public var isEmpty: Bool { latest.isEmpty }

    /// The records in a stable order: environment, config, calibrations by name, sensor connections, states.
    public var events: [RecordedEvent] {
        var keys: [RecordKey] = [.environment, .config]
        var names: [String] = []
        for key in latest.keys { if case .calibration(let name) = key { names.append(name) } }
        keys += names.sorted().map { .calibration($0) }
        keys += RecordedSensor.allCases.map { .sensorConnect($0) }
        keys += RecordedSource.allCases.map { .state($0) }
        return keys.compactMap { latest[$0] }
    }
}

/// The in-memory black box: the last frames, at most `maxBytes` of them and none older than `maxAge`
/// before the newest (the newest is always kept), and the key state as of the oldest kept one. The frames
/// live in one byte buffer used as a ring (grown as they come, to `maxBytes` at most), so what the ring
/// costs in memory is its bytes and a small index, however many frames come and go.
public struct RecordingRing: Sendable {
    /// Where a kept frame is in `storage`, and what the replay needs of it.
    private struct Frame: Sendable {
        var start: Int
        var count: Int
        var firstTime: UInt64
        var keys: [RecordedEvent]
    }

    public let maxBytes: Int
    /// Microseconds.
    public let maxAge: UInt64
    private var storage: [UInt8] = []
    /// Where the next frame goes.
    private var writeAt = 0
    /// Kept frames, oldest first, from `first` on; the slots before it are compacted away now and then.
    private var frames: [Frame] = []
    private var first = 0
    /// The key state of the dropped frames: as of the oldest kept frame.
    public private(set) var base = KeySnapshot()
    /// The kept frames' bytes.
    public private(set) var byteCount = 0

    public init(maxBytes: Int, maxAge: UInt64) {
        self.maxBytes = maxBytes
        self.maxAge = maxAge
    }

    public var frameCount: Int { frames.count - first }

    /// Adds a finished frame (bytes from `FrameEncoder`), with the key records it contains, in order.
    /// Drops the oldest frames while over `maxBytes` or older than `maxAge` before the newest frame's time,
    /// and those the new frame's bytes overwrite; the key records of dropped frames fold into `base`, so
    /// nothing a replay needs is lost.
    public mutating func append(frame: [UInt8], firstTime: UInt64, keys: [RecordedEvent]) {
        let n = frame.count
        if n > maxBytes {
            // Larger than the whole ring: it alone is kept.
            while frameCount > 0 { dropOldest() }
            storage = frame
            writeAt = 0
        } else if writeAt + n > maxBytes {
            // No room before the end: the frames from here to the end are the oldest; then from the start.
            while frameCount > 0, frames[first].start >= writeAt { dropOldest() }
            writeAt = 0
        }
        if n <= maxBytes {
            while frameCount > 0, frames[first].start < writeAt + n, frames[first].start + frames[first].count > writeAt { dropOldest() }
            if writeAt + n > storage.count {
                // Grown by doubling, to `maxBytes` and no further: reserved exactly, so the buffer holds no
                // slack the array's own growth would add.
                let size = min(maxBytes, max(writeAt + n, storage.count * 2))
                storage.reserveCapacity(size)
                storage.append(contentsOf: repeatElement(0, count: size - storage.count))
            }
            storage.withUnsafeMutableBufferPointer { s in
                frame.withUnsafeBufferPointer { f in (s.baseAddress! + writeAt).update(from: f.baseAddress!, count: n) }
            }
        }
        frames.append(Frame(start: writeAt, count: n, firstTime: firstTime, keys: keys))
        writeAt += n
        byteCount += n
        while frameCount > 1 {
            let oldest = frames[first]
            let tooOld = firstTime > oldest.firstTime && firstTime - oldest.firstTime > maxAge
            guard byteCount > maxBytes || tooOld else { break }
            dropOldest()
        }
        if first >= 64 && first * 2 >= frames.count {
            frames.removeFirst(first)
            first = 0
        }
    }

    private mutating func dropOldest() {
        let oldest = frames[first]
        for k in oldest.keys { base.apply(k) }
        byteCount -= oldest.count
        frames[first].keys = []
        first += 1
    }

    /// A complete recording: the header, a frame holding `base`'s records stamped with the oldest kept
    /// frame's time (none when `base` is empty), then the kept frames.
    public func file() -> [UInt8] {
        var out = RecordingFormat.header
        guard first < frames.count else { return out }
        out.reserveCapacity(out.count + byteCount + 4096)
        let time = frames[first].firstTime
        var encoder = FrameEncoder()
        for e in base.events { encoder.append(RecordedEvent(time: time, e.record)) }
        if let snapshot = encoder.finishFrame() { out += snapshot }
        for f in frames[first...] { out += storage[f.start..<(f.start + f.count)] }
        return out
    }
}
