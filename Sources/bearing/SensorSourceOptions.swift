import ArgumentParser
import BearingDaemon
import BearingI2C

/// Where live samples come from, shared by `calibrate` and `level`: the running daemon over its socket,
/// else (or with --direct) the sensor of the board/config, or of --bus.
struct SensorSourceOptions: ParsableArguments {
    @Option(help: "The agent's UNIX socket (default: socket.path of the config, else the standard path).") var socket: String?
    @Option(help: "Read the sensor on this bus instead of the config's (/dev/i2c-N, a number, simulator, simulator:tumble, simulator:six-position).") var bus: String?
    @Flag(help: "Read the sensor directly even when the daemon is running.") var direct = false

    func validate() throws {
        if let bus, I2CBusName.path(bus) == nil {
            throw ValidationError("--bus \(bus): expected a bus device such as /dev/i2c-1, a bus number, simulator, simulator:tumble or simulator:six-position")
        }
    }

    /// The bus path of --bus, if given.
    var busPath: String? { bus.flatMap(I2CBusName.path) }

    /// The socket to ask for the daemon: --socket, else the config's.
    func socketPath(_ config: AgentConfig) -> String { socket ?? config.socket.path }
}
