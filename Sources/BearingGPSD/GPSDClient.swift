import BearingPOSIX
import BearingModel
import BearingWire
import CGPS
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Receives what a `GPSDClient` reads. All calls come on the client's own thread, in order.
public protocol GPSDClientDelegate: AnyObject, Sendable {
    func gpsdClient(_ client: GPSDClient, didReceive fix: GPSFix)
    func gpsdClient(_ client: GPSDClient, didReceive sky: SkyView)
    /// An ATT, GST, PPS or TOFF object, as gpsd wrote it.
    func gpsdClient(_ client: GPSDClient, didReceive relayed: RelayedObject)
    func gpsdClient(_ client: GPSDClient, didChangeState state: ConnectionState)
    func gpsdClient(_ client: GPSDClient, didFail error: GPSDClientError)
    /// One message as libgps read it (gpsd's JSON); `deliver` makes the calls above that it gives. The
    /// black box records the message here; the default just delivers.
    func gpsdClient(_ client: GPSDClient, didRead message: UnsafeBufferPointer<UInt8>, deliver: () -> Void)
}

extension GPSDClientDelegate {
    public func gpsdClient(_ client: GPSDClient, didRead message: UnsafeBufferPointer<UInt8>, deliver: () -> Void) { deliver() }
}

/// A failure that did not end the session by itself being reported as a state (e.g. a bad stream request).
public struct GPSDClientError: Error, Equatable, CustomStringConvertible {
    public var endpoint: String
    public var message: String
    public var description: String { "gpsd \(endpoint): \(message)" }

    public init(endpoint: String, message: String) {
        self.endpoint = endpoint
        self.message = message
    }
}

/// A gpsd session over libgps, on its own thread: open, `WATCH_ENABLE|WATCH_JSON`, wait/read, close,
/// and reconnect with backoff. A silence longer than `silenceTimeout` counts as a lost link (a frozen
/// gpsd gives no error at all).
public final class GPSDClient: Sendable {
    public struct Configuration: Equatable, Sendable {
        public var host: String = "127.0.0.1"
        public var port: Int = 2947
        /// Seconds without any message before the link is treated as lost.
        public var silenceTimeout: Double = 5
        /// First reconnect delay; doubles per failed attempt up to `retryMax`.
        public var retryInitial: Double = 0.5
        public var retryMax: Double = 5
        public init() {}
        public var endpoint: String { TCPSocket.name(host, port) }
    }

    public let configuration: Configuration
    /// Held weakly; set before `start()`, read by the worker thread at each report.
    public var delegate: GPSDClientDelegate? {
        get { delegateBox.withLock { $0.value } }
        set { delegateBox.withLock { $0.value = newValue } }
    }
    private struct WeakDelegate { weak var value: GPSDClientDelegate? }
    private let delegateBox = Mutex(WeakDelegate())

    private let worker = WorkerThread(name: "bearing.gpsd")

    /// libgps API version this binary was compiled against.
    public static var apiVersion: (major: Int, minor: Int) { (Int(bearing_gps_api_major), Int(bearing_gps_api_minor)) }

    public init(configuration: Configuration, delegate: GPSDClientDelegate? = nil) {
        self.configuration = configuration
        self.delegate = delegate
    }

    public func start() {
        worker.start { [self] in run() }
    }

    /// When the client entered the gpsd read it is in now (monotonic seconds); nil between reads. Opening
    /// the connection is not counted: a TCP connect to an unreachable host may rightly take minutes.
    public var inCallSince: Double? { worker.inCallSince }

    /// Stops the session and waits for the thread to close it (at most one wait period, 250 ms).
    public func stop() {
        worker.stop()
    }

    private func report(_ state: ConnectionState) {
        delegate?.gpsdClient(self, didChangeState: state)
    }

    private func run() {
        var attempt = 0
        var backoff = Backoff(initial: configuration.retryInitial, maximum: configuration.retryMax)
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        defer { data.deallocate() }
        while !worker.isStopping {
            attempt += 1
            report(.connecting(attempt: attempt))
            data.initialize(to: gps_data_t())
            bearing_clear_errno()
            if gps_open(configuration.host, String(configuration.port), data) != 0 {
                // libgps reports its own failures as negative codes in errno; gps_errstr knows both kinds.
                let code = bearing_errno()
                let text = code < 0 ? String(cString: bearing_gps_errstr(code)) : String(cString: strerror(code))
                let delay = backoff.delay()
                report(.disconnected(.openFailed(text), retryIn: delay))
                if !worker.pause(delay) { break }
                continue
            }
            let reason = session(data)
            gps_close(data)
            if reason == .stopped { break }
            // A session that delivered data resets the backoff; retry soon after a lost link.
            attempt = 0
            backoff.reset()
            let delay = backoff.delay()
            report(.disconnected(reason, retryIn: delay))
            if !worker.pause(delay) { break }
        }
        report(.stopped)
    }

    /// Runs one open session until it ends; returns why it ended.
    private func session(_ data: UnsafeMutablePointer<gps_data_t>) -> DisconnectReason {
        if bearing_gps_watch_json(data) != 0 {
            let message = "WATCH request failed: \(String(cString: strerror(bearing_errno())))"
            delegate?.gpsdClient(self, didFail: GPSDClientError(endpoint: configuration.endpoint, message: message))
            return .error(message)
        }
        report(.connected)
        let bufferSize = 16_384
        let message = UnsafeMutablePointer<CChar>.allocate(capacity: bufferSize)
        defer { message.deallocate() }
        var lastData = Syscall.monotonicSeconds()
        while true {
            if worker.isStopping { return .stopped }
            if worker.blockingCall({ gps_waiting(data, 250_000) }) {
                data.pointee.set = 0
                message[0] = 0
                bearing_clear_errno()
                let n = worker.blockingCall { gps_read(data, message, Int32(bufferSize)) }
                if n < 0 {
                    let code = bearing_errno()
                    return code == 0 ? .closedByPeer : .error(String(cString: strerror(code)))
                }
                if n == 0 { continue }
                lastData = Syscall.monotonicSeconds()
                deliver(data, message)
            } else if Syscall.monotonicSeconds() - lastData > configuration.silenceTimeout {
                return .silence(seconds: configuration.silenceTimeout)
            }
        }
    }

    /// Hands one read message to the delegate: recorded (`didRead`), then decoded into its calls.
    func deliver(_ data: UnsafeMutablePointer<gps_data_t>, _ message: UnsafePointer<CChar>) {
        guard let delegate else { return }
        let length = strlen(message)
        message.withMemoryRebound(to: UInt8.self, capacity: length) { raw in
            delegate.gpsdClient(self, didRead: UnsafeBufferPointer(start: raw, count: length)) {
                dispatch(data, message, className: GPSDMessage.className(message))
            }
        }
    }

    private func dispatch(_ data: UnsafeMutablePointer<gps_data_t>, _ message: UnsafePointer<CChar>, className: String?) {
        switch className {
        case "TPV": delegate?.gpsdClient(self, didReceive: GPSDMessage.fix(from: data))
        case "SKY": delegate?.gpsdClient(self, didReceive: GPSDMessage.sky(from: data, message: message))
        case "ATT", "GST", "PPS", "TOFF":
            // Relayed as gpsd wrote them: libgps keeps the raw object in `message`, one per read.
            for line in String(cString: message).split(whereSeparator: \.isNewline) {
                if let object = RelayedObject(line: String(line)) { delegate?.gpsdClient(self, didReceive: object) }
            }
        case "ERROR":
            delegate?.gpsdClient(self, didFail: GPSDClientError(endpoint: configuration.endpoint, message: "gpsd replied with an ERROR"))
        default: break
        }
    }
}

/// Copies values out of libgps's `gps_data_t` (which must stay on the session thread).
enum GPSDMessage {
    /// The `class` of a raw gpsd JSON message (`{"class":"TPV",…`).
    static func className(_ message: UnsafePointer<CChar>) -> String? {
        let raw = UnsafeRawPointer(message).assumingMemoryBound(to: UInt8.self)
        let length = strnlen(message, 256)
        let text = UnsafeBufferPointer(start: raw, count: length)
        let key = Array("\"class\":\"".utf8)
        guard text.count > key.count else { return nil }
        var i = 0
        while i + key.count < text.count {
            if text[i] == key[0] && Array(text[i..<(i + key.count)]) == key {
                var j = i + key.count
                var name: [UInt8] = []
                while j < text.count, text[j] != UInt8(ascii: "\"") { name.append(text[j]); j += 1 }
                return String(decoding: name, as: UTF8.self)
            }
            i += 1
        }
        return nil
    }

    static func finite(_ v: Double) -> Double? { v.isFinite ? v : nil }

    static func timestamp(_ ts: timespec) -> GPSTimestamp? {
        ts.tv_sec == 0 && ts.tv_nsec == 0 ? nil : GPSTimestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
    }

    static func device(_ data: UnsafeMutablePointer<gps_data_t>) -> String? {
        let path = withUnsafeBytes(of: data.pointee.dev.path) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }

    static func fix(from data: UnsafeMutablePointer<gps_data_t>) -> GPSFix {
        let f = data.pointee.fix
        var fix = GPSFix(mode: FixMode(rawValue: Int(f.mode)) ?? .notSeen)
        fix.device = device(data)
        fix.status = f.status > 0 ? Int(f.status) : nil
        fix.time = timestamp(f.time)
        fix.ept = finite(f.ept)
        fix.latitude = finite(f.latitude)
        fix.longitude = finite(f.longitude)
        fix.altHAE = finite(f.altHAE)
        fix.altMSL = finite(f.altMSL)
        fix.epx = finite(f.epx)
        fix.epy = finite(f.epy)
        fix.epv = finite(f.epv)
        fix.track = finite(f.track)
        fix.magneticTrack = finite(f.magnetic_track)
        fix.magneticVariation = finite(f.magnetic_var)
        fix.speed = finite(f.speed)
        fix.climb = finite(f.climb)
        fix.eps = finite(f.eps)
        fix.epd = finite(f.epd)
        fix.epc = finite(f.epc)
        fix.geoidSeparation = finite(f.geoid_sep)
        fix.eph = finite(f.eph)
        fix.sep = finite(f.sep)
        return fix
    }

    /// `message`, the SKY as gpsd sent it, tells whether it listed satellites at all: libgps 3.25 reads a SKY of
    /// DOPs only as no satellites (3.22 kept the last list), and neither is what gpsd said. What a SKY without a list
    /// is (no satellites, gpsd's `uSat` kept) is `WireMessage.sky`'s rule, read from the same text.
    static func sky(from data: UnsafeMutablePointer<gps_data_t>, message: UnsafePointer<CChar>) -> SkyView {
        var sky = sky(from: data)
        let first = String(cString: message).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        if let sent = (try? WireMessage(line: first))?.sky, sent.satellites == nil {
            sky.satellites = nil
            sky.reportedUsed = sent.reportedUsed
        }
        return sky
    }

    static func sky(from data: UnsafeMutablePointer<gps_data_t>) -> SkyView {
        var sky = SkyView()
        sky.device = device(data)
        sky.time = timestamp(data.pointee.skyview_time)
        let dop = data.pointee.dop
        sky.xdop = finite(dop.xdop)
        sky.ydop = finite(dop.ydop)
        sky.vdop = finite(dop.vdop)
        sky.tdop = finite(dop.tdop)
        sky.hdop = finite(dop.hdop)
        sky.gdop = finite(dop.gdop)
        sky.pdop = finite(dop.pdop)
        let count = max(0, min(Int(data.pointee.satellites_visible), Int(MAXCHANNELS)))
        var list: [Satellite] = []
        withUnsafeBytes(of: &data.pointee.skyview) { raw in
            let sats = raw.bindMemory(to: satellite_t.self)
            list.reserveCapacity(count)
            for s in sats.prefix(count) {
                list.append(Satellite(
                    prn: Int(s.PRN),
                    elevation: finite(s.elevation),
                    azimuth: finite(s.azimuth),
                    signalStrength: finite(s.ss),
                    used: s.used,
                    gnssID: Int(s.gnssid),
                    svID: Int(s.svid)))
            }
        }
        sky.satellites = list
        return sky
    }
}

/// Replays recorded gpsd messages through libgps's own JSON parser (`gps_unpack`, what `gps_read` uses)
/// and the client's decoding, to the client's delegate — what the client would have delivered live.
public final class GPSDReplay {
    private let client: GPSDClient
    private let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
    private var buffer: [CChar] = []

    /// `client` is not started: its configuration names the endpoint, its delegate takes the values.
    public init(client: GPSDClient) {
        self.client = client
        data.initialize(to: gps_data_t())
    }

    deinit { data.deallocate() }

    /// A new session (libgps starts each with a cleared `gps_data_t`).
    public func reset() { data.initialize(to: gps_data_t()) }

    /// Decodes and delivers one recorded message. Returns libgps's status (negative: it refused the JSON;
    /// nothing is delivered then, as live, where such a read fails).
    @discardableResult
    public func replay(_ message: [UInt8]) -> Int32 {
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(message.count + 1)
        for b in message { buffer.append(CChar(bitPattern: b)) }
        buffer.append(0)
        return buffer.withUnsafeMutableBufferPointer { p -> Int32 in
            guard let base = p.baseAddress else { return -1 }
            data.pointee.set = 0
            let status = gps_unpack(base, data)
            if status < 0 { return status }
            client.deliver(data, base)
            return status
        }
    }
}
