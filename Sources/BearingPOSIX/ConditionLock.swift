import CBearingSys
#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with a condition variable on the monotonic clock: the lock under Bearing's threads
/// (Foundation's `NSLock`/`NSCondition` are not in FoundationEssentials). A wait's deadline is
/// `Syscall.monotonicSeconds()` time, so setting the wall clock (GPS, NTP) never stretches or cuts a pause.
/// Unchecked Sendable: it is the lock: the pthread mutex and condition it points to synchronize themselves.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock(); defer { unlock() }
        return try body()
    }

    /// With the lock held: releases it until `broadcast()` or `deadline` (monotonic seconds), then takes it
    /// again. False once the deadline has passed.
    public func wait(until deadline: Double) -> Bool {
        guard deadline.isFinite else { return pthread_cond_wait(condition, mutex) == 0 }
        let whole = deadline.rounded(.down)
        var ts = timespec(tv_sec: Int(whole), tv_nsec: Int((deadline - whole) * 1e9))
        return pthread_cond_timedwait(condition, mutex, &ts) != ETIMEDOUT
    }

    /// Wakes every waiter (call with the lock held).
    public func broadcast() { pthread_cond_broadcast(condition) }
}

extension Syscall {
    /// Starts a detached thread named `name` (at most 15 bytes are kept, the kernel's limit) running `body`.
    public static func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { arg in
            let start = Unmanaged<ThreadStart>.fromOpaque(arg!).takeRetainedValue()
            _ = bearing_set_thread_name(start.name)
            start.body()
            return nil
        }, start)
        precondition(rc == 0, "pthread_create: \(rc)")
        pthread_detach(thread)
    }
}

/// What a new thread runs, passed through `pthread_create`'s one pointer.
private final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
}
