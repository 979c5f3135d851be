#if canImport(Glibc)
import Glibc
#endif

/// How an external command ended, and what it wrote.
public struct CommandOutcome: Sendable {
    public enum End: Equatable, Sendable {
        case exited(Int32), signaled(Int32), timedOut
        /// Not found in `PATH`.
        case missing
        case notStarted(errno: Int32)
    }

    public var end: End
    public var stdout: [UInt8] = []
    public var stderr: [UInt8] = []
    /// More than the limit was written; the rest was dropped.
    public var truncated = false

    public init(end: End, stdout: [UInt8] = [], stderr: [UInt8] = [], truncated: Bool = false) {
        self.end = end
        self.stdout = stdout
        self.stderr = stderr
        self.truncated = truncated
    }

    public var succeeded: Bool { end == .exited(0) }
    public var errorText: String { String(decoding: stderr, as: UTF8.self) }

    public var summary: String {
        switch end {
        case .exited(let s): return "exit status \(s)"
        case .signaled(let s): return "killed by signal \(s)"
        case .timedOut: return "timed out, killed"
        case .missing: return "not installed (not found in PATH)"
        case .notStarted(let e): return "could not start: \(String(cString: strerror(e)))"
        }
    }
}

/// Runs `argv` (looked up in `PATH`), killed after `timeout` seconds, keeping at most `limit` bytes of each output.
public typealias CommandRunner = (_ argv: [String], _ timeout: Double, _ limit: Int) -> CommandOutcome

/// External commands through posix_spawnp, wrapped once: standard input /dev/null, both outputs read through
/// pipes, a process group of their own (so that a timeout kills what they started too).
public enum Subprocess {
    public static func run(_ argv: [String], timeout: Double, limit: Int) -> CommandOutcome {
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else { return CommandOutcome(end: .notStarted(errno: errno)) }
        guard pipe(&errPipe) == 0 else {
            let e = errno
            close(outPipe[0]); close(outPipe[1])
            return CommandOutcome(end: .notStarted(errno: e))
        }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), pipeSignal = sigset_t()
        sigemptyset(&none)
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &pipeSignal)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let cargs = argv.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        let spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, cargs, environ)
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0]); close(errPipe[0])
            return CommandOutcome(end: spawned == ENOENT ? .missing : .notStarted(errno: spawned))
        }

        var outcome = CommandOutcome(end: .timedOut)
        var fds = [pollfd(fd: outPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)]
        let deadline = Syscall.monotonicSeconds() + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        var timedOut = false
        while fds.contains(where: { $0.fd >= 0 }) {
            let left = deadline - Syscall.monotonicSeconds()
            if left <= 0 { timedOut = true; break }
            let ready = poll(&fds, 2, Int32(min(left, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR { break }
            for k in 0..<2 where fds[k].fd >= 0 && fds[k].revents != 0 {
                let n = chunk.withUnsafeMutableBytes { read(fds[k].fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    let room = max(0, limit - (k == 0 ? outcome.stdout.count : outcome.stderr.count))
                    if n > room { outcome.truncated = true }
                    if k == 0 { outcome.stdout += chunk[0..<min(n, room)] } else { outcome.stderr += chunk[0..<min(n, room)] }
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(fds[k].fd)
                    fds[k].fd = -1
                }
            }
        }
        for f in fds where f.fd >= 0 { close(f.fd) }
        if timedOut { kill(-pid, SIGKILL); kill(pid, SIGKILL) }
        // Outputs closed: the command has ended or is about to; one that lingers past its time is killed.
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { outcome.end = .exited(-1); return outcome }
            if Syscall.monotonicSeconds() > deadline + 1 { timedOut = true; kill(-pid, SIGKILL); kill(pid, SIGKILL) }
            usleep(10_000)
        }
        if timedOut { return outcome }
        let signal = status & 0x7f
        outcome.end = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        return outcome
    }
}
