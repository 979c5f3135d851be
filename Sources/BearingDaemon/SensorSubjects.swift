import BearingModel
import BearingPublishing
import BearingRecording
import BearingSensors
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A sensor reader's reports as the hub's sources (`PipelineSource`, `PipelineState`): samples, link state (replayed to each new subscriber) and
/// failures. It is the reader's delegate: each call enters the pipeline (`PipelineInput`: stamped and
/// recorded, with the bus transfers behind it) and is forwarded into its source.
public final class SensorSubjects<Sample>: SensorReaderDelegate, Sendable {
    let samples = PipelineSource<Sample>()
    /// Gives the current state on subscription, then every change.
    let states: PipelineState<ConnectionState>
    let failures = PipelineSource<SensorError>()
    private let sensor: RecordedSensor
    private let input: PipelineInput
    private let transactions: TransactionLog?
    private let time: @Sendable (Sample) -> GPSTimestamp

    init(_ sensor: RecordedSensor, input: PipelineInput, transactions: TransactionLog?, time: @escaping @Sendable (Sample) -> GPSTimestamp,
         initialState: ConnectionState = .stopped) {
        states = PipelineState(initialState)
        self.sensor = sensor
        self.input = input
        self.transactions = transactions
        self.time = time
    }

    public var currentState: ConnectionState { states.value }

    public func sensorReader(didReceive sample: Sample) {
        input.enterSample(sensor, time: time(sample), transfers: transactions) { samples.send(sample) }
    }

    public func sensorReader(didChangeState state: ConnectionState) {
        let source: RecordedSource = sensor == .magnetometer ? .magnetometer : .imu
        input.enterState(source, state, also: {
            // The transfers that found and configured the chip; those of failed attempts are dropped.
            guard let transactions else { return [] }
            let done = transactions.take()
            return state == .connected ? [.sensorConnect(sensor, bus: transactions.busPath, transactions: done)] : []
        }) { states.send(state) }
    }

    public func sensorReader(didFail error: SensorError) {
        input.enter({
            transactions?.drain { _ in }
            return .sensorFailure(sensor, message: error.description)
        }) { failures.send(error) }
    }

    /// A replayed failure, as recorded: logged as live, without the error's structure.
    func replayFailure(_ message: String) {
        failures.send(.unsupported(chip: "recorded", message))
    }
}
