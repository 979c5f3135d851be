import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import OpenCombine
import OpenCombineDispatch

/// The way values enter the pipeline queue: `receive(on: PipelineEntry(queue))` runs each value as a
/// `sync` block on the queue, so it is serialized with everything else there (chains, timers, requests)
/// yet runs on the source's own thread — libdispatch runs a serial queue's `sync` block on the caller's
/// thread — and inline when already on the queue. A value costs no thread wake-up on its way from gpsd
/// or the magnetometer to the readers' sockets (about 75 µs of the median added latency on a shared
/// 2-core VM, measured with bench/latency.py), and a source whose value is being published waits for it
/// (microseconds), which keeps each source's values in order without a queue between them.
/// Delayed actions go to the queue as `asyncAfter`, as with `DispatchQueue`'s own scheduler.
/// Unchecked Sendable: both properties are immutable; `DispatchSpecificKey` is not Sendable in Swift 6.0's Linux Dispatch (swift-corelibs-libdispatch#845).
public struct PipelineEntry: Scheduler, @unchecked Sendable {
    public typealias SchedulerTimeType = DispatchQueue.OCombine.SchedulerTimeType
    public typealias SchedulerOptions = DispatchQueue.OCombine.SchedulerOptions

    public let queue: DispatchQueue
    private let key: DispatchSpecificKey<ObjectIdentifier>
    private var dispatch: DispatchQueue.OCombine { queue.ocombine }

    /// Marks `queue` so that work already on it runs inline instead of deadlocking in `sync`.
    public init(_ queue: DispatchQueue) {
        self.queue = queue
        key = DispatchSpecificKey()
        queue.setSpecific(key: key, value: ObjectIdentifier(queue))
    }

    /// Runs `action` on the queue's serial context, on this thread.
    public func run(_ action: () -> Void) {
        if DispatchQueue.getSpecific(key: key) == ObjectIdentifier(queue) { action() } else { queue.sync(execute: action) }
    }

    public var now: SchedulerTimeType { dispatch.now }
    public var minimumTolerance: SchedulerTimeType.Stride { dispatch.minimumTolerance }

    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) { run(action) }

    public func schedule(after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, options: SchedulerOptions?,
                         _ action: @escaping () -> Void) {
        dispatch.schedule(after: date, tolerance: tolerance, options: options, action)
    }

    public func schedule(after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, tolerance: SchedulerTimeType.Stride,
                         options: SchedulerOptions?, _ action: @escaping () -> Void) -> Cancellable {
        dispatch.schedule(after: date, interval: interval, tolerance: tolerance, options: options, action)
    }
}
