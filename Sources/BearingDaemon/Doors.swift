import BearingLog
import BearingMarine
import BearingMQTT
import BearingService

/// The doors the config turns on, opened; throws (having closed what it opened) when one cannot be.
public enum Doors {
    public static func open(_ config: AgentConfig, server: PublishingServer, logger: Logger) throws -> [any Door] {
        var doors: [any Door] = []
        do {
            if !config.nmea0183.outputs.isEmpty {
                doors.append(try LineDoor.nmea0183(config.nmea0183, core: server.core, logger: logger))
            }
            if !config.signalK.outputs.isEmpty {
                doors.append(try LineDoor.signalK(config.signalK, core: server.core, logger: logger))
            }
            if let broker = config.mqtt.broker {
                doors.append(try MQTTDoor(config.mqtt, broker: broker, core: server.core, logger: logger))
            }
        } catch {
            for d in doors { d.close() }
            throw error
        }
        return doors
    }
}
