import BearingPOSIX

/// The `web:` section: the page the daemon serves, where it listens, who may use it, and its bounds.
public struct WebSettings: Equatable, Sendable {
    /// Whether the section is there (the door is off without it).
    public var enabled = false
    /// Where the door listens: loopback by default; a LAN address only when the config names one, and then every
    /// request needs the credential.
    public var host = "127.0.0.1"
    public var port = 8074
    /// The credential file (`bearing web-credential` writes it): a LAN address needs it, and so do actions.
    public var credentialFile = "/etc/bearing/web-credential"
    /// Pages open at once (event streams); beyond this a page is told to try later (503). Each costs a thread
    /// (256 KB of stack reserved, little of it touched) and at most `clientQueue` queued lines.
    public var maxPages = 16
    /// Lines queued per page before the page, which has stopped reading, is dropped.
    public var clientQueue = 256
    /// Least time between two writes to one page (seconds): lines that come sooner go out together.
    public var writeInterval = 0.1
    /// The largest request body (a request line, a login), bytes.
    public var maxRequestBytes = 8192
    /// Headers per request at most; more is refused (431).
    public var maxHeaders = 40
    /// How long a login lasts, seconds.
    public var sessionLifetime = 12.0 * 3600

    public init() {}

    public var isLoopback: Bool { TCPSocket.isLoopback(host) }
}
