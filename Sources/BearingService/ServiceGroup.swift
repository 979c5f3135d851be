import BearingLog
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A long-running part of the daemon: it runs until its group tells it to shut down, then winds down
/// and returns.
public protocol Service: Sendable {
    func run(until shutdown: ShutdownEvent) async throws
}

/// A one-shot event: fired once, awaited by any number of tasks.
public actor ShutdownEvent {
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    public var hasFired: Bool { fired }

    public func fire() {
        guard !fired else { return }
        fired = true
        let w = waiters
        waiters = []
        for c in w { c.resume() }
    }

    /// Returns once the event has fired (at once if it already has). Not cancellable: pair it with
    /// `runUntil` for work that should stop.
    public func wait() async {
        if fired { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Runs `body` until it returns or this event fires, whichever is first; on the event, `body`'s task
    /// is cancelled and awaited.
    public nonisolated func runUntil(_ body: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask { await self.wait() }
            _ = try await group.next()
            group.cancelAll()
        }
    }
}

/// Services run together and shut down one by one, last first, each after the one before it has returned —
/// the order and the signals of swift-service-lifecycle's `ServiceGroup`, which Bearing used until Debian 13's
/// Swift 6.0.3 could not build it (it needs tools 6.2); this is all the daemon used of it.
///
/// A shutdown starts on one of `signals`, on `shutdown()`, or when a service returns or throws on its own
/// (then the others are shut down and the first error is rethrown).
public final class ServiceGroup: Sendable {
    private let services: [(name: String, service: any Service)]
    private let signals: [Int32]
    private let logger: Logger
    private let start = ShutdownEvent()

    public init(services: [(name: String, service: any Service)], signals: [Int32] = [SIGTERM, SIGINT], logger: Logger) {
        self.services = services
        self.signals = signals
        self.logger = logger
    }

    /// Begins the graceful shutdown, as a signal would.
    public func shutdown() {
        Task { await start.fire() }
    }

    /// A running dispatch source for `signo` (its default action off), returned once libdispatch has
    /// registered it. libdispatch registers a source asynchronously, after `resume()`: a signal that came
    /// between `SIG_IGN` and the registration would be ignored, and lost — as a SIGTERM or SIGHUP sent right
    /// after READY=1 was, under load.
    public static func signalSource(_ signo: Int32, handler: @escaping @Sendable () -> Void) async -> DispatchSourceSignal {
        signal(signo, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
        source.setEventHandler(handler: handler)
        await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
            source.setRegistrationHandler { registered.resume() }
            source.resume()
        }
        return source
    }

    public func run() async throws {
        // The services (systemd's READY=1 among them) start only once every signal source is registered.
        var sources: [DispatchSourceSignal] = []
        for signo in signals {
            sources.append(await Self.signalSource(signo) { [logger, start] in
                logger.info("signal \(signo): shutting down")
                Task { await start.fire() }
            })
        }
        defer { sources.forEach { $0.cancel() } }

        let stops = services.map { _ in ShutdownEvent() }
        let ends = services.map { _ in ShutdownEvent() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, entry) in services.enumerated() {
                group.addTask { [logger, start] in
                    var failure: (any Error)?
                    do { try await entry.service.run(until: stops[i]) } catch { failure = error }
                    await ends[i].fire()
                    if let failure {
                        logger.error("\(entry.name) failed: \(failure)")
                        await start.fire()
                        throw failure
                    }
                    if await !stops[i].hasFired {
                        logger.notice("\(entry.name) ended on its own: shutting down")
                        await start.fire()
                    }
                }
            }
            group.addTask { [start] in
                await start.wait()
                for i in stops.indices.reversed() {
                    await stops[i].fire()
                    await ends[i].wait()
                }
            }
            var firstError: (any Error)?
            while !group.isEmpty {
                do { try await group.next() } catch { firstError = firstError ?? error }
            }
            if let firstError { throw firstError }
        }
    }
}

/// A door: a service fed by the publishing hub that writes to readers outside the process. It is opened
/// before the service group runs (a port in use stops the start with an error naming it) and subscribes to
/// the hub as it opens: doors open one after another, before the sources start, so each sees every value,
/// and the chain runs on an input are in the same order every time (a replay's timers then run in the live
/// order). It closes when the group stops it.
public protocol Door: Service {
    var name: String { get }
    /// Closes what `open` opened, for a start that fails after this door was opened.
    func close()
    /// What HEALTH says of this door besides its name (its readers, its backlog), as JSON members.
    var health: [(String, HealthValue)] { get }
}

extension Door {
    public var health: [(String, HealthValue)] { [] }
}

/// A value in a door's HEALTH entry (BearingService knows no JSON).
public enum HealthValue: Sendable, Equatable {
    case number(Double)
    case string(String)
    case bool(Bool)
}

/// A door that cannot open: which output, why, and who usually holds a port in use.
public struct DoorError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
