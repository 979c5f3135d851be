import BearingPOSIX
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The web door's credential and the sessions of the pages that gave it.
///
/// The credential is a secret in a file (`web.credential`, by default `/etc/bearing/web-credential`, mode 0640
/// root:bearing), written by `bearing web-credential` and read at each login, so that changing it needs no
/// restart. It is compared in constant time and never sent, logged or shown. A login gives a session: 128
/// random bits in an HttpOnly, SameSite=Strict cookie, kept in memory only (a restart logs everyone out),
/// for `lifetime` seconds; at most `capacity` at once, the oldest going first.
public final class WebSessions: Sendable {
    public let credentialFile: String
    public let lifetime: Double
    public let capacity: Int
    /// Failed logins in the last minute, and when that minute began: past `maxFailures` a login is refused
    /// until the minute ends (a password guessed at network speed is not guessed).
    public static let maxFailures = 10
    private let state = Mutex<(sessions: [String: Double], failures: Int, windowStart: Double)>(([:], 0, 0))

    public init(credentialFile: String, lifetime: Double = 12 * 3600, capacity: Int = 64) {
        self.credentialFile = credentialFile
        self.lifetime = lifetime
        self.capacity = capacity
    }

    public enum LoginError: Error, Equatable, CustomStringConvertible {
        case noCredential(String)
        case wrong
        case tooMany
        public var description: String {
            switch self {
            case .noCredential(let why): return "no web credential is set (\(why)); set one with `sudo bearing web-credential`"
            case .wrong: return "wrong credential"
            case .tooMany: return "too many failed logins in the last minute; wait"
            }
        }
    }

    /// The credential file's secret (its first line, trimmed); an error says why there is none.
    public func credential() -> Result<[UInt8], LoginError> {
        do {
            let text = try AtomicFile.readText(credentialFile, limit: 4096)
            let line = text.split(separator: "\n", omittingEmptySubsequences: true).first.map { Self.trimmed($0) } ?? ""
            guard line.utf8.count >= 8 else { return .failure(.noCredential("\(credentialFile) holds no credential of 8 characters or more")) }
            return .success(Array(line.utf8))
        } catch {
            return .failure(.noCredential("\(credentialFile): \(error)"))
        }
    }

    public var hasCredential: Bool { if case .success = credential() { return true } else { return false } }

    /// Checks `given` against the credential; a new session's token when it matches.
    public func login(_ given: String, now: Double = Syscall.monotonicSeconds()) -> Result<String, LoginError> {
        let limited = state.withLock { s -> Bool in
            if now - s.windowStart > 60 { s.windowStart = now; s.failures = 0 }
            return s.failures >= Self.maxFailures
        }
        if limited { return .failure(.tooMany) }
        let secret: [UInt8]
        switch credential() {
        case .success(let c): secret = c
        case .failure(let e): return .failure(e)
        }
        guard Self.constantTimeEqual(Array(given.utf8), secret) else {
            state.withLock { $0.failures += 1 }
            return .failure(.wrong)
        }
        let token = Self.token()
        state.withLock { s in
            s.sessions = s.sessions.filter { $0.value > now }
            if s.sessions.count >= capacity, let oldest = s.sessions.min(by: { $0.value < $1.value })?.key { s.sessions[oldest] = nil }
            s.sessions[token] = now + lifetime
        }
        return .success(token)
    }

    public func isValid(_ token: String?, now: Double = Syscall.monotonicSeconds()) -> Bool {
        guard let token, token.utf8.count == 32 else { return false }
        return state.withLock { s in
            guard let expiry = s.sessions[token] else { return false }
            if expiry <= now { s.sessions[token] = nil; return false }
            return true
        }
    }

    public func logout(_ token: String?) {
        guard let token else { return }
        _ = state.withLock { $0.sessions.removeValue(forKey: token) }
    }

    public var count: Int { state.withLock { $0.sessions.count } }

    /// 128 bits from the kernel's CSPRNG (getrandom, through Swift's system generator), as 32 hex digits.
    public static func token() -> String {
        var g = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for _ in 0..<2 {
            var v = g.next() as UInt64
            for _ in 0..<16 { out.append(hex[Int(v & 15)]); v >>= 4 }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Equal bytes, in a time that depends on the lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }

    /// The session cookie's token in a `Cookie` header, if any.
    public static func token(fromCookie header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let kv = trimmed(part)
            if kv.hasPrefix(cookieName + "=") { return String(kv.dropFirst(cookieName.count + 1)) }
        }
        return nil
    }

    public static let cookieName = "bearing_session"

    static func trimmed(_ s: Substring) -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(s.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}

/// Writes the web door's credential file (`bearing web-credential`): atomically, mode 0640, group `bearing`
/// when that group exists (the service reads it as that group), so that the secret is readable by root and the
/// service only.
public enum WebCredentialFile {
    /// A new credential: 20 characters from a 32-letter alphabet without look-alikes (100 bits), from getrandom.
    public static func generate() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789-")
        var g = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int(g.next(upperBound: UInt32(alphabet.count)))] })
    }

    /// Why `secret` cannot be a credential, or nil.
    public static func problem(_ secret: String) -> String? {
        if secret.utf8.count < 8 { return "it is shorter than 8 characters" }
        if secret.utf8.count > 256 { return "it is longer than 256 characters" }
        if secret.contains(where: { $0.isNewline || $0 == "\t" }) || secret.first == " " || secret.last == " " {
            return "it has a line break, a tab, or spaces at an end"
        }
        return nil
    }

    /// Writes `secret` to `path`; the group it was given, if any.
    @discardableResult
    public static func write(_ secret: String, to path: String, group: String = "bearing") throws(SystemError) -> String? {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex { try AtomicFile.makeDirectories(String(path[..<slash])) }
        try AtomicFile.write(Array((secret + "\n").utf8), to: path, mode: 0o640)
        guard let g = getgrnam(group) else { return nil }
        if chown(path, uid_t.max, g.pointee.gr_gid) != 0 { throw SystemError("chown", path) }
        return group
    }
}
