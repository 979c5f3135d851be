import BearingLog
import BearingMarine
import BearingMQTT
import BearingService
import BearingPublishing
import BearingSocketDoor
import BearingWebDoor

/// The doors the config turns on, opened, each a client of `core`: the socket door first (its listeners, whose
/// readers are the hub's clients), then the others. Throws (having closed what it opened) when one cannot be.
/// `doors` ends with the socket door, so a service group (which stops the last first) stops it before the others.
public enum Doors {
    public static func open(_ config: AgentConfig, core: PublishingCore, requests: SocketDoor.Requests,
                            logger: Logger) throws -> (socket: SocketDoor, doors: [any Door]) {
        let socket = try SocketDoor.open(SocketDoor.Configuration(socket: config.socket, pipelineStore: config.pipelineStore),
                                         core: core, logger: logger, requests: requests)
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
                doors.append(try WebDoor(config.web, core: core, requests: requests, logger: logger))
            }
        } catch {
            for d in doors { d.close() }
            socket.close()
            throw error
        }
        return (socket, doors + [socket])
    }
}
