public struct CalibrateError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
