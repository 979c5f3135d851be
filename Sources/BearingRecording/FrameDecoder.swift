import BearingModel

/// Decodes one frame's payload: the mirror of `FrameEncoder`, with the same per-frame references.
struct FrameDecoder {
    private var reader: ByteReader
    private var time: UInt64
    /// Each sensor's previous sample in this frame: what the next one is decoded against.
    private var samples = [(recordTime: UInt64, time: GPSTimestamp, transactions: [I2CTransaction])?](repeating: nil, count: 16)
    private var messages: [[UInt8]] = []
    private var messageBudget = RecordingFormat.maxDecodedMessageBytes

    /// The records of the frame whose payload is `payload`, `count` of them, the first at `firstTime`.
    static func decode(_ payload: UnsafeBufferPointer<UInt8>, firstTime: UInt64, count: Int) throws(DecodeFailure) -> [RecordedEvent] {
        var d = FrameDecoder(reader: ByteReader(bytes: payload, position: 0, end: payload.count), time: firstTime)
        var events: [RecordedEvent] = []
        events.reserveCapacity(count)
        for index in 0..<count {
            do {
                events.append(try d.next())
            } catch {
                throw DecodeFailure("\(reason(error)) at record \(index)")
            }
        }
        guard d.reader.remaining == 0 else { throw DecodeFailure("\(d.reader.remaining) bytes after the last record") }
        return events
    }

    private init(reader: ByteReader, time: UInt64) {
        self.reader = reader
        self.time = time
    }

    private mutating func next() throws(DecodeFailure) -> RecordedEvent {
        let type = try reader.byte()
        let delta = try reader.varint()
        time &+= delta
        let record: Record
        if type & 0xC0 == RecordType.sample {
            record = try sample(type)
        } else {
            switch type {
            case RecordType.gpsd:
                let back = try reader.count(atMost: messages.count, "gpsd reference")
                let message = try MessageDecoder.decode(&reader, reference: back == 0 ? [] : messages[messages.count - back], budget: &messageBudget)
                messages.append(message)
                record = .gpsd(message)
            case RecordType.environment:
                // A pair takes at least two bytes.
                let n = try reader.count(atMost: reader.remaining / 2, "pair count")
                var pairs: [Record.Pair] = []
                for _ in 0..<n {
                    let name = try reader.string()
                    pairs.append(Record.Pair(name, try reader.string()))
                }
                record = .environment(pairs)
            case RecordType.config:
                record = .config(try reader.string())
            case RecordType.calibration:
                let name = try reader.string()
                switch try reader.byte() {
                case 0: record = .calibration(name: name, content: nil)
                case 1: record = .calibration(name: name, content: try reader.string())
                case let f: throw DecodeFailure("bad calibration content flag \(f)")
                }
            case RecordType.sensorConnect:
                let sensor = try recordedSensor(try reader.byte())
                let bus = try reader.string()
                record = .sensorConnect(sensor, bus: bus, transactions: try reader.transactions())
            case RecordType.state:
                let s = try reader.byte()
                guard let source = RecordedSource(rawValue: s) else { throw DecodeFailure("bad source \(s)") }
                let state = try reader.state()
                record = .state(source, state, wallTime: try reader.timestamp())
            case RecordType.sensorFailure:
                let sensor = try recordedSensor(try reader.byte())
                record = .sensorFailure(sensor, message: try reader.string())
            case RecordType.gpsdFailure:
                record = .gpsdFailure(try reader.string())
            case RecordType.timer:
                let early = try reader.zigzag()
                record = .timer(due: time &- UInt64(bitPattern: early))
            default:
                throw DecodeFailure("bad record type 0x\(String(type, radix: 16))")
            }
        }
        return RecordedEvent(time: time, record)
    }

    private mutating func sample(_ type: UInt8) throws(DecodeFailure) -> Record {
        let s = Int(type & 0x0F)
        let sensor = try recordedSensor(UInt8(s))
        let previous = samples[s]
        let time: GPSTimestamp
        if type & RecordType.fullTime != 0 {
            time = try reader.timestamp()
        } else if let previous {
            time = SampleTime.decode(residual: try reader.zigzag(), previous: previous.time, elapsedMicros: self.time &- previous.recordTime)
        } else {
            throw DecodeFailure("\(sensor) sample predicted from no earlier sample")
        }
        let transactions: [I2CTransaction]
        if type & RecordType.sameShape != 0 {
            guard let previous else { throw DecodeFailure("\(sensor) sample shaped like no earlier sample") }
            transactions = try reader.dataChanges(from: previous.transactions)
        } else {
            transactions = try reader.transactions()
        }
        samples[s] = (self.time, time, transactions)
        return .sensorSample(sensor, time: time, transactions: transactions)
    }

    private func recordedSensor(_ raw: UInt8) throws(DecodeFailure) -> RecordedSensor {
        guard let sensor = RecordedSensor(rawValue: raw) else { throw DecodeFailure("bad sensor \(raw)") }
        return sensor
    }
}

/// A failure's reason, whichever error type the compiler gives a `catch` (Swift 6.0 infers none).
func reason<E: Error>(_ error: E) -> String {
    (error as? DecodeFailure)?.reason ?? "\(error)"
}
