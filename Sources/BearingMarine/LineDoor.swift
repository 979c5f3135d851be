import BearingModel
import BearingPublishing
import BearingPOSIX
import BearingService
import BearingLog
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A door that turns hub values into lines. `feed` wires its chain runs to `emit` on the pipeline queue,
/// as the door opens (see `Door`); each emitted group (say HDT, HDM and HDG of one instant) goes to every
/// TCP reader in one write and to every UDP destination one datagram per line.
public final class LineDoor: Door {
    /// Sends one group of lines; called on the pipeline queue only.
    public typealias Emit = ([String]) -> Void
    public typealias Feed = @Sendable (_ hub: PipelineHub, _ emit: @escaping Emit) -> [HubSubscription]

    public let name: String
    /// The config section, for messages (`nmea0183`, `signalk`).
    let section: String
    let outlet: LineOutlet
    let core: PublishingCore
    let logger: Logger
    /// The chain runs and what they have sent; touched on the pipeline queue only.
    nonisolated(unsafe) private var runs: [HubSubscription] = []
    nonisolated(unsafe) private let counts = DoorCounts()

    init(name: String, section: String, outputs: DoorOutputs, core: PublishingCore, logger: Logger, feed: Feed) throws {
        self.name = name
        self.section = section
        self.core = core
        self.logger = logger
        outlet = try LineOutlet(outputs, section: section, logger: logger)
        for l in outlet.listeners { logger.info("\(name) listening", metadata: ["on": "\(l)"]) }
        for u in outlet.senders { logger.info("\(name) sending datagrams", metadata: ["to": "\(u.name)"]) }
        core.queue.sync { [outlet, counts] in
            runs = feed(core.hub) { lines in
                counts.lines += lines.count
                for (destination, error) in outlet.send(lines) {
                    let last = counts.failures[destination]
                    if let error, last != error.errno {
                        logger.warning("\(name): datagrams to \(destination) fail: \(error) (logged again when the error changes or after they flow again)")
                    } else if error == nil, last != nil {
                        logger.notice("\(name): datagrams to \(destination) flow again")
                    }
                    counts.failures[destination] = error?.errno
                }
            }
        }
    }

    public func run(until shutdown: ShutdownEvent) async throws {
        await shutdown.wait()
        let sent = core.queue.sync {
            endRuns()
            return counts.lines
        }
        outlet.close()
        let stats = outlet.transport?.statistics ?? SocketTransport.Statistics()
        logger.info("\(name) closed", metadata: ["lines_sent": "\(sent)", "dropped_for_slow_readers": "\(stats.dropped)",
                                                "readers_evicted": "\(stats.evicted)", "readers_refused": "\(stats.refused)"])
    }

    public func close() {
        core.queue.sync { endRuns() }
        outlet.close()
    }

    /// On the pipeline queue.
    private func endRuns() {
        for r in runs { r.cancel() }
        runs = []
    }
}

/// What a door has sent.
final class DoorCounts {
    var lines = 0
    /// The last error of each UDP destination that is failing, so that it is logged once, and again when it
    /// recovers.
    var failures: [String: Int32] = [:]
}

/// Where a door's lines go: each reader of its TCP listeners and each UDP destination. Opened whole or
/// not at all.
final class LineOutlet: Sendable {
    let transport: SocketTransport?
    let senders: [UDPSender]
    let listeners: [String]
    private let readers: DoorReaders

    init(_ outputs: DoorOutputs, section: String, logger: Logger) throws {
        var fds: [Listener] = []
        func abandon() { for l in fds { Glibc.close(l.fd) } }
        for e in outputs.tcp {
            do {
                let fd = try TCPSocket.listen(host: e.host, port: e.port)
                fds.append(Listener(fd: fd, kind: .tcp, name: TCPSocket.name(e.host, e.port), unlinkPath: nil))
            } catch {
                abandon()
                throw DoorError(message: Self.explain(error, section: section, host: e.host, port: e.port))
            }
        }
        var senders: [UDPSender] = []
        for e in outputs.udp {
            do {
                senders.append(try UDPSender(host: e.host, port: e.port))
            } catch {
                abandon()
                throw DoorError(message: "\(section).udp \(TCPSocket.name(e.host, e.port)): \(error)")
            }
        }
        readers = DoorReaders(section: section, logger: logger)
        if fds.isEmpty {
            transport = nil
        } else {
            var tc = SocketTransport.Configuration()
            tc.maxClients = outputs.maxClients
            tc.clientQueue = outputs.clientQueue
            let t = SocketTransport(listeners: fds, configuration: tc)
            t.delegate = readers
            do {
                try t.start()
            } catch {
                abandon()
                throw DoorError(message: "\(section): cannot serve its TCP listeners: \(error)")
            }
            transport = t
        }
        self.senders = senders
        listeners = fds.map(\.name)
    }

    /// Writes `lines` to every TCP reader (in one write) and to every UDP destination (a datagram each);
    /// returns each destination with the error its datagrams met, if any.
    func send(_ lines: [String]) -> [(destination: String, error: SystemError?)] {
        guard !lines.isEmpty else { return [] }
        transport?.broadcast(lines.joined(separator: "\r\n"))
        var results: [(destination: String, error: SystemError?)] = []
        for u in senders {
            var failure: SystemError?
            for line in lines where failure == nil {
                do { try u.send(line + "\r\n") } catch { failure = error }
            }
            results.append((u.name, failure))
        }
        return results
    }

    func close() { transport?.stop() }

    /// A bind that failed, in a user's words: a port in use names who usually holds it.
    static func explain(_ error: SystemError, section: String, host: String, port: Int) -> String {
        let at = "\(section).tcp \(TCPSocket.name(host, port))"
        switch error.errno {
        case EADDRINUSE:
            let holder = WellKnownPorts.holder(port).map { "; it is usually held by \($0)" } ?? ""
            return "\(at): the port is in use\(holder). Pick another port in \(section).tcp; `ss -ltnp 'sport = :\(port)'` shows who holds it"
        case EACCES where port < 1024:
            return "\(at): ports below 1024 need privileges Bearing does not have; pick a port from 1024 up"
        case EADDRNOTAVAIL:
            return "\(at): \(host) is not an address of this machine"
        default:
            return "\(at): \(error)"
        }
    }
}

/// The TCP readers of a door: they only read; what they send is discarded.
final class DoorReaders: SocketTransportDelegate {
    let section: String
    let logger: Logger

    init(section: String, logger: Logger) {
        self.section = section
        self.logger = logger
    }

    func transport(_ t: SocketTransport, didAccept client: ClientID, peer: Peer) {
        logger.debug("\(section): reader \(client) connected", metadata: ["peer": "\(peer)", "readers": "\(t.clientCount)"])
    }
    func transport(_ t: SocketTransport, didReceive bytes: UnsafeRawBufferPointer, from client: ClientID) {}
    func transport(_ t: SocketTransport, didClose client: ClientID) {
        logger.debug("\(section): reader \(client) left")
    }
    func transport(_ t: SocketTransport, note: String, warning: Bool) {
        if warning { logger.warning("\(section): \(note)") } else { logger.info("\(section): \(note)") }
    }
}
