import BearingModel
import BearingGPSD
import BearingSensors
import BearingRecording
import BearingPublishing
import BearingPOSIX
import BearingLog
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Why a replay stopped early: the file, or a driver that asked for what the recording does not hold.
public struct ReplayError: Error, CustomStringConvertible {
    public var description: String
}

/// What a replay did.
public struct ReplaySummary: Sendable {
    public var events = 0
    public var samples = 0
    public var gpsdMessages = 0
    /// Recorded seconds replayed (first record to last).
    public var seconds = 0.0
    /// Where a damaged tail began and how many bytes were dropped (a power cut or kill -9 while writing).
    public var damagedTail: (offset: Int, bytes: Int)?
}

/// A recording read whole, with what the daemon needs before it starts: the config and calibrations in
/// force at its start, when it was made, and the delayed actions it saw run.
public struct Recording: Sendable {
    public let events: [RecordedEvent]
    /// Where each event's frame starts in the file, for messages.
    public let offsets: [Int]
    public let damagedTail: (offset: Int, bytes: Int)?

    public init(bytes: [UInt8]) throws(RecordingError) {
        var reader = try RecordingReader(bytes)
        var events: [RecordedEvent] = []
        var offsets: [Int] = []
        while let e = try reader.next() {
            events.append(e)
            offsets.append(reader.offset)
        }
        self.events = events
        self.offsets = offsets
        damagedTail = reader.damagedTail.map { ($0.offset, $0.bytes) }
    }

    /// The first value of each key record (the state the recording starts from).
    public func first(_ key: RecordKey) -> Record? { events.first { $0.record.key == key }?.record }

    public var configText: String? {
        if case .config(let text)? = first(.config) { return text }
        return nil
    }

    /// When the recording was made (its environment's `started`, else nil).
    public var startTime: GPSTimestamp? {
        guard case .environment(let pairs)? = first(.environment),
              let s = pairs.first(where: { $0.name == "started" }) else { return nil }
        let parts = s.value.split(separator: ".")
        guard parts.count == 2, let seconds = Int64(parts[0]), let nanoseconds = Int32(parts[1]) else { return nil }
        return GPSTimestamp(seconds: seconds, nanoseconds: nanoseconds)
    }

    public var environment: [Record.Pair] {
        if case .environment(let pairs)? = first(.environment) { return pairs }
        return []
    }

    /// The calibration file contents at the start, by name.
    public var calibrations: [String: String] {
        var out: [String: String] = [:]
        for e in events {
            if case .calibration(let name, let content) = e.record, out[name] == nil, let content { out[name] = content }
        }
        return out
    }
}

/// Feeds a recording to an agent built with `feed: .replay` in place of its sources: gpsd's messages
/// through libgps's parser and the client's decoding, sensor samples through the real chip drivers
/// answered from the recorded bus transfers, link states as recorded, and the pipeline's clock set to each
/// record's time, so the time-based operators decide as they did live. Delayed actions the recording saw
/// run run at their record; others (a chain the recording's config did not have) when the replay's time
/// passes them.
public final class Replayer {
    private let agent: Agent
    private let recording: Recording
    private let logger: Logger
    private let magnetometer: SensorReplay<MagneticSample>?
    private let imu: SensorReplay<InertialSample>?
    private let gpsd: GPSDReplay
    private let recordedTimers: Set<UInt64>
    /// Where a changed calibration is written before the agent reloads it (nil: calibrations stay).
    private let calibrationPaths: [String: String]

    public init(agent: Agent, recording: Recording, logger: Logger, calibrationPaths: [String: String] = [:]) {
        self.agent = agent
        self.recording = recording
        self.logger = logger
        self.calibrationPaths = calibrationPaths
        magnetometer = agent.reader.map { MagnetometerReader.replay($0.configuration) }
        imu = agent.imuReader.map { InertialReader.replay($0.configuration) }
        gpsd = GPSDReplay(client: agent.gpsd)
        var timers = Set<UInt64>()
        for e in recording.events { if case .timer(let due) = e.record { timers.insert(due) } }
        recordedTimers = timers
    }

    /// Replays every record: as fast as the CPU allows (`speed` nil), or paced at `speed` times the
    /// recorded rate. `shouldStop` is asked between records.
    public func run(speed: Double? = nil, shouldStop: () -> Bool = { false }) throws(ReplayError) -> ReplaySummary {
        var summary = ReplaySummary()
        summary.damagedTail = recording.damagedTail
        guard let first = recording.events.first?.time else { return summary }
        let started = Syscall.monotonicSeconds()
        let entry = agent.core.entry, clock = agent.clock
        for (i, event) in recording.events.enumerated() {
            if shouldStop() { break }
            if let speed {
                let due = started + Double(event.time &- first) / 1e6 / speed
                let wait = due - Syscall.monotonicSeconds()
                if wait > 0 { usleep(UInt32(min(wait, 1) * 1e6)) }
            }
            var failure: String?
            entry.run {
                clock.runTimers(through: event.time) { recordedTimers.contains($0) }
                if case .state(_, _, let wall) = event.record { clock.set(event.time, wallTime: wall) } else { clock.set(event.time) }
                failure = deliver(event.record, &summary)
                // A load gives one record per file: the agent reloads after the last of them, as it did live.
                if case .calibration = event.record, i + 1 == recording.events.count || recording.events[i + 1].record.key.map(Self.isCalibration) != true {
                    agent.reloadCalibration(reason: "recorded load")
                }
            }
            if let failure {
                throw ReplayError(description: "replay stopped at the frame at byte offset \(recording.offsets[i]) "
                                  + "(record \(i + 1) of \(recording.events.count)): \(failure)")
            }
            summary.events += 1
        }
        summary.seconds = Double((recording.events.last?.time ?? first) &- first) / 1e6
        return summary
    }

    static func isCalibration(_ key: RecordKey) -> Bool {
        if case .calibration = key { return true }
        return false
    }

    /// Delivers one record on the pipeline queue; returns why it could not be.
    private func deliver(_ record: Record, _ summary: inout ReplaySummary) -> String? {
        switch record {
        case .environment, .config:
            return nil
        case .calibration(let name, let content):
            guard let path = calibrationPaths[name] else { return nil }
            if let content {
                do { try AtomicFile.write(Array(content.utf8), to: path) } catch { return "writing the recorded \(name) calibration: \(error)" }
            } else {
                unlink(path)
            }
            return nil
        case .sensorConnect(let sensor, let bus, let transactions):
            do {
                switch sensor {
                case .magnetometer: try magnetometer?.connect(bus: bus, transactions)
                case .imu: try imu?.connect(bus: bus, transactions)
                }
            } catch {
                return "the \(sensor) driver could not find its chip in the recorded transfers: \(error)"
            }
            return nil
        case .state(let source, let state, _):
            switch source {
            case .gpsd:
                if case .connecting = state { gpsd.reset() }
                agent.gpsAdapter.gpsdClient(agent.gpsd, didChangeState: state)
            case .magnetometer: agent.magAdapter.sensorReader(didChangeState: state)
            case .imu: agent.imuAdapter.sensorReader(didChangeState: state)
            }
            return nil
        case .sensorSample(let sensor, let time, let transactions):
            summary.samples += 1
            do {
                switch sensor {
                case .magnetometer:
                    guard let magnetometer else { return nil }
                    agent.magAdapter.sensorReader(didReceive: try magnetometer.read(transactions, time: time))
                case .imu:
                    guard let imu else { return nil }
                    agent.imuAdapter.sensorReader(didReceive: try imu.read(transactions, time: time))
                }
            } catch {
                return "the \(sensor) driver's read differs from the recording (was the chip, address or rate changed?): \(error)"
            }
            return nil
        case .sensorFailure(let sensor, let message):
            (sensor == .magnetometer ? agent.magAdapter.replayFailure : agent.imuAdapter.replayFailure)(message)
            return nil
        case .gpsd(let bytes):
            summary.gpsdMessages += 1
            if gpsd.replay(bytes) < 0 { logger.debug("libgps refused a recorded message (\(bytes.count) bytes)") }
            return nil
        case .gpsdFailure(let message):
            agent.gpsAdapter.gpsdClient(agent.gpsd, didFail: GPSDClientError(endpoint: agent.config.gpsd.endpoint, message: message))
            return nil
        case .timer(let due):
            agent.clock.runTimer(due: due)
            return nil
        }
    }
}
