import BearingModel
/// The protocol side of one connection, without the socket: bytes in, parsed requests and immediate
/// error replies out. Requests end at a newline or `;` (as gpsd allows `?A;?B;`), with `;` inside JSON
/// strings left alone. A line longer than `maxRequestBytes` is answered with one ERROR and skipped up
/// to its newline, so a client that floods garbage costs bounded memory and stays connected.
public struct ClientSession: Sendable {
    public enum Event: Equatable, Sendable {
        case request(ClientRequest)
        /// A line to send back at once (an ERROR).
        case reply(String)
    }

    public let maxRequestBytes: Int
    private var line: [UInt8] = []
    private var discarding = false

    public init(maxRequestBytes: Int = 4096) {
        self.maxRequestBytes = maxRequestBytes
    }

    /// Takes the bytes a read returned; returns what they completed, in order.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) -> [Event] {
        var events: [Event] = []
        for b in bytes {
            if b == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    complete(&events)
                }
                line.removeAll(keepingCapacity: true)
                continue
            }
            if discarding { continue }
            line.append(b)
            if line.count > maxRequestBytes {
                line.removeAll()
                discarding = true
                events.append(.reply(WireEncoding.error("request too long (more than \(maxRequestBytes) bytes); skipped to its end of line")))
            }
        }
        return events
    }

    public mutating func receive(_ bytes: [UInt8]) -> [Event] {
        bytes.withUnsafeBytes { receive($0) }
    }

    private func complete(_ events: inout [Event]) {
        guard let text = String(validating: line, as: UTF8.self) else {
            events.append(.reply(WireEncoding.error("request is not valid UTF-8")))
            return
        }
        for part in Self.splitRequests(text) {
            do throws(ClientRequestError) {
                events.append(.request(try ClientRequest.parse(part)))
            } catch {
                events.append(.reply(WireEncoding.error(error.message)))
            }
        }
    }

    /// Splits `?A;?B={…};` into requests, keeping `;` inside JSON strings.
    ///
    /// Scans UTF-8 bytes, as the JSON parser does, not Characters: a combining mark after a quote
    /// (`"\u{301}`) is one Character that is not `"`, so a Character scan lost track of the string and
    /// split at a `;` inside it.
    public static func splitRequests(_ text: String) -> [Substring] {
        var parts: [Substring] = []
        let bytes = text.utf8
        var start = bytes.startIndex
        var inString = false
        var escaped = false
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let c = bytes[i]
            if inString {
                if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") { inString = false }
            } else if c == UInt8(ascii: "\"") {
                inString = true
            } else if c == UInt8(ascii: ";") {
                parts.append(text[start..<i])
                start = bytes.index(after: i)
            }
            i = bytes.index(after: i)
        }
        parts.append(text[start...])
        return parts.filter { !$0.allSatisfy(\.isWhitespace) }
    }
}
