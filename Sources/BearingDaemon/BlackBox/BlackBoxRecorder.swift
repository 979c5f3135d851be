import BearingModel
import BearingPOSIX
import BearingRecording
import BearingSensors
import BearingLog
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The black box (docs/blackbox.md): every value that enters the pipeline from outside, recorded as it
/// enters, in half-second frames kept in a ring in memory (`RecordingRing`) and, when `continuous`, in
/// rotated segments on disk. `save` writes the ring as a recording file. Appends come on the pipeline
/// queue; saves from any thread; segments are written on a queue of their own, so a slow SD card never
/// holds up the pipeline.
public final class BlackBoxRecorder: Sendable {
    public let config: BlackBoxConfig
    private let logger: Logger
    /// The transfers each sensor's bus made since its last record.
    public let magnetometerTransactions = TransactionLog()
    public let imuTransactions = TransactionLog()
    private let state: Mutex<State>
    private let segments: SegmentRecorder?
    /// When the last fault save of each kind was made (monotonic seconds), to make at most one a minute
    /// of each: a flapping gpsd does not keep the watchdog's save from being made.
    private let lastFaultSave = Mutex<[String: Double]>([:])

    private struct State: ~Copyable {
        var encoder = FrameEncoder()
        /// Key records in the frame being built.
        var frameKeys: [RecordedEvent] = []
        var ring: RecordingRing
        /// A record held while its values are delivered (`append(_:around:)`): encoded when the delivery ends,
        /// or before any record that comes during it, so the order is the pipeline's either way.
        var held: RecordedEvent?
    }

    /// A frame per half second of records: what a `kill -9` or power cut can lose of a continuous
    /// recording (the frame being built), well inside the second the format promises.
    static let frameSpan: UInt64 = 500_000

    public init(config: BlackBoxConfig, logger: Logger) {
        self.config = config
        self.logger = logger
        state = Mutex(State(ring: RecordingRing(maxBytes: config.maxBytes, maxAge: UInt64(config.minutes * 60e6))))
        segments = config.continuous ? SegmentRecorder(config: config, logger: logger) : nil
    }

    public func transactions(_ sensor: RecordedSensor) -> TransactionLog {
        sensor == .magnetometer ? magnetometerTransactions : imuTransactions
    }

    /// Records one event (on the pipeline queue). A record more than a second after the frame's first
    /// closes the frame first.
    public func append(_ event: RecordedEvent) {
        let closed = state.withLock { s in Self.encodeHeld(&s) + Self.encode(event, &s) }
        for c in closed { segments?.write(c.frame, keys: c.keys, first: c.first) }
    }

    /// Records `event`, which `deliver` (run now) hands on: encoded after the delivery, so that the readers do not
    /// wait for it (a gpsd message's coding against the one before it is the black box's costliest step), yet in
    /// its place: a record made during the delivery (a failure it reports) is encoded after it.
    public func append(_ event: RecordedEvent, around deliver: () -> Void) {
        let closed = state.withLock { s in
            let closed = Self.encodeHeld(&s)
            s.held = event
            return closed
        }
        for c in closed { segments?.write(c.frame, keys: c.keys, first: c.first) }
        deliver()
        let rest = state.withLock { s in Self.encodeHeld(&s) }
        for c in rest { segments?.write(c.frame, keys: c.keys, first: c.first) }
    }

    private typealias Closed = (frame: [UInt8], first: UInt64, keys: [RecordedEvent])

    /// One event into the frame (closing the frame first when the event is a frame's span after its first).
    private static func encode(_ event: RecordedEvent, _ s: inout State) -> [Closed] {
        var closed: [Closed] = []
        if let first = s.encoder.firstTime, event.time &- first >= frameSpan, let c = close(&s) {
            closed.append(c)
        }
        s.encoder.append(event)
        if event.record.key != nil { s.frameKeys.append(event) }
        return closed
    }

    /// The held record, if any, into the frame.
    private static func encodeHeld(_ s: inout State) -> [Closed] {
        guard let held = s.held else { return [] }
        s.held = nil
        return encode(held, &s)
    }

    /// Records a sensor sample from its reader's transaction log, which is left empty (on the pipeline queue):
    /// the hot path, making no record value and no array.
    public func appendSample(_ sensor: RecordedSensor, time: GPSTimestamp, transfers: TransactionLog, at recordTime: UInt64) {
        let closed = state.withLock { s in
            var closed = Self.encodeHeld(&s)
            if let first = s.encoder.firstTime, recordTime &- first >= Self.frameSpan, let c = Self.close(&s) {
                closed.append(c)
            }
            transfers.drain { s.encoder.appendSample(sensor, time: time, transfers: $0, at: recordTime) }
            return closed
        }
        for c in closed { segments?.write(c.frame, keys: c.keys, first: c.first) }
    }

    /// Closes the frame being built if it began more than a frame span before `now` (a quiet pipeline
    /// still gets its records to disk within about a second).
    public func closeFrame(ifOlderThan now: UInt64) {
        let closed = state.withLock { s -> [Closed] in
            var closed = Self.encodeHeld(&s)
            guard let first = s.encoder.firstTime, now &- first >= Self.frameSpan, let c = Self.close(&s) else { return closed }
            closed.append(c)
            return closed
        }
        for c in closed { segments?.write(c.frame, keys: c.keys, first: c.first) }
    }

    private static func close(_ s: inout State) -> Closed? {
        guard let first = s.encoder.firstTime, let frame = s.encoder.finishFrame() else { return nil }
        let keys = s.frameKeys
        s.frameKeys.removeAll()
        s.ring.append(frame: frame, firstTime: first, keys: keys)
        return (frame, first, keys)
    }

    /// The ring as a recording file, the frame being built included.
    public func ringFile() -> [UInt8] {
        let closed = state.withLock { s in Self.encodeHeld(&s) + (Self.close(&s).map { [$0] } ?? []) }
        for c in closed { segments?.write(c.frame, keys: c.keys, first: c.first) }
        return state.withLock { $0.ring.file() }
    }

    /// What the ring holds now: bytes and frames.
    public var ringSize: (bytes: Int, frames: Int) { state.withLock { ($0.ring.byteCount, $0.ring.frameCount) } }

    /// Writes the ring to `path`, or to a new file in `directory` named by the time and `reason`; keeps at
    /// most `keepSaves` saved files there. Returns the path written.
    @discardableResult
    public func save(to path: String? = nil, reason: String) throws(SystemError) -> String {
        let bytes = ringFile()
        let target: String
        if let path {
            target = path
        } else {
            try AtomicFile.makeDirectories(config.directory, mode: 0o750)
            target = "\(config.directory)/\(Self.savePrefix)\(Self.stamp())-\(reason).bbx"
        }
        try AtomicFile.write(bytes, to: target, mode: 0o640)
        if path == nil { Self.prune(config.directory, prefix: Self.savePrefix, keep: config.keepSaves) }
        logger.notice("black box saved", metadata: ["file": "\(target)", "bytes": "\(bytes.count)", "reason": "\(reason)"])
        return target
    }

    /// A save for a fault the daemon saw itself; at most one a minute for each `reason`, and only with
    /// `save_on_fault`.
    public func saveOnFault(_ reason: String) {
        guard config.saveOnFault else { return }
        let now = Syscall.monotonicSeconds()
        let due = lastFaultSave.withLock { last -> Bool in
            if let l = last[reason], now - l < 60 { return false }
            last[reason] = now
            return true
        }
        guard due else { return }
        do {
            try save(reason: reason)
        } catch {
            logger.error("black box: could not save after \(reason): \(error)")
        }
    }

    /// Waits for continuous segments to be written (at shutdown and in tests).
    public func flush() {
        let closed = state.withLock { s in Self.encodeHeld(&s) + (Self.close(&s).map { [$0] } ?? []) }
        for c in closed { segments?.write(c.frame, keys: c.keys, first: c.first) }
        segments?.drain()
    }

    static let savePrefix = "blackbox-"

    /// UTC `YYYYMMDDTHHMMSSZ`, for file names.
    public static func stamp() -> String {
        var t = time(nil)
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(printf: "%04d%02d%02dT%02d%02d%02dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec))
    }

    /// Names in `directory` starting with `prefix` and ending `.bbx`, oldest first (names sort by time).
    static func files(_ directory: String, prefix: String) -> [String] {
        ((try? Directory.names(directory)) ?? []).filter { $0.hasPrefix(prefix) && $0.hasSuffix(".bbx") }.sorted()
    }

    /// Removes the oldest files beyond `keep`.
    static func prune(_ directory: String, prefix: String, keep: Int) {
        let names = files(directory, prefix: prefix)
        for name in names.dropLast(keep) { unlink("\(directory)/\(name)") }
    }
}

/// Continuous recording: frames written to rotated segments in the black box's directory, on a queue of
/// its own. Each segment starts with the key state, so it replays alone. Past `disk_bytes` the oldest
/// segment goes first (logged once); a write that fails (a full disk) is logged once, the segment is
/// dropped, and recording to disk resumes with the next segment.
final class SegmentRecorder: Sendable {
    private let config: BlackBoxConfig
    private let logger: Logger
    private let queue = DispatchQueue(label: "bearing.blackbox")
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var writer: RecordingFileWriter?
        var segmentStart: UInt64 = 0
        /// The key state as of the end of the last frame given.
        var keys = KeySnapshot()
        var loggedRemoval = false
        var failing = false
        /// After a failure, no new segment before this time.
        var retryAt: UInt64 = 0
    }

    static let prefix = "segment-"

    /// A segment also ends at a quarter of `disk_bytes`, so a new one always has room.
    private var segmentBytes: Int { config.diskBytes / 4 }

    init(config: BlackBoxConfig, logger: Logger) {
        self.config = config
        self.logger = logger
        state = Mutex(State())
    }

    func write(_ frame: [UInt8], keys: [RecordedEvent], first: UInt64) {
        queue.async { [self] in
            state.withLock { s in append(&s, frame, first: first) }
            state.withLock { s in for k in keys { s.keys.apply(k) } }
        }
    }

    func drain() { queue.sync {} }

    private func append(_ s: inout State, _ frame: [UInt8], first: UInt64) {
        let span = UInt64(config.segmentMinutes * 60e6)
        if let w = s.writer, first &- s.segmentStart >= span || w.bytes >= segmentBytes { s.writer = nil }
        if s.writer == nil {
            guard first >= s.retryAt else { return }
            open(&s, first: first)
        }
        guard let writer = s.writer else { return }
        do {
            try writer.write(frame)
            if s.failing {
                logger.notice("black box: writing segments again", metadata: ["file": "\(writer.path)"])
                s.failing = false
            }
        } catch {
            fail(&s, "\(error)", first: first)
        }
    }

    private func open(_ s: inout State, first: UInt64) {
        do {
            try AtomicFile.makeDirectories(config.directory, mode: 0o750)
            removeOldest(&s, making: segmentBytes)
            let writer = try RecordingFileWriter(path: "\(config.directory)/\(Self.prefix)\(BlackBoxRecorder.stamp())-\(String(printf: "%020llu", first)).bbx")
            var snapshot = FrameEncoder()
            for e in s.keys.events { snapshot.append(RecordedEvent(time: first, e.record)) }
            if let frame = snapshot.finishFrame() { try writer.write(frame) }
            s.writer = writer
            s.segmentStart = first
        } catch {
            fail(&s, "\(error)", first: first)
        }
    }

    private func fail(_ s: inout State, _ text: String, first: UInt64) {
        if !s.failing {
            logger.error("black box: cannot write continuous segments (the ring in memory still records): \(text)",
                         metadata: ["directory": "\(config.directory)"])
        }
        s.failing = true
        s.writer = nil
        s.retryAt = first &+ UInt64(config.segmentMinutes * 60e6)
    }

    /// Removes the oldest segments until those left plus `room` fit in `disk_bytes`.
    private func removeOldest(_ s: inout State, making room: Int) {
        var names = BlackBoxRecorder.files(config.directory, prefix: Self.prefix)
        var sizes: [Int] = names.map { name in
            var st = stat()
            return stat("\(config.directory)/\(name)", &st) == 0 ? Int(st.st_size) : 0
        }
        var total = sizes.reduce(0, +)
        while total + room > config.diskBytes, !names.isEmpty {
            if !s.loggedRemoval {
                logger.notice("black box: removing the oldest segments to stay within disk_bytes (logged once)",
                              metadata: ["removed": "\(names[0])", "disk_bytes": "\(config.diskBytes)"])
                s.loggedRemoval = true
            }
            unlink("\(config.directory)/\(names.removeFirst())")
            total -= sizes.removeFirst()
        }
    }
}
