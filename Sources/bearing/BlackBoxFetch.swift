/// The daemon's in-memory black box, asked for over its socket.
enum BlackBoxFetch {
    /// The black-box ring's bytes (a `.bbx` file). Not available yet: always throws, saying so.
    static func ring(socketPath: String) throws -> [UInt8] {
        struct NotAvailable: Error, CustomStringConvertible {
            let description = "not available yet: this bearing cannot fetch the daemon's black box"
        }
        throw NotAvailable()
    }
}
