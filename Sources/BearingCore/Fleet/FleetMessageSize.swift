extension FleetPipelines {
    /// The refusal of a message of `size` bytes, more than `maxMessageBytes`: it is not read.
    public static func refusal(size: Int) -> Refusal {
        Refusal(version: nil, message: "fleet pipelines: a message of \(size) bytes; at most \(maxMessageBytes) (\(maxMessageBytes >> 10) KiB)")
    }
}
