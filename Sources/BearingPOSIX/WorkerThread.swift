import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A thread that runs one loop until asked to stop, with sleeps that `stop()` interrupts: the shape shared
/// by Bearing's blocking sources (the gpsd client, the magnetometer reader), which own their I/O on a
/// thread of their own and report to a delegate.
/// Unchecked Sendable: `condition` guards `stopRequested`, `started`, `finished` and `callStarted` and is waited on (a `Mutex` has no condition variable).
public final class WorkerThread: @unchecked Sendable {
    public let name: String
    private let condition = ConditionLock()
    private var stopRequested = false
    private var started = false
    private var finished = false
    private var callStarted: Double?

    public init(name: String) { self.name = name }

    /// Runs `body` on a new thread; a second call does nothing.
    public func start(_ body: @escaping @Sendable () -> Void) {
        condition.lock(); defer { condition.unlock() }
        guard !started else { return }
        started = true
        Syscall.startThread(name: name) { [condition] in
            body()
            condition.withLock {
                self.finished = true
                condition.broadcast()
            }
        }
    }

    /// Asks the loop to end, wakes any `pause`, and waits until `body` has returned.
    public func stop() {
        condition.lock(); defer { condition.unlock() }
        stopRequested = true
        condition.broadcast()
        while started && !finished { _ = condition.wait(until: .infinity) }
    }

    /// Asks the loop to end and wakes any `pause`, without waiting (for a loop that must also be woken
    /// another way, say from a `poll`, before `stop()` waits).
    public func requestStop() {
        condition.lock(); defer { condition.unlock() }
        stopRequested = true
        condition.broadcast()
    }

    public var isStopping: Bool {
        condition.lock(); defer { condition.unlock() }
        return stopRequested
    }

    /// Sleeps until `deadline` (`Syscall.monotonicSeconds()` time); returns false when woken by `stop()`.
    public func pause(until deadline: Double) -> Bool {
        condition.lock(); defer { condition.unlock() }
        while !stopRequested {
            if !condition.wait(until: deadline) { return true }
        }
        return false
    }

    /// Sleeps up to `seconds`; returns false when woken by `stop()`.
    public func pause(_ seconds: Double) -> Bool { pause(until: Syscall.monotonicSeconds() + seconds) }

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
