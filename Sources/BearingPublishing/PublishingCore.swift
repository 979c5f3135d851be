import BearingModel
import BearingWire
import Dispatch
import OpenCombineDispatch

/// The hub every door subscribes to: chains run on the pipeline queue, on the pipeline's clock.
public typealias PipelineHub = PublishingHub<PipelineScheduler>

/// The one publishing core every door is a client of: the hub and the serial context it lives on.
/// Sources publish through `entry`; doors subscribe to `hub` from `queue`.
public final class PublishingCore: Sendable {
    /// The one serial context for the pipelines.
    public let queue: DispatchQueue
    /// How values enter `queue` from the sources' threads (see `PipelineEntry`).
    public let entry: PipelineEntry
    public let hub: PipelineHub
    /// The pipeline's clock: live, or a replay's.
    public let clock: PipelineClock

    /// The hub's clients (the readers of the socket door) are served once a door calls `serveClients`.
    public init(defaults: [StreamKey: [OperatorSpec]], named: [NamedPipeline] = [], devices: [String] = [], release: String,
                queue: DispatchQueue = DispatchQueue(label: "bearing.pipeline"), clock: PipelineClock = PipelineClock()) {
        self.queue = queue
        self.clock = clock
        entry = PipelineEntry(queue)
        hub = PublishingHub(defaults: defaults, named: named, devices: devices, release: release,
                            scheduler: PipelineScheduler(entry: entry, clock: clock))
    }

    /// The door whose readers are the hub's clients (WATCH, POLL, per-client chains) takes their lines: `deliver`
    /// is called on `queue` with each line and the clients it is for.
    public func serveClients(_ deliver: @escaping PipelineHub.Deliver) {
        entry.run { hub.deliver = deliver }
    }

    /// A second door whose readers are hub clients too (the web door's pages): it numbers its clients in `ids`,
    /// which no other door uses, and gets the lines for those; the other doors' clients keep theirs. A line for
    /// one door's clients only costs the others one look at its recipients.
    public func serveClients(in ids: Range<ClientID>, _ deliver: @escaping PipelineHub.Deliver) {
        entry.run {
            let others = hub.deliver
            hub.deliver = { line, clients in
                var mine = 0
                for c in clients where ids.contains(c) { mine += 1 }
                if mine == 0 { others(line, clients); return }
                if mine == clients.count { deliver(line, clients); return }
                deliver(line, clients.filter { ids.contains($0) })
                others(line, clients.filter { !ids.contains($0) })
            }
        }
    }

    /// One unfiltered value, from any thread; published before this returns.
    public func publish(_ report: Report, from source: StreamSource) {
        entry.run {
            if clock.mode == .live { clock.stamp() }
            hub.publish(report, from: source)
        }
    }

    /// A source's STATE object, from any thread.
    public func publishState(source: String, line: String) {
        entry.run { hub.publishState(source: source, line: line) }
    }
}
