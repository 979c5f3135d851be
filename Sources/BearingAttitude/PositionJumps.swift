import BearingModel

/// A fix's position and time (Unix seconds), as the jump rule sees it.
public struct FixPlace: Equatable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var time: Double
    public init(latitude: Double, longitude: Double, time: Double) {
        self.latitude = latitude
        self.longitude = longitude
        self.time = time
    }

    /// Metres to another place (great circle).
    public func metres(to p: FixPlace) -> Double { Geodesy.distance(latitude, longitude, p.latitude, p.longitude) }

    /// "50.80000, -1.10000".
    public var text: String { String(printf: "%.5f, %.5f", latitude, longitude) }
}

/// Whether a fix's position is believed for the WMM field (`DeclinationState`). A position the board could not have
/// reached from the last one believed (faster than `fastest`, beyond `slack` for the fixes' own error) is held, not
/// believed, until fixes have agreed with it for `confirmation`:
/// - a receiver's glitch (a bad position for a few fixes) changes nothing, where it moved the declination, and so the
///   true heading, for as long as it lasted (the Solent's 0.88° became -3.84° at 0°, 0°);
/// - a jump that lasts (a spoofer's, or a receiver that was right this time) is believed after `confirmation`: the
///   receiver is all there is to go by.
/// A town's multipath (hundreds of metres) is within `slack`, and moves the WMM field by nothing that matters anyway.
/// After an outage the time allows more: a van driven for an hour with its receiver off is believed at its first fix.
/// A fix at exactly 0°, 0° is never believed: a receiver's placeholder for no position.
public struct PositionJumps: Equatable, Sendable {
    /// Metres a second no board of ours goes faster than (a light aircraft's cruise is below it).
    public static let fastest = 300.0
    /// Metres a fix may be off beyond what the speed allows (about WMM's declination changing by 0.05° at mid latitudes).
    public static let slack = 5_000.0
    /// Seconds of fixes agreeing with a jump before it is believed.
    public static let confirmation = 10.0

    /// What a fix changed, for the journal.
    public enum Event: Equatable, Sendable {
        /// A fix out of reach of the last believed (`from`): held.
        case held(from: FixPlace, to: FixPlace)
        /// A fix back within reach of the last believed: the jump to `jump` was not believed, `seconds` after it began.
        case ended(jump: FixPlace, seconds: Double)
        /// Fixes agreed with the jump for `confirmation`: believed, `from` the last believed before it.
        case believed(jump: FixPlace, from: FixPlace)
    }

    private struct Jump: Equatable, Sendable {
        var began: FixPlace
        var latest: FixPlace
    }

    /// The last fix believed.
    public private(set) var believed: FixPlace?
    private var jump: Jump?

    public init() {}

    /// Whether `b` could have been reached from `a` in the time between them (either way: a fix's time may go back).
    public static func reachable(_ b: FixPlace, from a: FixPlace) -> Bool {
        a.metres(to: b) <= fastest * abs(b.time - a.time) + slack
    }

    /// Takes a fix's place: whether it is believed, and the event it makes, if any.
    public mutating func take(_ p: FixPlace) -> (believed: Bool, event: Event?) {
        // Exactly 0°, 0° is a receiver's placeholder for no position, sent with a fix's mode (some do at a cold start):
        // not a place, first or later, and no jump to tell.
        if p.latitude == 0 && p.longitude == 0 { return (false, nil) }
        guard let last = believed else {
            believed = p
            return (true, nil)
        }
        if Self.reachable(p, from: last) {
            let ended = jump.map { Event.ended(jump: $0.began, seconds: p.time - $0.began.time) }
            jump = nil
            believed = p
            return (true, ended)
        }
        if let j = jump, Self.reachable(p, from: j.latest) {
            guard p.time - j.began.time >= Self.confirmation else {
                jump?.latest = p
                return (false, nil)
            }
            jump = nil
            believed = p
            return (true, .believed(jump: j.began, from: last))
        }
        // A jump, or from one jump to another: held from here.
        jump = Jump(began: p, latest: p)
        return (false, .held(from: last, to: p))
    }
}

extension PositionJumps.Event {
    /// The journal's line.
    public var line: String {
        switch self {
        case .held(let from, let to):
            return "GPS fix at \(to.text) is \(Self.kilometres(from.metres(to: to))) from the last position believed (\(from.text)) "
                + "\(String(printf: "%.0f", abs(to.time - from.time))) s before it, farther than \(String(printf: "%.0f", PositionJumps.fastest)) m/s goes: "
                + "the WMM field (declination, the field's strength and dip) stays the last position's until fixes agree with the new one "
                + "for \(String(printf: "%.0f", PositionJumps.confirmation)) s"
        case .ended(let jump, let seconds):
            return "GPS fixes are back near the last position believed after \(String(printf: "%.0f", seconds)) s: "
                + "the jump to \(jump.text) was a glitch, and was not believed"
        case .believed(let jump, let from):
            return "GPS fixes have agreed with the jump to \(jump.text) (\(Self.kilometres(from.metres(to: jump))) from \(from.text)) "
                + "for \(String(printf: "%.0f", PositionJumps.confirmation)) s: the WMM field is now taken from them"
        }
    }

    static func kilometres(_ m: Double) -> String { String(printf: "%.0f km", m / 1000) }
}

/// What the journal says of positions out of reach (`PositionJumps`): a jump held at once, then at most one a minute,
/// each saying how many went untold since the last; its end or its belief only when its start was told. A spoofer or a
/// receiver flapping between two places every few seconds makes a jump and its end each time: told every time, that
/// filled the journal. Pure, on the caller's clock (seconds).
public struct PositionJumpJournal: Sendable {
    private var held = LogThrottle(interval: 60)
    private var told = false

    public init() {}

    /// The journal's line for `event` at `time`, if one is due.
    public mutating func line(for event: PositionJumps.Event, at time: Double) -> String? {
        if case .held = event {
            told = false
            guard let untold = held.admit(at: time) else { return nil }
            told = true
            return event.line + (untold > 0 ? " (\(untold) more jump\(untold == 1 ? "" : "s") since the last told)" : "")
        }
        guard told else { return nil }
        told = false
        return event.line
    }
}
