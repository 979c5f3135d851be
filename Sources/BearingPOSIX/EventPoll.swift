import CBearingSys
#if canImport(Glibc)
import Glibc
#endif

/// An epoll instance: descriptors registered with a 64-bit tag, and a wait that reports the tags that are
/// ready. Unlike `poll(2)` a turn costs what is ready, not what is open, which matters with a hundred
/// readers connected and one of them being written to.
public final class EventPoll {
    public struct Events: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let readable = Events(rawValue: UInt32(EPOLLIN.rawValue))
        public static let writable = Events(rawValue: UInt32(EPOLLOUT.rawValue))
        public static let hangup = Events(rawValue: UInt32(EPOLLHUP.rawValue))
        public static let error = Events(rawValue: UInt32(EPOLLERR.rawValue))
    }

    public let fd: Int32
    private var tags = [UInt64](repeating: 0, count: 64)
    private var events = [UInt32](repeating: 0, count: 64)

    public init() throws(SystemError) {
        fd = try Syscall.check("epoll_create1") { bearing_epoll_create() }
    }

    deinit { close(fd) }

    public func add(_ descriptor: Int32, _ interest: Events, tag: UInt64) throws(SystemError) {
        try Syscall.check("epoll_ctl(ADD)", "fd \(descriptor)") { bearing_epoll_ctl(fd, EPOLL_CTL_ADD, descriptor, interest.rawValue, tag) }
    }

    /// Changes what a registered descriptor is watched for (thread-safe, as epoll_ctl is).
    public func modify(_ descriptor: Int32, _ interest: Events, tag: UInt64) throws(SystemError) {
        try Syscall.check("epoll_ctl(MOD)", "fd \(descriptor)") { bearing_epoll_ctl(fd, EPOLL_CTL_MOD, descriptor, interest.rawValue, tag) }
    }

    /// Waits up to `timeout` milliseconds (-1: without limit) and calls `body` for each ready descriptor.
    /// An interrupted wait returns with nothing ready.
    public func wait(timeout: Int32, _ body: (_ tag: UInt64, _ events: Events) -> Void) throws(SystemError) {
        let n = tags.withUnsafeMutableBufferPointer { t in
            events.withUnsafeMutableBufferPointer { e in
                bearing_epoll_wait(fd, t.baseAddress, e.baseAddress, Int32(t.count), timeout)
            }
        }
        if n < 0 {
            if errno == EINTR { return }
            throw SystemError("epoll_wait")
        }
        for i in 0..<Int(n) { body(tags[i], Events(rawValue: events[i])) }
    }
}
