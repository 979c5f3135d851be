import BearingModel
import BearingPublishing
import BearingRecording
import BearingSensors

/// How a source's report enters the pipeline: on the pipeline queue, stamped with the pipeline's clock,
/// recorded in the black box, then delivered — in one step, so the recording's order and times are the
/// pipeline's. In a replay the replayer has set the clock, and nothing is recorded again.
public final class PipelineInput: Sendable {
    let entry: PipelineEntry
    let clock: PipelineClock
    let recorder: BlackBoxRecorder?

    init(entry: PipelineEntry, clock: PipelineClock, recorder: BlackBoxRecorder?) {
        self.entry = entry
        self.clock = clock
        self.recorder = recorder
    }

    /// Enters one record's worth of values: `record` is made only when recording.
    func enter(_ record: () -> Record, _ deliver: () -> Void) {
        entry.run {
            if clock.mode == .live {
                let t = clock.stamp()
                recorder?.append(RecordedEvent(time: t, record()))
            }
            deliver()
        }
    }

    /// A gpsd message: stamped before its values are delivered, encoded into the black box after (the readers
    /// do not wait for the coding), in its place among the records (`BlackBoxRecorder.append(_:around:)`).
    func enterMessage(_ record: () -> Record, _ deliver: () -> Void) {
        entry.run {
            if clock.mode == .live {
                let t = clock.stamp()
                if let recorder {
                    recorder.append(RecordedEvent(time: t, record()), around: deliver)
                    return
                }
            }
            deliver()
        }
    }

    /// A sensor sample: recorded from the transfers its bus made (the hot path: no record value).
    func enterSample(_ sensor: RecordedSensor, time: GPSTimestamp, transfers: TransactionLog?, _ deliver: () -> Void) {
        entry.run {
            if clock.mode == .live, let recorder, let transfers {
                recorder.appendSample(sensor, time: time, transfers: transfers, at: clock.stamp())
            } else if clock.mode == .live {
                clock.stamp()
            }
            deliver()
        }
    }

    /// A source's state change: recorded with the wall-clock time its STATE object carries.
    func enterState(_ source: RecordedSource, _ state: ConnectionState, also: () -> [Record] = { [] }, _ deliver: () -> Void) {
        entry.run {
            if clock.mode == .live {
                let t = clock.stamp()
                let wall = GPSTimestamp.now()
                clock.setWallTime(wall)
                if let recorder {
                    for r in also() { recorder.append(RecordedEvent(time: t, r)) }
                    recorder.append(RecordedEvent(time: t, .state(source, state, wallTime: wall)))
                }
            }
            deliver()
        }
    }

    /// Records that a delayed pipeline action ran (the clock's timer observer).
    func recordTimer(due: UInt64, time: UInt64) {
        recorder?.append(RecordedEvent(time: time, .timer(due: due)))
    }
}
