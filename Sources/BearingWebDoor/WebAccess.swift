import BearingModel

/// Who may do what at the web door, decided from what a request says of itself: pure, no I/O.
///
/// - Viewing (the page, its event stream, read-only requests) needs nothing from a loopback peer that names a
///   loopback host (`Host: 127.0.0.1:8074`, `localhost`, `[::1]`): anything else needs a session. The Host check
///   is what stops DNS rebinding: a site whose name points at 127.0.0.1 is same-origin to the browser, but its
///   pages send its own name as Host.
/// - Acting (online calibration, saving or fetching the black box) always needs a session.
/// - Every POST must come from the page itself: an `Origin` equal to `http://` + the Host it was sent to. A
///   browser sends Origin with every POST a page makes, so a request from another site, or one without it, is
///   refused before anything is read. No action is reachable through a GET.
public enum WebAccess {
    public struct Request: Sendable, Equatable {
        public var method: String
        public var peerIsLoopback: Bool
        public var host: String?
        public var origin: String?
        public var hasSession: Bool

        public init(method: String, peerIsLoopback: Bool, host: String?, origin: String?, hasSession: Bool) {
            self.method = method
            self.peerIsLoopback = peerIsLoopback
            self.host = host
            self.origin = origin
            self.hasSession = hasSession
        }
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        /// 401: log in first.
        case needsLogin(String)
        /// 403: refused whoever asks (another site's request).
        case forbidden(String)
    }

    /// Whether `host` (a Host header: `name[:port]`, `[v6]:port`) names this machine's loopback.
    public static func isLoopbackHost(_ host: String?) -> Bool {
        guard var h = host?.lowercased(), !h.isEmpty else { return false }
        if h.hasPrefix("[") {
            guard let close = h.firstIndex(of: "]") else { return false }
            h = String(h[h.index(after: h.startIndex)..<close])
            return h == "::1"
        }
        if let colon = h.lastIndex(of: ":") { h = String(h[..<colon]) }
        if h == "localhost" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// May this request see what the daemon knows?
    public static func view(_ r: Request) -> Decision {
        if let refusal = crossSite(r) { return refusal }
        if r.hasSession || (r.peerIsLoopback && isLoopbackHost(r.host)) { return .allowed }
        return .needsLogin("viewing from \(r.peerIsLoopback ? "this host under another name" : "another host") needs the web credential: log in")
    }

    /// May this request act on the daemon?
    public static func act(_ r: Request) -> Decision {
        if let refusal = crossSite(r) { return refusal }
        return r.hasSession ? .allowed : .needsLogin("actions need the web credential: log in")
    }

    /// May this request log in (or out)? Only the page itself may post the form.
    public static func login(_ r: Request) -> Decision {
        crossSite(r) ?? .allowed
    }

    /// A POST from anywhere but this door's own page.
    static func crossSite(_ r: Request) -> Decision? {
        guard r.method == "POST" else { return nil }
        guard let host = r.host, !host.isEmpty else { return .forbidden("a POST without a Host header") }
        guard let origin = r.origin else { return .forbidden("a POST without an Origin header (only the page may post)") }
        guard origin.lowercased() == "http://\(host.lowercased())" else {
            return .forbidden("Origin \(origin.prefix(80)) is not this door's (http://\(host.prefix(80)))")
        }
        return nil
    }
}
