import BearingModel
import BearingWire

extension WireEncoding {
    /// `FLEET` (retained on an MQTT door's `PREFIX/pipelines/status`): the fleet pipelines version in force
    /// (nil: the config's chains), the named pipelines the fleet set on the socket, and why the version's
    /// named pipelines were not taken, if they were not.
    public static func fleetApplied(version: String?, pipelines: [String] = [], notTaken: String? = nil) -> String {
        var w = JSONObjectWriter(class: "FLEET")
        w.string("status", version == nil ? "config" : "applied")
        w.string("version", version)
        if !pipelines.isEmpty { w.raw("pipelines", JSONValue.list(pipelines.map(JSONValue.string)).json) }
        w.string("pipelines_not_taken", notTaken)
        return w.finished()
    }

    /// The `ERROR` for a refused fleet pipelines message: why, the version refused, the one still in force.
    /// What it quotes is bounded and escaped as a `FleetPipelines.Refusal` is, whatever it is given.
    public static func fleetRefused(_ message: String, version: String?, inForce: String?) -> String {
        var w = JSONObjectWriter(class: "ERROR")
        w.string("message", message.shownInMessage(limit: FleetPipelines.maxRefusalCharacters))
        w.string("version", version?.shownInMessage(limit: 64))
        w.string("in_force", inForce ?? "config")
        return w.finished()
    }
}
