#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket that sends datagrams to one numeric `host:port`, unicast or broadcast (SO_BROADCAST is set
/// for a broadcast address, which the kernel refuses otherwise). Non-blocking: a datagram the kernel cannot
/// take now is dropped and reported, never waited for.
public final class UDPSender: Sendable {
    public let host: String
    public let port: Int
    private let fd: Int32
    private let address: sockaddr_storage
    private let length: socklen_t

    public init(host: String, port: Int) throws(SystemError) {
        self.host = host
        self.port = port
        let subject = TCPSocket.name(host, port)
        let (family, storage, length) = try TCPSocket.resolve(host, port)
        let fd = try Syscall.check("socket(SOCK_DGRAM)", subject) {
            socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        if family == AF_INET, Self.isBroadcast(host) {
            var one: Int32 = 1
            do {
                try Syscall.check("setsockopt(SO_BROADCAST)", subject) { setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, socklen_t(MemoryLayout<Int32>.size)) }
            } catch {
                close(fd)
                throw error
            }
        }
        self.fd = fd
        address = storage
        self.length = length
    }

    deinit { close(fd) }

    public var name: String { TCPSocket.name(host, port) }

    /// Sends `text` as one datagram.
    public func send(_ text: String) throws(SystemError) {
        var text = text
        var a = address
        let n = text.withUTF8 { bytes in
            withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
        if n < 0 { throw SystemError("sendto", name) }
    }

    /// 255.255.255.255 or an address whose last octet is 255 (a /24's broadcast address, the usual LAN).
    public static func isBroadcast(_ host: String) -> Bool {
        host == "255.255.255.255" || (host.split(separator: ".").count == 4 && host.hasSuffix(".255"))
    }
}
