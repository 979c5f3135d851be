import Foundation

/// A thread that runs one loop until asked to stop, with sleeps that `stop()` interrupts: the shape shared
/// by Bearing's blocking sources (the gpsd client, the magnetometer reader), which own their I/O on a
/// thread of their own and report to a delegate.
public final class WorkerThread: @unchecked Sendable { // `condition` guards `stopRequested`, `started` and `callStarted`
    public let name: String
    private let condition = NSCondition()
    private var stopRequested = false
    private var started = false
    private var callStarted: Double?
    private let finished = DispatchSemaphore(value: 0)

    public init(name: String) { self.name = name }

    /// Runs `body` on a new thread; a second call does nothing.
    public func start(_ body: @escaping @Sendable () -> Void) {
        condition.lock(); defer { condition.unlock() }
        guard !started else { return }
        started = true
        let t = Thread { [finished] in
            body()
            finished.signal()
        }
        t.name = name
        t.start()
    }

    /// Asks the loop to end, wakes any `pause`, and waits until `body` has returned.
    public func stop() {
        condition.lock()
        let wait = started && !stopRequested
        stopRequested = true
        condition.broadcast()
        condition.unlock()
        if wait { finished.wait() }
    }

    public var isStopping: Bool {
        condition.lock(); defer { condition.unlock() }
        return stopRequested
    }

    /// Sleeps until `deadline`; returns false when woken by `stop()`.
    public func pause(until deadline: Date) -> Bool {
        condition.lock(); defer { condition.unlock() }
        while !stopRequested {
            if !condition.wait(until: deadline) { return true }
        }
        return false
    }

    /// Sleeps up to `seconds`; returns false when woken by `stop()`.
    public func pause(_ seconds: Double) -> Bool { pause(until: Date(timeIntervalSinceNow: seconds)) }

    /// Runs `body`, a call that may block (a socket read, an I2C transfer), noting since when the thread is
    /// inside it: the watchdog's evidence that the thread is not stuck in a driver.
    public func blockingCall<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let started = Syscall.monotonicSeconds()
        condition.lock(); callStarted = started; condition.unlock()
        defer { condition.lock(); callStarted = nil; condition.unlock() }
        return try body()
    }

    /// When the call the thread is in now began (monotonic seconds); nil outside one.
    public var inCallSince: Double? {
        condition.lock(); defer { condition.unlock() }
        return callStarted
    }
}
