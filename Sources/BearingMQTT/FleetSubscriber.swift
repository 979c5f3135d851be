import BearingModel
import BearingPOSIX
import Synchronization

/// A fleet's devices, live, from their broker (`bearing watch --mqtt`): subscribes to each device's status,
/// TPV, ATT, SKY, SPOOL and fleet pipelines status under `root`, and hands every message to `receive` on the
/// client's thread until it returns false. A broker that is down is tried again for ever (`notice` says so);
/// one that refuses the credentials or whose TLS fails on a setting ends it with an error naming the option
/// to change.
public final class FleetSubscriber: MQTTClientDelegate {
    /// One message from a device: `ROOT/DEVICE/KIND`.
    public struct Message: Sendable {
        public var topic: String
        public var device: String
        public var kind: String
        public var payload: [UInt8]
        public var retained: Bool
    }

    /// Why watching ended without the caller's say: the broker's refusal, naming the option to change.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// The topics under ROOT/DEVICE/ that are watched.
    public static let parts = ["status", "tpv", "att", "sky", "spool", "pipelines/status"]

    let root: String
    let receive: @Sendable (Message) -> Bool
    let notice: @Sendable (String) -> Void
    private let done = ConditionLock()
    private let finished = Mutex(false)
    private let refusedWith = Mutex<String?>(nil)

    init(root: String, notice: @escaping @Sendable (String) -> Void, receive: @escaping @Sendable (Message) -> Bool) {
        self.root = root
        self.notice = notice
        self.receive = receive
    }

    /// Watches until `receive` returns false or the broker refuses for good.
    public static func run(_ configuration: MQTTClient.Configuration, root: String, notice: @escaping @Sendable (String) -> Void,
                           receive: @escaping @Sendable (Message) -> Bool) throws {
        let subscriber = FleetSubscriber(root: root, notice: notice, receive: receive)
        var configuration = configuration
        configuration.retryMax = 10
        let client = try MQTTClient(configuration: configuration, delegate: subscriber)
        client.start()
        subscriber.waitUntilDone()
        client.stop()
        if let reason = subscriber.refusedWith.withLock({ $0 }) {
            throw Refusal(description: reason.contains("\(configuration.broker)") ? reason : "\(configuration.broker): \(reason)")
        }
    }

    func waitUntilDone() {
        done.lock()
        while !finished.withLock({ $0 }) { _ = done.wait(until: .infinity) }
        done.unlock()
    }

    public func mqttClient(_ client: MQTTClient, didConnect session: MQTTSession) {
        notice("connected to \(client.configuration.broker)")
        for part in Self.parts {
            do { try session.subscribe("\(root)/+/\(part)") } catch { notice("\(error)") }
        }
    }

    public func mqttClient(_ client: MQTTClient, didDisconnect reason: String, refusal: MQTTRefusal?, attempt: Int, retryIn: Double) {
        guard refusal == nil else {
            refusedWith.withLock { $0 = reason }
            return finish()
        }
        notice("\(reason); again in \(String(printf: "%.1f", retryIn)) s")
    }

    public func mqttClient(_ client: MQTTClient, didReceive message: MQTTMessage, session: MQTTSession) {
        guard !finished.withLock({ $0 }) else { return }
        let parts = message.topic.dropFirst(root.count + 1).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return }
        let m = Message(topic: message.topic, device: String(parts[0]), kind: String(parts[1]), payload: message.payload, retained: message.retained)
        if !receive(m) { finish() }
    }

    private func finish() {
        done.lock()
        finished.withLock { $0 = true }
        done.broadcast()
        done.unlock()
    }

    public func mqttClient(_ client: MQTTClient, maySend session: MQTTSession) {}
    public func mqttClient(_ client: MQTTClient, didAcknowledge mid: Int32, session: MQTTSession) {}
    public func mqttClientTick(_ client: MQTTClient, session: MQTTSession?) {}
    public func mqttClient(_ client: MQTTClient, willClose session: MQTTSession) {}
}
