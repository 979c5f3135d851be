import BearingCalibration
import BearingModel

/// Where a collection reports while it runs; the CLI draws it on the terminal or prints plain lines.
public protocol CollectionProgress: AnyObject {
    /// Frames replace each other in place (a terminal) rather than printing one line each.
    var live: Bool { get }
    func note(_ text: String)
    /// One frame: `lines` when live, else `plainLine`.
    func frame(_ lines: [String], plainLine: String)
    /// One frame of a magnetometer collection: status, coverage, the latest fit and a hint.
    func collecting(samples count: Int, fit: CalibrationFit?, status: String, elapsed: Double, timeout: Double,
                    orientation: Orientation, southern: Bool)
}
