import CMicroHTTPD
import BearingPOSIX
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// libmicrohttpd, wrapped once: a request in (`HTTPRequest`), a reply out (`HTTPReply`), nothing else of the
/// library seen past this file. HTTP parsing, header and body bounds, keep-alive and chunked encoding are the
/// library's (Debian's libmicrohttpd, which systemd-journal-gatewayd serves the journal with); one thread per
/// connection, so an event stream's thread may wait for its next line.
struct HTTPRequest: Sendable {
    var method: String
    var path: String
    var query: [String: String]
    var headers: [String: String]
    var body: [UInt8]
    var peer: String
    var peerIsLoopback: Bool
    var headerCount: Int

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

enum HTTPReply: Sendable {
    case bytes(status: Int, contentType: String, body: [UInt8], headers: [(String, String)])
    /// Server-Sent Events from `stream` until it ends.
    case events(EventStream, onEnd: @Sendable () -> Void)

    static func json(_ status: Int, _ text: String, headers: [(String, String)] = []) -> HTTPReply {
        .bytes(status: status, contentType: "application/json", body: Array(text.utf8), headers: headers)
    }

    static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPReply {
        .bytes(status: status, contentType: contentType, body: Array(text.utf8), headers: [])
    }
}

/// What `HTTPServer` refuses before a handler sees the request: too many headers, too large a body.
struct HTTPBounds: Sendable {
    var maxConnections: Int
    var maxBodyBytes: Int
    var maxHeaders: Int
    /// Bytes per connection for the request line and headers (libmicrohttpd answers 431 past it).
    var memoryPerConnection = 32 * 1024
    /// Seconds a connection may make no progress before it is closed (a stalled page's too).
    var idleTimeout: UInt32 = 30
}

final class HTTPServer: Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPReply
    /// A request refused by the bounds: what, and from whom.
    typealias Refusal = @Sendable (_ reason: String, _ peer: String) -> Void

    private let handler: Handler
    private let refused: Refusal
    private let bounds: HTTPBounds
    /// The `MHD_Daemon` pointer's bits (0: not running): a pointer is not Sendable.
    private let daemon = Mutex<UInt>(0)

    init(bounds: HTTPBounds, handler: @escaping Handler, refused: @escaping Refusal) {
        self.bounds = bounds
        self.handler = handler
        self.refused = refused
    }

    /// Serves on `listenFD` (a listening TCP socket; libmicrohttpd closes it when it stops).
    func start(listenFD: Int32) throws(SystemError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let d = bearing_mhd_start(listenFD, UInt32(bounds.maxConnections), bounds.memoryPerConnection, bounds.idleTimeout,
                                        256 * 1024, HTTPServer.access, me, HTTPServer.completed, me) else {
            throw SystemError("MHD_start_daemon", "web door", errno: errno == 0 ? EINVAL : errno)
        }
        daemon.withLock { $0 = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(d))) }
    }

    /// Stops accepting and closes every connection (their threads end first: end the event streams before).
    func stop() {
        let bits = daemon.withLock { d -> UInt in defer { d = 0 }; return d }
        guard bits != 0, let d = OpaquePointer(bitPattern: Int(bitPattern: bits)) else { return }
        MHD_stop_daemon(d)
    }

    /// One request's state across libmicrohttpd's calls: its body so far.
    private final class Exchange {
        var body: [UInt8] = []
        var tooLarge = false
    }

    private static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, context in
        let server = Unmanaged<HTTPServer>.fromOpaque(cls!).takeUnretainedValue()
        return server.access(connection!, url.map { String(cString: $0) } ?? "/", method.map { String(cString: $0) } ?? "",
                             uploadData, uploadSize!, context!)
    }

    private static let completed: MHD_RequestCompletedCallback = { _, _, context, _ in
        guard let context, let raw = context.pointee else { return }
        Unmanaged<Exchange>.fromOpaque(raw).release()
        context.pointee = nil
    }

    private func access(_ connection: OpaquePointer, _ url: String, _ method: String, _ upload: UnsafePointer<CChar>?,
                        _ uploadSize: UnsafeMutablePointer<Int>, _ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        // The first call has the headers only: refuse what is out of bounds before reading a body.
        guard let raw = context.pointee else {
            let count = Int(bearing_mhd_header_count(connection))
            if count > bounds.maxHeaders {
                refused("\(count) headers (at most \(bounds.maxHeaders))", peer(connection).address)
                return send(connection, .text(431, "too many headers (at most \(bounds.maxHeaders))\n"))
            }
            if let length = lookup(connection, .HEADER_KIND, "Content-Length").flatMap(Int.init), length > bounds.maxBodyBytes {
                refused("a body of \(length) bytes (at most \(bounds.maxBodyBytes))", peer(connection).address)
                return send(connection, .text(413, "request too large (at most \(bounds.maxBodyBytes) bytes)\n"))
            }
            context.pointee = Unmanaged.passRetained(Exchange()).toOpaque()
            return .YES
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if exchange.body.count + uploadSize.pointee > bounds.maxBodyBytes {
                exchange.tooLarge = true
            } else if let upload {
                upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                    exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        let (address, loopback) = peer(connection)
        if exchange.tooLarge {
            refused("a body over \(bounds.maxBodyBytes) bytes", address)
            return send(connection, .text(413, "request too large (at most \(bounds.maxBodyBytes) bytes)\n"))
        }
        var path = url
        if let q = path.firstIndex(of: "?") { path = String(path[..<q]) }
        let query = values(connection, .GET_ARGUMENT_KIND, lowercasingKeys: false)
        let headers = values(connection, .HEADER_KIND, lowercasingKeys: true)
        let request = HTTPRequest(method: method, path: path, query: query, headers: headers, body: exchange.body,
                                  peer: address, peerIsLoopback: loopback, headerCount: headers.count)
        return send(connection, handler(request))
    }

    /// The request's values of one kind (its query's arguments, its headers), each key's last; a key without a value
    /// maps to "". libmicrohttpd calls the iterator within `MHD_get_connection_values`, so the pointer to the values
    /// being collected is valid for every call.
    private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercasingKeys: Bool) -> [String: String] {
        var collected = (values: [String: String](), lowercasingKeys: lowercasingKeys)
        withUnsafeMutablePointer(to: &collected) { pointer in
            _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
                guard let cls, let key else { return .YES }
                let collected = cls.assumingMemoryBound(to: (values: [String: String], lowercasingKeys: Bool).self)
                let name = String(cString: key)
                collected.pointee.values[collected.pointee.lowercasingKeys ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
                return .YES
            }, pointer)
        }
        return collected.values
    }

    private func peer(_ connection: OpaquePointer) -> (address: String, loopback: Bool) {
        var buffer = [CChar](repeating: 0, count: 64)
        let loopback = bearing_mhd_peer(connection, &buffer, buffer.count) == 1
        let address = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return (String(decoding: address, as: UTF8.self), loopback)
    }

    private func lookup(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ key: String) -> String? {
        MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
    }

    private func send(_ connection: OpaquePointer, _ reply: HTTPReply) -> MHD_Result {
        let response: OpaquePointer?
        let status: Int
        switch reply {
        case .bytes(let code, let contentType, let body, let headers):
            status = code
            response = body.withUnsafeBytes { b in
                MHD_create_response_from_buffer(b.count, UnsafeMutableRawPointer(mutating: b.baseAddress), .RESPMEM_MUST_COPY)
            }
            guard let response else { return .NO }
            MHD_add_response_header(response, "Content-Type", contentType)
            for (k, v) in headers { MHD_add_response_header(response, k, v) }
        case .events(let stream, let onEnd):
            status = 200
            let context = Unmanaged.passRetained(StreamContext(stream, onEnd)).toOpaque()
            response = MHD_create_response_from_callback(UInt64.max, 4096, { cls, _, buffer, max in
                let c = Unmanaged<StreamContext>.fromOpaque(cls!).takeUnretainedValue()
                switch c.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max)) {
                case .bytes(let n): return n
                case .end: return -1 // MHD_CONTENT_READER_END_OF_STREAM
                }
            }, context, { cls in
                let c = Unmanaged<StreamContext>.fromOpaque(cls!).takeRetainedValue()
                c.stream.end()
                c.onEnd()
            })
            guard let response else {
                Unmanaged<StreamContext>.fromOpaque(context).release()
                return .NO
            }
            MHD_add_response_header(response, "Content-Type", "text/event-stream")
            MHD_add_response_header(response, "Cache-Control", "no-store")
            MHD_add_response_header(response, "X-Accel-Buffering", "no")
        }
        for (k, v) in HTTPServer.everyReply { MHD_add_response_header(response, k, v) }
        let result = MHD_queue_response(connection, UInt32(status), response)
        MHD_destroy_response(response)
        return result
    }

    /// Headers on every reply: the page loads nothing from elsewhere and is framed by no one.
    static let everyReply: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    ]

    private final class StreamContext {
        let stream: EventStream
        let onEnd: @Sendable () -> Void
        init(_ stream: EventStream, _ onEnd: @escaping @Sendable () -> Void) { self.stream = stream; self.onEnd = onEnd }
    }
}
