import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A land vehicle's axes in the sensor's frame: `down`, and `forward` and `right` level. Built from the filter's
/// "up" and the board's forward axis, both in the sensor's frame; nil when either is not finite, "up" is not near a
/// unit vector, or the forward axis lies within 30° of the vertical (no vehicle's). The one place
/// `OnlineMagnetometerCalibration.course` and `CourseChecks` take a vehicle's frame from.
struct VehicleAxes {
    let up: Vector3
    let forward: Vector3
    var down: Vector3 { up * -1 }
    var right: Vector3 { down.cross(forward) }

    init?(up: Vector3, forward: Vector3) {
        guard up.isFinite, forward.isFinite, up.length > 0.5 else { return nil }
        let u = up.normalized, along = forward - u * forward.dot(u)
        guard along.length > 0.5 else { return nil }
        self.up = u
        self.forward = along.normalized
    }

    /// The forward axis's heading (radians) from the field `b` in the sensor's frame: its horizontal part points
    /// north, so it is forward·cos ψ − right·sin ψ.
    func heading(field b: Vector3) -> Double { atan2(-b.dot(right), b.dot(forward)) }

    /// The unit vectors of north and east in the sensor's frame when the forward axis heads `heading` (radians).
    func northEast(heading: Double) -> (north: Vector3, east: Vector3) {
        let f = forward, r = right
        return (f * cos(heading) - r * sin(heading), f * sin(heading) + r * cos(heading))
    }
}
