import BearingMQTT
import BearingPOSIX
import BearingTerminal
import BearingWire
import Synchronization

/// `bearing watch --mqtt URL`: each message of the fleet (`FleetSubscriber`) as one readable line, prefixed
/// with the device's name, or with `--json` its topic and payload.
struct FleetWatcher {
    /// The broker, credentials and TLS files (`MQTTWatchOptions`).
    let configuration: MQTTClient.Configuration
    /// Topics are ROOT/DEVICE/…: the devices' prefixes without their last part (`bearing` by default).
    let root: String
    let json: Bool
    let count: Int?

    func run() throws {
        Syscall.lineBufferStandardOutput()
        let (json, count) = (self.json, self.count)
        let printed = Mutex(0)
        do {
            try FleetSubscriber.run(configuration, root: root, notice: { Syscall.printToStandardError("bearing watch: \($0)\n") }) { message in
                let line = Self.line(message, json: json)
                // Messages delivered together may go past `count`: those are not printed.
                let n = printed.withLock { n -> Int? in
                    if let count, n >= count { return nil }
                    n += 1
                    return n
                }
                guard let n else { return false }
                print(line)
                return count.map { n < $0 } ?? true
            }
        } catch let refusal as FleetSubscriber.Refusal {
            throw WatchError(refusal.description)
        }
    }

    static func line(_ message: FleetSubscriber.Message, json: Bool) -> String {
        let text = String(decoding: message.payload, as: UTF8.self)
        if json { return "\(message.topic) \(text)" }
        if message.kind == "status" { return "\(message.device)  \(text)\(message.retained ? " (retained)" : "")" }
        if let m = try? WireMessage(line: text) {
            let seq = m.number("seq").map { "  #\(Int($0))" } ?? ""
            return "\(message.device)  \(WatchFormatter.line(m))\(seq)"
        }
        return "\(message.device)  \(message.kind): \(text.prefix(200))"
    }
}
