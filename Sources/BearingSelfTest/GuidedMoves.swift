import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// The guided moves of `bearing selftest --moves`: each turns the board about one of its axes, so that the
/// gyroscope's sign on that axis can be checked against the board profile's `orientation`, and the three
/// together give the orientation line that is right.
public enum GuidedMove: String, CaseIterable, Sendable {
    case turnClockwise = "turn", tipFrontDown = "tip", rollRight = "roll"

    public var prompt: String {
        switch self {
        case .turnClockwise: return "turn the board clockwise, seen from above, about a quarter turn, then hold it still"
        case .tipFrontDown: return "tip the board's front down by about 30°, then back level"
        case .rollRight: return "roll the board to the right (right side down) by about 30°, then back level"
        }
    }

    /// The board axis it turns about (0 x forward, 1 y right, 2 z down) and the sign of the turn about it
    /// (right-handed: clockwise seen from above is + about z down, front down is − about y right, right side
    /// down is + about x forward).
    public var boardAxis: Int { switch self { case .turnClockwise: 2; case .tipFrontDown: 1; case .rollRight: 0 } }
    public var sign: Double { self == .tipFrontDown ? -1 : 1 }
}

/// What the gyroscope saw during each move: the largest excursion of its integrated rate, radians, chip axes.
public struct GuidedMoveResults: Sendable {
    public var turned: [GuidedMove: Vector3] = [:]
    public init() {}

    /// Smallest excursion taken as a move (radians, 10°).
    public static let minimumTurn = 10 * Double.pi / 180

    /// A line per move (its sign on the board axis it should turn about, through `orientation`), and a last one
    /// with the orientation line the moves give when one is wrong.
    public func judge(orientation: Orientation, sensor: String = "imu") -> [SelfTestLine] {
        var lines: [SelfTestLine] = []
        var rows: [Int: (axis: Int, sign: Double)] = [:]
        var wrong = false
        for move in GuidedMove.allCases {
            guard let chip = turned[move], chip.length >= Self.minimumTurn else {
                lines.append(SelfTestLine(sensor, "move: \(move.rawValue)", measured: "no turn seen", expected: "a turn of 10° or more", .warn,
                                          fix: "repeat with --moves and make the move when asked"))
                wrong = true
                continue
            }
            let board = orientation.toBoard(chip)
            let (axis, value) = Self.dominant(board)
            let degrees = value * 180 / .pi
            let right = axis == move.boardAxis && value * move.sign > 0
            if !right { wrong = true }
            lines.append(SelfTestLine(sensor, "move: \(move.rawValue)", measured: String(printf: "%+.0f° about board %@", degrees, ["x", "y", "z"][axis]),
                                      expected: String(printf: "%@ about board %@", move.sign > 0 ? "+" : "−", ["x", "y", "z"][move.boardAxis]),
                                      right ? .pass : .fail))
            let (chipAxis, chipValue) = Self.dominant(chip)
            rows[move.boardAxis] = (chipAxis, chipValue > 0 ? move.sign : -move.sign)
        }
        guard wrong else { return lines }
        let axes = (0..<3).compactMap { rows[$0] }
        if axes.count == 3, Set(axes.map(\.axis)).count == 3 {
            let text = (0..<3).map { b -> String in let r = rows[b]!; return (r.sign > 0 ? "+" : "-") + ["X", "Y", "Z"][r.axis] }.joined()
            if let right = try? Orientation(axes: text) {
                lines.append(SelfTestLine(sensor, "orientation", measured: right.axes, expected: orientation.axes, .fail,
                                          fix: "orientation: \"\(right.axes)\" in the imu section (and check the magnetometer's: turn again with it set)"))
            } else {
                lines.append(SelfTestLine(sensor, "orientation", measured: text + " (a mirror image)", expected: orientation.axes, .fail,
                                          fix: "the moves disagree with any rotation: repeat them, one axis at a time"))
            }
        }
        return lines
    }

    /// The magnetometer over the turn: the horizontal field (board axes, through its `orientation`) read before and
    /// after must turn against the board's turn (`boardTurn`, radians about board z down, from the gyroscope): a
    /// board turned clockwise sees the field turn anticlockwise. The other way is a chip upside down against its
    /// profile (z and one horizontal axis the other way round): the fix flips y and z.
    public static func judgeField(before: Vector3, after: Vector3, boardTurn: Double, orientation: Orientation) -> [SelfTestLine] {
        guard abs(boardTurn) >= minimumTurn else { return [] }
        let a = atan2(before.y, before.x), b = atan2(after.y, after.x)
        var turned = b - a
        while turned > .pi { turned -= 2 * .pi }
        while turned < -.pi { turned += 2 * .pi }
        let right = turned * boardTurn < 0
        let axes = Array(orientation.axes)
        let flipped = String([axes[0], axes[1], axes[2] == "+" ? "-" : "+", axes[3], axes[4] == "+" ? "-" : "+", axes[5]])
        return [SelfTestLine("magnetometer", "move: turn", measured: String(printf: "field turned %+.0f° for the board's %+.0f°", turned * 180 / .pi, boardTurn * 180 / .pi),
                             expected: "against the board's turn", right ? .pass : .fail,
                             fix: right ? nil : "the magnetometer turns the wrong way against the IMU: the chip sits upside down against its profile; "
                                + "magnetometer orientation: \"\(flipped)\" (y and z flipped), then run the test again (the dip line checks z)")]
    }

    static func dominant(_ v: Vector3) -> (axis: Int, value: Double) {
        let c = [v.x, v.y, v.z]
        let i = (0..<3).max { abs(c[$0]) < abs(c[$1]) }!
        return (i, c[i])
    }
}
