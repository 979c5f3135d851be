import BearingModel

/// Builds one frame at a time: records appended, then `finishFrame()` gives the frame's bytes. The codings
/// refer only to earlier records of the same frame, so every frame decodes on its own. It does not split
/// frames: its owner finishes one each second, and before `pendingBytes` nears `RecordingFormat.maxPayload`.
public struct FrameEncoder: Sendable {
    /// The previous sample of a sensor in this frame: what the next one is coded against.
    struct SampleReference: Sendable {
        var recordTime: UInt64 = 0
        var time = GPSTimestamp(seconds: 0)
        /// The length of its transfers, flat, in the sensor's slot of `previousTransfers`; -1: unknown (they did
        /// not fit the slot, and the next sample is written in full).
        var transfers = -1
    }

    /// `storage[..<used]`: the frame header's room (filled in by `finishFrame`), then the payload; the rest
    /// is room, so that a sample is written through a pointer.
    private var storage: [UInt8]
    private var used = RecordingFormat.frameHeaderSize
    /// Where records other than samples are put together before they are copied to `storage`.
    private var scratch: [UInt8] = []
    private var recordCount: UInt32 = 0
    private var lastTime: UInt64 = 0
    public private(set) var firstTime: UInt64?
    /// Indexed by `RecordedSensor.rawValue` (the type byte has four bits for it); valid where `sampled`
    /// has bit `rawValue` set.
    private var samples = [SampleReference](repeating: SampleReference(), count: 16)
    private var sampled: UInt16 = 0
    /// Each sensor's previous sample's transfers, as flat bytes (`TransactionBytes`): sensor s's are
    /// `previousTransfers[s * slot ..< s * slot + samples[s].transfers]`.
    private var previousTransfers = [UInt8](repeating: 0, count: 16 * Self.slot)
    private static let slot = 512
    /// A sample given as `I2CTransaction`s, made flat.
    private var flatScratch: [UInt8] = []
    /// This frame's gpsd messages, in order, and the index of the last one of each class.
    private var messages: [[UInt8]] = []
    private var lastOfClass: [(name: UInt64, index: Int)] = []
    private var messageEncoder = MessageEncoder()

    public init() {
        storage = [UInt8](repeating: 0, count: 4_096)
    }

    public var isEmpty: Bool { recordCount == 0 }

    /// Encoded payload bytes so far.
    public var pendingBytes: Int { used - RecordingFormat.frameHeaderSize }

    public mutating func append(_ event: RecordedEvent) {
        let delta: UInt64
        if firstTime == nil {
            firstTime = event.time
            delta = 0
        } else {
            delta = event.time &- lastTime
        }
        lastTime = event.time
        recordCount += 1
        if case .sensorSample(let sensor, let time, let transactions) = event.record {
            flatScratch.removeAll(keepingCapacity: true)
            for t in transactions { TransactionBytes.append(t, to: &flatScratch) }
            let flat = flatScratch
            flat.withUnsafeBufferPointer { appendSample(sensor, time: time, flat: $0, recordTime: event.time, delta: delta) }
            return
        }
        scratch.removeAll(keepingCapacity: true)
        switch event.record {
        case .sensorSample:
            break
        case .gpsd(let message):
            appendMessage(message, delta: delta)
        case .environment(let pairs):
            begin(RecordType.environment, delta)
            scratch.appendVarint(pairs.count)
            for p in pairs {
                scratch.appendString(p.name)
                scratch.appendString(p.value)
            }
        case .config(let yaml):
            begin(RecordType.config, delta)
            scratch.appendString(yaml)
        case .calibration(let name, let content):
            begin(RecordType.calibration, delta)
            scratch.appendString(name)
            if let content {
                scratch.append(1)
                scratch.appendString(content)
            } else {
                scratch.append(0)
            }
        case .sensorConnect(let sensor, let bus, let transactions):
            begin(RecordType.sensorConnect, delta)
            scratch.append(sensor.rawValue)
            scratch.appendString(bus)
            scratch.appendTransactions(transactions)
        case .state(let source, let state, let wallTime):
            begin(RecordType.state, delta)
            scratch.append(source.rawValue)
            scratch.appendState(state)
            scratch.appendTimestamp(wallTime)
        case .sensorFailure(let sensor, let message):
            begin(RecordType.sensorFailure, delta)
            scratch.append(sensor.rawValue)
            scratch.appendString(message)
        case .gpsdFailure(let message):
            begin(RecordType.gpsdFailure, delta)
            scratch.appendString(message)
        case .timer(let due):
            begin(RecordType.timer, delta)
            scratch.appendZigzag(Int64(bitPattern: event.time &- due))
        }
        reserve(scratch.count)
        let at = used
        storage.withUnsafeMutableBufferPointer { b in
            scratch.withUnsafeBufferPointer { (b.baseAddress! + at).update(from: $0.baseAddress!, count: $0.count) }
        }
        used += scratch.count
    }

    /// A sensor sample whose transfers are flat bytes (`TransactionBytes`): what `append` does with a
    /// `.sensorSample` record, without making one (the recording's hot path).
    public mutating func appendSample(_ sensor: RecordedSensor, time: GPSTimestamp, transfers: UnsafeBufferPointer<UInt8>, at recordTime: UInt64) {
        let delta: UInt64
        if firstTime == nil {
            firstTime = recordTime
            delta = 0
        } else {
            delta = recordTime &- lastTime
        }
        lastTime = recordTime
        recordCount += 1
        appendSample(sensor, time: time, flat: transfers, recordTime: recordTime, delta: delta)
    }

    /// The whole frame (header and payload), or nil when no record is pending; the next frame starts afresh.
    public mutating func finishFrame() -> [UInt8]? {
        guard let firstTime else { return nil }
        let length = pendingBytes
        storage.setLE(RecordingFormat.frameMagic, at: 0)
        storage.setLE(UInt32(truncatingIfNeeded: length), at: 4)
        storage.setLE(firstTime, at: 12)
        storage.setLE(recordCount, at: 20)
        let crc = storage.withUnsafeBufferPointer { CRC32C.frame($0, start: 0, payloadLength: length) }
        storage.setLE(crc, at: 8)
        let frame = Array(storage[..<used])
        used = RecordingFormat.frameHeaderSize
        recordCount = 0
        self.firstTime = nil
        sampled = 0
        messages.removeAll(keepingCapacity: true)
        lastOfClass.removeAll(keepingCapacity: true)
        return frame
    }

    /// Makes room for `n` more bytes in `storage`.
    @inline(__always) private mutating func reserve(_ n: Int) {
        if used + n > storage.count { grow(used + n) }
    }

    private mutating func grow(_ n: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(n, 2 * storage.count) - storage.count))
    }

    @inline(__always) private mutating func begin(_ type: UInt8, _ delta: UInt64) {
        scratch.append(type)
        scratch.appendVarint(delta)
    }

    private mutating func appendSample(_ sensor: RecordedSensor, time: GPSTimestamp, flat: UnsafeBufferPointer<UInt8>,
                                       recordTime: UInt64, delta: UInt64) {
        let s = Int(sensor.rawValue & 0x0F)
        let known = sampled & (1 << s) != 0
        sampled |= 1 << s
        let (count, dataLength) = TransactionBytes.summary(flat)
        reserve(SampleWriter.bound(transactions: count, dataLength: dataLength))
        let at = used
        let reference = samples[s]
        let previousCount = reference.transfers
        used = previousTransfers.withUnsafeBufferPointer { slots in
            storage.withUnsafeMutableBufferPointer { b in
                let previous = UnsafeBufferPointer(start: slots.baseAddress! + s * Self.slot, count: max(previousCount, 0))
                var type = RecordType.sample | UInt8(s)
                var residual: Int64 = 0
                var sameShape = false
                if known {
                    if let r = SampleTime.residual(time, previous: reference.time, elapsedMicros: recordTime &- reference.recordTime) {
                        residual = r
                    } else {
                        type |= RecordType.fullTime
                    }
                    sameShape = previousCount >= 0 && TransactionBytes.sameShape(flat, previous)
                    if sameShape { type |= RecordType.sameShape }
                } else {
                    type |= RecordType.fullTime
                }
                var w = SampleWriter(b.baseAddress! + at)
                w.byte(type)
                w.varint(delta)
                if type & RecordType.fullTime != 0 { w.timestamp(time) } else { w.zigzag(residual) }
                if sameShape {
                    w.dataChanges(flat: flat, from: previous, dataLength: dataLength)
                } else {
                    w.transactions(flat: flat, count: count)
                }
                return at + w.written.count
            }
        }
        let fits = flat.count <= Self.slot
        if fits && !flat.isEmpty {
            previousTransfers.withUnsafeMutableBufferPointer { slots in
                (slots.baseAddress! + s * Self.slot).update(from: flat.baseAddress!, count: flat.count)
            }
        }
        samples[s] = SampleReference(recordTime: recordTime, time: time, transfers: fits ? flat.count : -1)
    }

    /// A gpsd message, coded against the frame's previous message of its class, else its previous message.
    private mutating func appendMessage(_ message: [UInt8], delta: UInt64) {
        begin(RecordType.gpsd, delta)
        let name = Self.className(message)
        var back = messages.isEmpty ? 0 : 1
        var known = false
        if name != 0 {
            for k in lastOfClass.indices where lastOfClass[k].name == name {
                back = messages.count - lastOfClass[k].index
                lastOfClass[k].index = messages.count
                known = true
                break
            }
            if !known { lastOfClass.append((name, messages.count)) }
        }
        scratch.appendVarint(back)
        messageEncoder.encode(message, reference: back == 0 ? [] : messages[messages.count - back], into: &scratch)
        messages.append(message)
    }

    private static let classKey = Array(#""class":""#.utf8)

    /// The first eight bytes of the message's `"class":"…"` value near its start, packed; 0 when none.
    static func className(_ message: [UInt8]) -> UInt64 {
        let key = classKey
        return message.withUnsafeBufferPointer { m -> UInt64 in
            var i = 0
            while i + key.count < m.count && i < 32 {
                var found = true
                for k in 0..<key.count where m[i + k] != key[k] {
                    found = false
                    break
                }
                if found {
                    var name: UInt64 = 0
                    var j = i + key.count
                    var shift: UInt64 = 0
                    while j < m.count && m[j] != 0x22 && shift < 64 {
                        name |= UInt64(m[j]) << shift
                        shift += 8
                        j += 1
                    }
                    return name
                }
                i += 1
            }
            return 0
        }
    }
}
