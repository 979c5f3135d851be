import BearingPOSIX

/// One page's Server-Sent Events stream: the lines the hub delivers for it, queued (at most `capacity`) until
/// its connection's thread writes them as `data:` events. The pipeline queue never waits on a page: a page whose
/// queue is full has stopped reading, and is dropped (`overflowed`), never delayed for or waited on.
/// Each connection's thread blocks in `read` until there is something to send, a keep-alive is due, or the
/// stream ends.
final class EventStream: Sendable {
    enum Chunk: Equatable {
        /// Bytes to send (whole events, or the rest of one that did not fit before).
        case bytes(Int)
        /// The stream is over: the page was dropped or the door is closing.
        case end
    }

    let capacity: Int
    let keepAlive: Double
    /// Least time between two writes: lines that come sooner wait and go out together (one wake of the page's
    /// thread and one send for several lines; a page needs no lower latency than its display's).
    let writeInterval: Double
    private let lock = ConditionLock()
    // Touched with `lock` held only.
    nonisolated(unsafe) private var lines: [String] = []
    nonisolated(unsafe) private var head = 0
    /// First: how soon the browser reconnects when the stream ends (EventSource's `retry`, ms).
    nonisolated(unsafe) private var pending: [UInt8] = Array("retry: 2000\n\n".utf8)
    nonisolated(unsafe) private var sent = 0
    nonisolated(unsafe) private var ended = false
    nonisolated(unsafe) private var overflow = false
    nonisolated(unsafe) private var lastWrite = -Double.infinity

    init(capacity: Int, keepAlive: Double = 10, writeInterval: Double = 0) {
        self.capacity = capacity
        self.keepAlive = keepAlive
        self.writeInterval = writeInterval
    }

    /// One line for the page (on the pipeline queue). False when it did not fit: the page has stopped reading
    /// and the stream is over.
    @discardableResult
    func push(_ line: String) -> Bool {
        lock.withLock {
            guard !ended else { return false }
            if lines.count - head >= capacity {
                overflow = true
                ended = true
                lines = []
                head = 0
                lock.broadcast()
                return false
            }
            lines.append(line)
            // The reader waits for a first line, or (gathering lines for a write) for half the queue: woken then
            // only, not per line.
            let queued = lines.count - head
            if queued == 1 || queued == capacity / 2 { lock.broadcast() }
            return true
        }
    }

    /// Ends the stream (the door closes, or the page is gone); the reader's thread wakes and ends its response.
    func end() {
        lock.withLock {
            ended = true
            lock.broadcast()
        }
    }

    var overflowed: Bool { lock.withLock { overflow } }
    var isEnded: Bool { lock.withLock { ended } }

    /// Fills `buffer` with whole events (and the rest of one cut before), waiting for one when there is none: a
    /// `: keepalive` comment after `keepAlive` seconds of nothing, so that a page that went away is noticed.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Chunk {
        lock.withLock {
            let deadline = Syscall.monotonicSeconds() + keepAlive
            while sent == pending.count && head == lines.count && !ended {
                if !lock.wait(until: deadline) && head == lines.count && !ended {
                    pending = Array(": keepalive\n\n".utf8)
                    sent = 0
                    break
                }
            }
            if ended && sent == pending.count { return .end }
            // Lines that came within `writeInterval` of the last write wait for more, up to the interval.
            if sent == pending.count && head < lines.count && writeInterval > 0 {
                let due = lastWrite + writeInterval
                while !ended && lines.count - head < capacity / 2 && Syscall.monotonicSeconds() < due {
                    _ = lock.wait(until: due)
                }
                if ended { return .end }
            }
            if sent == pending.count {
                pending.removeAll(keepingCapacity: true)
                sent = 0
                while head < lines.count && pending.count < buffer.count {
                    pending.append(contentsOf: "data: ".utf8)
                    pending.append(contentsOf: lines[head].utf8)
                    pending.append(contentsOf: "\n\n".utf8)
                    head += 1
                }
                if head == lines.count {
                    lines.removeAll(keepingCapacity: true)
                    head = 0
                } else if head > 1024 {
                    lines.removeFirst(head)
                    head = 0
                }
            }
            let n = min(buffer.count, pending.count - sent)
            lastWrite = Syscall.monotonicSeconds()
            pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + sent, byteCount: n) }
            sent += n
            return .bytes(n)
        }
    }
}
