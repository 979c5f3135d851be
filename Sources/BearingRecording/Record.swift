import BearingModel

/// One I2C transfer as the chip driver made it: what was asked and what the bus answered, so a replay can
/// answer the same driver the same way.
public struct I2CTransaction: Equatable, Sendable {
    public enum Operation: UInt8, Sendable, CaseIterable {
        case readByte = 0, writeByte = 1, readBlock = 2, probe = 3
    }

    public var operation: Operation
    public var address: UInt8
    /// The register (0 for a probe).
    public var register: UInt8
    /// Bytes asked for by a block read; 1 for a byte read or write; 0 for a probe.
    public var count: UInt8
    /// The bytes read (a byte read: 1; a block read: `count`), the value written (a write), or a probe's
    /// answer (0 absent, 1 present, 2 busy). Empty when a read failed.
    public var data: [UInt8]
    /// 0 when the transfer succeeded, else the errno the bus reported.
    public var errno: Int32

    public init(_ operation: Operation, address: UInt8, register: UInt8 = 0, count: UInt8 = 0, data: [UInt8] = [], errno: Int32 = 0) {
        self.operation = operation
        self.address = address
        self.register = register
        self.count = count
        self.data = data
        self.errno = errno
    }
}

/// The sensors whose bus transfers are recorded.
public enum RecordedSensor: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case magnetometer = 0
    case imu = 1

    public var description: String { self == .magnetometer ? "magnetometer" : "imu" }
}

/// The sources whose link state is recorded.
public enum RecordedSource: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case gpsd = 0
    case magnetometer = 1
    case imu = 2

    public var description: String {
        switch self {
        case .gpsd: return "gpsd"
        case .magnetometer: return "magnetometer"
        case .imu: return "imu"
        }
    }
}

/// What a black-box recording holds: everything that entered the pipeline from outside, and the state a
/// replay starts from.
public enum Record: Equatable, Sendable {
    // Key records: the latest of each kind is repeated at the start of every file (`RecordKey`).

    /// Name/value pairs describing the recording machine: Bearing's version, the kernel, libgps's API.
    case environment([Pair])
    /// The config in force as YAML, secrets removed.
    case config(String)
    /// A calibration, level or board profile file's content by name ("magnetometer", "accelerometer",
    /// "level", "online", "deviation", "driving", "board"); nil when there is none.
    case calibration(name: String, content: String?)
    /// The transfers that found, identified and configured a sensor's chip, on bus `bus`.
    case sensorConnect(RecordedSensor, bus: String, transactions: [I2CTransaction])
    /// A source's link state, and the wall-clock time the daemon stamped it with.
    case state(RecordedSource, ConnectionState, wallTime: GPSTimestamp)

    // Stream records.

    /// One sample read: the transfers the driver made, and the time the reader stamped the sample with.
    case sensorSample(RecordedSensor, time: GPSTimestamp, transactions: [I2CTransaction])
    /// A failed read or probe, as the reader reported it.
    case sensorFailure(RecordedSensor, message: String)
    /// One message as libgps delivered it (gpsd's JSON, one or more lines).
    case gpsd([UInt8])
    /// A failure the gpsd client reported without a state change.
    case gpsdFailure(String)
    /// A delayed pipeline action (a throttle's or debounce's timer) ran; `due` is the time it was scheduled
    /// for, on the recording's clock (monotonic microseconds).
    case timer(due: UInt64)

    /// A name and a value.
    public struct Pair: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Which key this record sets; nil for stream records.
    public var key: RecordKey? {
        switch self {
        case .environment: return .environment
        case .config: return .config
        case .calibration(let name, _): return .calibration(name)
        case .sensorConnect(let s, _, _): return .sensorConnect(s)
        case .state(let s, _, _): return .state(s)
        case .sensorSample, .sensorFailure, .gpsd, .gpsdFailure, .timer: return nil
        }
    }
}

/// The identity of a key record: a later record with the same key replaces an earlier one.
public enum RecordKey: Hashable, Sendable {
    case environment
    case config
    case calibration(String)
    case sensorConnect(RecordedSensor)
    case state(RecordedSource)
}

/// A record and when it entered the pipeline: monotonic microseconds on the recording machine's clock,
/// the pipeline's clock (`PipelineClock`).
public struct RecordedEvent: Equatable, Sendable {
    public var time: UInt64
    public var record: Record

    public init(time: UInt64, _ record: Record) {
        self.time = time
        self.record = record
    }
}
