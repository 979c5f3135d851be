import BearingClient
import BearingSimulator
import BearingSensors
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Accelerometer (+ gyroscope) samples read live, handed from the reader's thread to the collection loop.
public final class InertialSampleBuffer: Sendable {
    private struct State {
        var samples: [InertialSample] = []
        var status = "waiting for samples"
        var failure: String?
    }
    private let state = Mutex(State())
    private let recorder: SampleRecorder?

    public init(recorder: SampleRecorder? = nil) { self.recorder = recorder }

    public func add(_ s: InertialSample) {
        guard !s.saturated else { return }
        state.withLock {
            $0.samples.append(s)
            $0.status = "reading \(s.chip) at \(s.device)"
        }
        recorder?.append(s)
    }

    public func setStatus(_ s: String) { state.withLock { $0.status = s } }
    public func fail(_ s: String) { state.withLock { $0.failure = s } }

    /// The samples since the last call, and the status.
    public func take() -> (samples: [InertialSample], status: String, failure: String?) {
        state.withLock {
            let out = $0.samples
            $0.samples.removeAll(keepingCapacity: true)
            return (out, $0.status, $0.failure)
        }
    }
}

/// Samples straight from the IMU: the daemon's own reader on its thread.
public final class InertialSensorSource: SensorReaderDelegate, Sendable {
    private let reader: InertialReader
    private let buffer: InertialSampleBuffer

    public init(configuration: InertialReader.Configuration, buffer: InertialSampleBuffer) {
        self.buffer = buffer
        reader = InertialReader(configuration: configuration, openBus: BusOpener.open, now: GPSTimestamp.now)
        reader.delegate = self
    }

    public func start() {
        buffer.setStatus("looking for the accelerometer on \(reader.configuration.bus)")
        reader.start()
    }

    public func stop() { reader.stop() }

    public func sensorReader(didReceive sample: InertialSample) { buffer.add(sample) }

    public func sensorReader(didChangeState state: ConnectionState) {
        if case .disconnected(let reason, _) = state { buffer.setStatus("accelerometer unavailable: \(reason)") }
    }

    public func sensorReader(didFail error: SensorError) {
        buffer.setStatus("accelerometer: \(error.description)")
    }
}

/// Reading IMU recordings and the IMU itself, for `calibrate --accel` and `level`.
public enum InertialInput {
    /// An IMU recording (`IMUSampleFile`, gyroscope columns optional); errors name the line and column.
    public static func read(_ path: String) throws -> IMUSampleFile {
        let text: String
        do { text = try AtomicFile.readText(path, limit: AtomicFile.recordingLimit) } catch {
            throw CalibrateError("\(path): cannot be read: \(error)")
        }
        do { return try IMUSampleFile.parse(text, source: path, requireGyroscope: false) } catch { throw CalibrateError(error.description) }
    }

    /// Whether a bearing daemon answers at `path`.
    public static func daemonAnswers(at path: String) -> Bool {
        let client = BearingClient(.unix(path))
        do throws(BearingClientError) { try client.connect() } catch { return false }
        client.disconnect()
        return true
    }

    /// The IMU configuration to read live: the config's `imu`, with --bus over it; refused without one.
    public static func reader(_ imu: IMUConfig, bus: String?) throws -> InertialReader.Configuration {
        guard imu.enabled || bus != nil else {
            throw CalibrateError("no accelerometer configured: give --board/--config with an imu: section (or a board module with one), or --bus (or --samples FILE)")
        }
        var c = imu.reader
        if let bus { c.bus = bus }
        return c
    }
}

/// Finishes a live collection when a line (Enter) comes on stdin.
public struct EnterKey {
    private var open = true

    public init() {}

    /// Waits up to `milliseconds` for input; true when a line came.
    public mutating func pressed(waiting milliseconds: Int32) -> Bool {
        guard open else { usleep(useconds_t(milliseconds) * 1000); return false }
        var pfd = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, milliseconds) > 0 else { return false }
        var buf = [UInt8](repeating: 0, count: 256)
        let n = buf.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
        if n <= 0 { open = false; return false }
        return buf[0..<n].contains(UInt8(ascii: "\n"))
    }
}
