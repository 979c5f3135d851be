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
/// before the newest (the newest is always kept), and the key state as of the oldest kept one.
public struct RecordingRing: Sendable {
    private struct Frame: Sendable {
        var bytes: [UInt8]
        var firstTime: UInt64
        var keys: [RecordedEvent]
    }

    public let maxBytes: Int
    /// Microseconds.
    public let maxAge: UInt64
    /// Kept frames from `first` on; the slots before it are empty, reused when the array is compacted.
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
    /// Drops the oldest frames while over `maxBytes` or older than `maxAge` before the newest frame's time;
    /// the key records of dropped frames fold into `base`, so nothing a replay needs is lost.
    public mutating func append(frame: [UInt8], firstTime: UInt64, keys: [RecordedEvent]) {
        frames.append(Frame(bytes: frame, firstTime: firstTime, keys: keys))
        byteCount += frame.count
        while frameCount > 1 {
            let oldest = frames[first]
            let tooOld = firstTime > oldest.firstTime && firstTime - oldest.firstTime > maxAge
            guard byteCount > maxBytes || tooOld else { break }
            for k in oldest.keys { base.apply(k) }
            byteCount -= oldest.bytes.count
            frames[first] = Frame(bytes: [], firstTime: 0, keys: [])
            first += 1
        }
        if first >= 64 && first * 2 >= frames.count {
            frames.removeFirst(first)
            first = 0
        }
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
        for f in frames[first...] { out += f.bytes }
        return out
    }
}
