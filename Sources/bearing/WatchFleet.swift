import BearingDaemon
import BearingModel
import BearingWire
import BearingPOSIX
import BearingMQTT
import Synchronization

/// `bearing watch --mqtt URL`: a fleet's devices, live, from their broker: each device's status, SPOOL, fleet
/// pipelines status and data messages, one readable line each, prefixed with the device's name. A broker that
/// is down is tried again for ever; one that refuses the credentials or whose TLS fails on a setting ends it
/// with an error naming the option to change.
struct FleetWatcher {
    /// The broker, credentials and TLS files (`MQTTWatchOptions`).
    let configuration: MQTTClient.Configuration
    /// Topics are ROOT/DEVICE/…: the devices' prefixes without their last part (`bearing` by default).
    let root: String
    let json: Bool
    let count: Int?

    func run() throws {
        Syscall.lineBufferStandardOutput()
        let printer = FleetPrinter(root: root, json: json, count: count)
        var configuration = configuration
        configuration.retryMax = 10
        let client = try MQTTClient(configuration: configuration, delegate: printer)
        client.start()
        printer.waitUntilDone()
        client.stop()
        if let reason = printer.refusalReason {
            throw WatchError(reason.contains("\(configuration.broker)") ? reason : "\(configuration.broker): \(reason)")
        }
    }
}

/// Prints what the broker delivers, on the client's thread; counts toward `count`; done after `count`
/// messages or at a refusal that trying again cannot fix.
final class FleetPrinter: MQTTClientDelegate {
    let root: String
    let json: Bool
    let count: Int?
    private let printed = Mutex(0)
    private let done = ConditionLock()
    private let finished = Mutex(false)
    private let refusedWith = Mutex<String?>(nil)

    init(root: String, json: Bool, count: Int?) {
        self.root = root
        self.json = json
        self.count = count
    }

    func waitUntilDone() {
        done.lock()
        while !finished.withLock({ $0 }) { _ = done.wait(until: .infinity) }
        done.unlock()
    }

    func mqttClient(_ client: MQTTClient, didConnect session: MQTTSession) {
        Syscall.printToStandardError("bearing watch: connected to \(client.configuration.broker)\n")
        for part in ["status", "tpv", "att", "sky", "spool", "pipelines/status"] {
            do { try session.subscribe("\(root)/+/\(part)") } catch { Syscall.printToStandardError("bearing watch: \(error)\n") }
        }
    }

    /// Why the connection failed for good (the client's reason, naming the option to change), once done.
    var refusalReason: String? { refusedWith.withLock { $0 } }

    func mqttClient(_ client: MQTTClient, didDisconnect reason: String, refusal: MQTTRefusal?, attempt: Int, retryIn: Double) {
        guard refusal == nil else {
            refusedWith.withLock { $0 = reason }
            return finish()
        }
        Syscall.printToStandardError("bearing watch: \(reason); again in \(String(printf: "%.1f", retryIn)) s\n")
    }

    func mqttClient(_ client: MQTTClient, didReceive message: MQTTMessage, session: MQTTSession) {
        let parts = message.topic.dropFirst(root.count + 1).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return }
        let device = String(parts[0]), kind = String(parts[1])
        let text = String(decoding: message.payload, as: UTF8.self)
        let line: String
        if json {
            line = "\(message.topic) \(text)"
        } else if kind == "status" {
            line = "\(device)  \(text)\(message.retained ? " (retained)" : "")"
        } else if let m = try? WireMessage(line: text) {
            let seq = m.number("seq").map { "  #\(Int($0))" } ?? ""
            line = "\(device)  \(WatchFormatter.line(m))\(seq)"
        } else {
            line = "\(device)  \(kind): \(text.prefix(200))"
        }
        // Messages delivered together may go past `count`: those are not printed.
        let n = printed.withLock { n -> Int? in
            if let count, n >= count { return nil }
            n += 1
            return n
        }
        guard let n else { return }
        print(line)
        if let count, n >= count { finish() }
    }

    private func finish() {
        done.lock()
        finished.withLock { $0 = true }
        done.broadcast()
        done.unlock()
    }

    func mqttClient(_ client: MQTTClient, maySend session: MQTTSession) {}
    func mqttClient(_ client: MQTTClient, didAcknowledge mid: Int32, session: MQTTSession) {}
    func mqttClientTick(_ client: MQTTClient, session: MQTTSession?) {}
    func mqttClient(_ client: MQTTClient, willClose session: MQTTSession) {}
}
