import BearingModel
import BearingI2C
import BearingPOSIX
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a reader is told: the bus, which chip where, the driver settings, and how it retries.
public struct SensorReaderConfiguration<Settings: ReaderSettings>: Equatable, Sendable {
    public var bus: String = "/dev/i2c-1"
    /// A driver name; nil finds any supported chip.
    public var chip: String? = nil
    public var address: UInt8? = nil
    public var settings = Settings()
    public var retryInitial: Double = 0.5
    public var retryMax: Double = 30
    public var failuresBeforeReprobe = 3
    public init() {}
}

/// Driver settings a reader can schedule by: a default and a sample rate.
public protocol ReaderSettings: Equatable, Sendable {
    init()
    /// Samples per second wanted.
    var rate: Double { get }
}

extension MagnetometerSettings: ReaderSettings {}
extension InertialSettings: ReaderSettings {}

/// How a reader finds, configures and reads one kind of chip: all that `MagnetometerReader` and
/// `InertialReader` differ in.
protocol ReaderKind: ReaderKindMetatype {
    associatedtype Driver
    associatedtype Settings: ReaderSettings
    associatedtype Sample
    static func find(_ bus: I2CBus, chip: String?, address: UInt8?) throws(SensorError) -> Driver
    static func configure(_ driver: Driver, _ settings: Settings) throws(SensorError)
    static func address(of driver: Driver) -> UInt8
    /// One sample (a bounded data-ready wait, then a read), stamped with `time`.
    static func read(_ driver: Driver, device: String, time: () -> GPSTimestamp) throws(SensorError) -> Sample
}

#if compiler(>=6.2)
/// Swift 6.2 checks that a metatype crossing threads is `Sendable` (the loop uses `Kind.read` on its
/// thread); 6.0 (Debian 13's) has no `SendableMetatype` and does not check.
typealias ReaderKindMetatype = SendableMetatype
#else
protocol ReaderKindMetatype {}
#endif

/// Where a reader loop reports to, on its thread, in order.
struct ReaderEvents<Sample>: Sendable {
    var sample: @Sendable (Sample) -> Void
    var state: @Sendable (ConnectionState) -> Void
    var failure: @Sendable (SensorError) -> Void
}

/// A reader loop seen from the reader that owns it, whatever kind of chip it reads.
protocol ReaderLoopControl<Settings, Sample>: AnyObject, Sendable {
    associatedtype Settings: ReaderSettings
    associatedtype Sample
    var configuration: SensorReaderConfiguration<Settings> { get }
    var endpoint: String { get }
    var inCallSince: Double? { get }
    var missedReads: Int { get }
    func start(_ events: ReaderEvents<Sample>)
    func stop()
}

/// Receives what a sensor reader (`MagnetometerReader`, `InertialReader`) reads. All calls come on the
/// reader's own thread, in order.
public protocol SensorReaderDelegate<Sample>: AnyObject {
    associatedtype Sample
    func sensorReader(didReceive sample: Sample)
    func sensorReader(didChangeState state: ConnectionState)
    func sensorReader(didFail error: SensorError)
}

/// What `MagnetometerReader` and `InertialReader` share: their loop, its configuration, endpoint and
/// watchdog evidence, the delegate it reports to, starting and stopping. Each subclass says which kind
/// of chip it reads.
/// Unchecked Sendable: a non-final class cannot be checked; the loop is Sendable and `delegate` (weak) is set before start().
public class SensorReader<Settings: ReaderSettings, Sample>: @unchecked Sendable {
    public typealias Configuration = SensorReaderConfiguration<Settings>
    let loop: any ReaderLoopControl<Settings, Sample>
    public weak var delegate: (any SensorReaderDelegate<Sample>)?

    init(loop: any ReaderLoopControl<Settings, Sample>) { self.loop = loop }

    /// Starts reading on the reader's own thread, reporting to `delegate`.
    public func start() {
        loop.start(.init(
            sample: { [weak self] s in self?.delegate?.sensorReader(didReceive: s) },
            state: { [weak self] s in self?.delegate?.sensorReader(didChangeState: s) },
            failure: { [weak self] e in self?.delegate?.sensorReader(didFail: e) }))
    }

    public var configuration: Configuration { loop.configuration }

    /// `i2c:BUS:ADDRESS` of the chip in use (or being looked for); read from any thread.
    public var endpoint: String { loop.endpoint }

    /// When the reader entered the bus transfer it is in now (monotonic seconds); nil between reads.
    public var inCallSince: Double? { loop.inCallSince }

    /// Reads the schedule missed since the start because the reader ran late (its thread not run in time, or a
    /// read or a delegate that took longer than the periods): a busy CPU, not the chip. Read from any thread.
    public var missedReads: Int { loop.missedReads }

    /// Stops reading and waits for the thread (at most one sample period or backoff step).
    public func stop() { loop.stop() }
}

/// The reader loop both readers run on their own `WorkerThread`: open the bus, find and identify the chip,
/// configure it, read on a deadline schedule and report each sample. Read failures are reported; after
/// `failuresBeforeReprobe` in a row (or at once when nothing answers) the bus is closed and the chip found
/// again, with backoff.
final class SensorReaderLoop<Kind: ReaderKind>: ReaderLoopControl, Sendable {
    typealias Events = ReaderEvents<Kind.Sample>

    let configuration: SensorReaderConfiguration<Kind.Settings>
    private let openBus: @Sendable (String) throws(I2CError) -> I2CBus
    private let now: @Sendable () -> GPSTimestamp
    private let worker: WorkerThread
    /// Written by the worker thread when it finds the chip, read from any thread.
    private let currentEndpoint: Mutex<String>
    /// Periods the schedule skipped because the loop woke or finished a read too late (worker thread only writes).
    private let missed = Atomic<Int>(0)

    init(configuration: SensorReaderConfiguration<Kind.Settings>, threadName: String,
         openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus, now: @escaping @Sendable () -> GPSTimestamp) {
        self.configuration = configuration
        self.openBus = openBus
        self.now = now
        worker = WorkerThread(name: threadName)
        currentEndpoint = Mutex(Self.endpoint(configuration.bus, configuration.address))
    }

    static func endpoint(_ bus: String, _ address: UInt8?) -> String {
        "i2c:\(bus)" + (address.map { ":\(I2CError.hex($0))" } ?? "")
    }

    var endpoint: String { currentEndpoint.withLock { $0 } }

    var inCallSince: Double? { worker.inCallSince }

    var missedReads: Int { missed.load(ordering: .relaxed) }

    func start(_ events: Events) {
        worker.start { [self] in run(events) }
    }

    func stop() { worker.stop() }

    private func run(_ events: Events) {
        var attempt = 0
        var backoff = Backoff(initial: configuration.retryInitial, maximum: configuration.retryMax)
        while !worker.isStopping {
            attempt += 1
            events.state(.connecting(attempt: attempt))
            let reason: DisconnectReason
            do {
                let bus = try openBus(configuration.bus)
                let driver = try Kind.find(bus, chip: configuration.chip, address: configuration.address)
                try Kind.configure(driver, configuration.settings)
                let device = Self.endpoint(bus.path, Kind.address(of: driver))
                currentEndpoint.withLock { $0 = device }
                events.state(.connected)
                attempt = 0
                backoff.reset()
                reason = readLoop(driver, device: device, events)
            } catch let e as I2CError {
                events.failure(.bus(e))
                reason = .openFailed(e.description)
            } catch let e as SensorError {
                events.failure(e)
                reason = .openFailed(e.description)
            } catch {
                reason = .error("\(error)")
            }
            if reason == .stopped { break }
            let delay = backoff.delay()
            events.state(.disconnected(reason, retryIn: delay))
            if !worker.pause(delay) { break }
        }
        events.state(.stopped)
    }

    /// Reads until stopped or the chip is lost; returns why it ended.
    private func readLoop(_ driver: Kind.Driver, device: String, _ events: Events) -> DisconnectReason {
        let period = 1 / max(0.01, configuration.settings.rate)
        // Paced on the monotonic clock: the wall clock may step when GPS or NTP sets it.
        var next = Syscall.monotonicSeconds()
        var failures = 0
        while true {
            if worker.isStopping { return .stopped }
            let began = Syscall.monotonicSeconds()
            do {
                let sample = try worker.blockingCall { () throws(SensorError) in try Kind.read(driver, device: device, time: now) }
                failures = 0
                events.sample(sample)
            } catch {
                events.failure(error)
                failures += 1
                if case .bus(let e) = error, e.isNoAnswer { return .error(error.description) }
                if failures >= configuration.failuresBeforeReprobe { return .error(error.description) }
            }
            // The next read a period after this one was due, and never sooner than half a period after this one began: a
            // read made at once after another gives the chip's last sample again (it makes one a period), under a time a
            // millisecond or less later. Late (the thread was not run, or the delegate took long), the schedule moves on
            // from the read made on waking, and the periods passed over are counted, not read in a burst. A read that
            // itself takes longer than the period (a slow bus) is followed at once: its sample is new.
            let following = max(next + period, began + period / 2)
            let skipped = Int(((following - next) / period).rounded()) - 1
            if skipped > 0 { missed.add(skipped, ordering: .relaxed) }
            next = following
            if !worker.pause(until: next) { return .stopped }
        }
    }
}
