import BearingWire
import Dispatch
import OpenCombineDispatch

/// The one publishing core every door is a client of: the hub and the serial context it lives on.
/// Sources publish through `entry`; doors subscribe to `hub` from `queue`.
public final class PublishingCore: Sendable {
    /// The one serial context for the pipelines.
    public let queue: DispatchQueue
    /// How values enter `queue` from the sources' threads (see `PipelineEntry`).
    public let entry: PipelineEntry
    public let hub: PublishingHub<DispatchQueue.OCombine>

    /// `deliver` takes each line for the socket's clients (called on `queue`).
    public init(defaults: [StreamKey: [OperatorSpec]], named: [NamedPipeline], devices: [String], release: String,
                queue: DispatchQueue = DispatchQueue(label: "bearing.pipeline"),
                deliver: @escaping PublishingHub<DispatchQueue.OCombine>.Deliver) {
        self.queue = queue
        entry = PipelineEntry(queue)
        hub = PublishingHub(defaults: defaults, named: named, devices: devices, release: release, scheduler: queue.ocombine,
                            deliver: deliver)
    }

    /// One unfiltered value, from any thread; published before this returns.
    public func publish(_ report: Report, from source: StreamSource) {
        entry.run { hub.publish(report, from: source) }
    }

    /// A source's STATE object, from any thread.
    public func publishState(source: String, line: String) {
        entry.run { hub.publishState(source: source, line: line) }
    }
}
