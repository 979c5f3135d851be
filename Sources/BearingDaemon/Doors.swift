import BearingLog
import BearingMarine
import BearingMQTT
import BearingService
import BearingPublishing
import BearingSocketDoor
import BearingWebDoor
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// The doors the config turns on, opened, each a client of `core`: the socket door's listeners and stored
/// pipelines first (its readers are the hub's clients), then the others, and the socket door answers its first
/// request only once they are all open, so that none is refused for what another door was about to put in force
/// (the MQTT door's saved fleet pipelines). Throws (having closed what it opened) when one cannot be.
/// `doors` ends with the socket door, so a service group (which stops the last first) stops it before the others.
public enum Doors {
    public static func open(_ config: AgentConfig, core: PublishingCore, requests: SocketDoor.Requests,
                            logger: Logger) throws -> (socket: SocketDoor, doors: [any Door]) {
        // systemd's listeners, read once: the one named `web` (bearing-web.socket) is the web door's, the rest the socket door's.
        let inherited = try SocketActivation.inheritedListeners()
        let web = inherited.filter { $0.name == WebDoor.listenerName }
        let socket = SocketDoor(configuration: SocketDoor.Configuration(socket: config.socket, pipelineStore: config.pipelineStore,
                                                                        inherited: inherited.filter { $0.name != WebDoor.listenerName }),
                                core: core, logger: logger, requests: requests)
        try socket.prepare()
        if !config.web.enabled, let w = web.first {
            logger.warning("systemd passed a listener for the web door (\(w.address)), but the config has no web: section; it is closed")
            for l in web { Glibc.close(l.fd) }
        }
        var doors: [any Door] = []
        do {
            if !config.nmea0183.outputs.isEmpty {
                doors.append(try LineDoor.nmea0183(config.nmea0183, core: core, logger: logger))
            }
            if !config.signalK.outputs.isEmpty {
                doors.append(try LineDoor.signalK(config.signalK, core: core, logger: logger))
            }
            if let broker = config.mqtt.broker {
                doors.append(try MQTTDoor(config.mqtt, broker: broker, core: core, logger: logger))
            }
            if config.web.enabled {
                doors.append(try WebDoor(config.web, core: core, requests: requests, logger: logger, inherited: web.first))
            }
            try socket.serve()
        } catch {
            for d in doors { d.close() }
            socket.close()
            throw error
        }
        return (socket, doors + [socket])
    }
}
