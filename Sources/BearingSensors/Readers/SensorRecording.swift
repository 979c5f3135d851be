import BearingModel
import BearingI2C
import BearingRecording
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The transfers one sensor's bus made since they were last taken, as flat bytes (`TransactionBytes`):
/// filled by `RecordingI2CBus` on the reader's thread, taken on the pipeline queue while the reader waits
/// for its sample to be published. No allocation per transfer or per sample once warm.
public final class TransactionLog: Sendable {
    /// `bytes[..<count]` are the transfers; the rest is room, written through a pointer (no append).
    private struct Pending {
        var bytes = [UInt8](repeating: 0, count: 1_024)
        var count = 0
    }

    private let pending = Mutex(Pending())
    fileprivate let bus = Mutex("")
    public init() {}

    /// The bus the transfers were made on.
    public var busPath: String { bus.withLock { $0 } }

    func append(_ op: I2CTransaction.Operation, address: UInt8, register: UInt8, count: UInt8, errno: Int32 = 0,
                data: UnsafeRawBufferPointer) {
        pending.withLock { p in
            p.count = TransactionBytes.write(op, address: address, register: register, count: count, errno: errno, data: data,
                                             into: &p.bytes, at: p.count)
        }
    }

    /// The transfers so far, oldest first; the log is left empty.
    public func take() -> [I2CTransaction] {
        var taken: [I2CTransaction] = []
        drain { taken = TransactionBytes.transactions($0) }
        return taken
    }

    /// Hands the transfers so far, as flat bytes, to `body`; the log is left empty.
    public func drain(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        pending.withLock { p in
            let count = p.count
            p.bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<count])) }
            p.count = 0
        }
    }
}

/// An I2C bus that passes every transfer to the bus it wraps and notes it, request and answer, in a
/// `TransactionLog`: the black box records sensors below their drivers.
public final class RecordingI2CBus: I2CBus {
    private let bus: I2CBus
    private let log: TransactionLog

    public init(_ bus: I2CBus, log: TransactionLog) {
        self.bus = bus
        self.log = log
        log.bus.withLock { $0 = bus.path }
    }

    public var path: String { bus.path }

    public func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8 {
        do {
            let v = try bus.readByte(address: address, register: register)
            withUnsafeBytes(of: v) { log.append(.readByte, address: address, register: register, count: 1, data: $0) }
            return v
        } catch {
            log.append(.readByte, address: address, register: register, count: 1, errno: error.errno, data: UnsafeRawBufferPointer(start: nil, count: 0))
            throw error
        }
    }

    public func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError) {
        var errno: Int32 = 0
        defer { withUnsafeBytes(of: value) { log.append(.writeByte, address: address, register: register, count: 1, errno: errno, data: $0) } }
        do {
            try bus.writeByte(address: address, register: register, value: value)
        } catch {
            errno = error.errno
            throw error
        }
    }

    public func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8] {
        do {
            let v = try bus.readBlock(address: address, register: register, count: count)
            v.withUnsafeBytes { log.append(.readBlock, address: address, register: register, count: UInt8(clamping: count), data: $0) }
            return v
        } catch {
            log.append(.readBlock, address: address, register: register, count: UInt8(clamping: count), errno: error.errno,
                       data: UnsafeRawBufferPointer(start: nil, count: 0))
            throw error
        }
    }

    public func probe(address: UInt8) throws(I2CError) -> I2CProbeResult {
        do {
            let r = try bus.probe(address: address)
            withUnsafeBytes(of: Self.code(r)) { log.append(.probe, address: address, register: 0, count: 0, data: $0) }
            return r
        } catch {
            log.append(.probe, address: address, register: 0, count: 0, errno: error.errno, data: UnsafeRawBufferPointer(start: nil, count: 0))
            throw error
        }
    }

    static func code(_ r: I2CProbeResult) -> UInt8 {
        switch r {
        case .absent: return 0
        case .present: return 1
        case .busy: return 2
        }
    }
}

/// A bus that answers a driver from recorded transfers, in order. A request the recording does not hold
/// next (the driver or its settings changed since) fails with `EPROTO` and a detail saying what differed,
/// and `divergence` keeps that text.
public final class PlaybackI2CBus: I2CBus {
    public let path: String
    private var transactions: [I2CTransaction]
    private var next = 0
    /// What the driver asked for that the recording did not hold, once it happened.
    public private(set) var divergence: String?

    public init(path: String, transactions: [I2CTransaction]) {
        self.path = path
        self.transactions = transactions
    }

    /// Replaces the transfers to answer from (the next sample's).
    public func load(_ transactions: [I2CTransaction]) {
        self.transactions = transactions
        next = 0
    }

    /// Transfers recorded but not asked for.
    public var unused: Int { transactions.count - next }

    private func answer(_ op: I2CTransaction.Operation, _ errorOp: I2CError.Operation, address: UInt8, register: UInt8,
                        count: UInt8) throws(I2CError) -> I2CTransaction {
        func fail(_ text: String) -> I2CError {
            divergence = text
            return I2CError(bus: path, address: address, register: register, operation: errorOp, errno: EPROTO, detail: text)
        }
        guard next < transactions.count else {
            throw fail("the recording holds no further transfer here; the driver asked for \(Self.describe(op, address, register, count))")
        }
        let t = transactions[next]
        guard t.operation == op, t.address == address, t.register == register, t.count == count else {
            throw fail("the recording holds \(Self.describe(t.operation, t.address, t.register, t.count)) here; the driver asked for \(Self.describe(op, address, register, count))")
        }
        next += 1
        if t.errno != 0 { throw I2CError(bus: path, address: address, register: register, operation: errorOp, errno: t.errno) }
        return t
    }

    static func describe(_ op: I2CTransaction.Operation, _ address: UInt8, _ register: UInt8, _ count: UInt8) -> String {
        switch op {
        case .readByte: return "a byte read of \(I2CError.hex(register)) at \(I2CError.hex(address))"
        case .writeByte: return "a byte write to \(I2CError.hex(register)) at \(I2CError.hex(address))"
        case .readBlock: return "a \(count)-byte read from \(I2CError.hex(register)) at \(I2CError.hex(address))"
        case .probe: return "a probe of \(I2CError.hex(address))"
        }
    }

    public func readByte(address: UInt8, register: UInt8) throws(I2CError) -> UInt8 {
        let t = try answer(.readByte, .readByte, address: address, register: register, count: 1)
        return t.data.first ?? 0
    }

    public func writeByte(address: UInt8, register: UInt8, value: UInt8) throws(I2CError) {
        _ = try answer(.writeByte, .writeByte, address: address, register: register, count: 1)
    }

    public func readBlock(address: UInt8, register: UInt8, count: Int) throws(I2CError) -> [UInt8] {
        try answer(.readBlock, .readBlock, address: address, register: register, count: UInt8(clamping: count)).data
    }

    public func probe(address: UInt8) throws(I2CError) -> I2CProbeResult {
        switch try answer(.probe, .probe, address: address, register: 0, count: 0).data.first {
        case 1: return .present
        case 2: return .busy
        default: return .absent
        }
    }
}

/// A sensor reader's driver work without its thread or pacing: find, identify and configure the chip
/// from a recording's connect transfers, then read each sample from its recorded transfers — the same
/// chip driver code as live, answered by a `PlaybackI2CBus`.
public final class SensorReplay<Sample> {
    private let connectDriver: (PlaybackI2CBus) throws(SensorError) -> String
    private let readDriver: (String, GPSTimestamp) throws(SensorError) -> Sample
    private var bus: PlaybackI2CBus?
    private var device: String?

    init<Kind: ReaderKind>(_ kind: Kind.Type, configuration: SensorReaderConfiguration<Kind.Settings>) where Kind.Sample == Sample {
        var driver: Kind.Driver?
        connectDriver = { bus throws(SensorError) in
            let d = try Kind.find(bus, chip: configuration.chip, address: configuration.address)
            try Kind.configure(d, configuration.settings)
            // Waits between data-ready polls are the chip's business; a replay answers at once.
            (d as? any ChipDriver)?.sleep = { _ in }
            driver = d
            return SensorReaderLoop<Kind>.endpoint(bus.path, Kind.address(of: d))
        }
        readDriver = { device, time throws(SensorError) in
            guard let driver else { throw SensorError.unsupported(chip: "replay", "a sample before the chip was found (the recording starts without its connect transfers)") }
            return try Kind.read(driver, device: device, time: { time })
        }
    }

    /// Finds and configures the chip from `transactions` recorded on `bus`.
    public func connect(bus path: String, _ transactions: [I2CTransaction]) throws(SensorError) {
        let bus = PlaybackI2CBus(path: path, transactions: transactions)
        self.bus = bus
        device = try connectDriver(bus)
    }

    /// One sample from its recorded transfers, stamped `time`.
    public func read(_ transactions: [I2CTransaction], time: GPSTimestamp) throws(SensorError) -> Sample {
        guard let bus, let device else { throw SensorError.unsupported(chip: "replay", "a sample before the chip was found (the recording starts without its connect transfers)") }
        bus.load(transactions)
        return try readDriver(device, time)
    }

    /// What the driver asked for that the recording did not hold, if it happened.
    public var divergence: String? { bus?.divergence }
}

extension MagnetometerReader {
    /// Replays a magnetometer read with `configuration`'s chip, address and settings.
    public static func replay(_ configuration: Configuration) -> SensorReplay<MagneticSample> {
        SensorReplay(Kind.self, configuration: configuration)
    }
}

extension InertialReader {
    /// Replays an accelerometer/gyroscope read with `configuration`'s chip, address and settings.
    public static func replay(_ configuration: Configuration) -> SensorReplay<InertialSample> {
        SensorReplay(Kind.self, configuration: configuration)
    }
}
