// The fleet message fuzz target's checks (Fuzz/Fleet), which FleetFuzzCorpusTests replays too.
//
// For any bytes: nothing crashes, and the same bytes give the same result. The bytes padded past
// `maxMessageBytes` are refused for their size alone, whatever they hold. A refusal starts with
// "fleet pipelines", is at most `maxRefusalCharacters` with no control character, names a version of at
// most 64 characters with none either, and its retained status is JSON. An accepted message has a
// printable ASCII version, names no key twice at any depth, has only valid, distinct pipeline names with
// chains and only the door's classes; written out again (the operators' JSON) it reads back as the same
// value, and padded with spaces to exactly the bound it still does.
import BearingModel
import BearingWire
import BearingMQTT

public enum FleetCheck {
    public static let classes: Set<StreamClass> = [.tpv, .att, .sky]

    /// Runs every check on `bytes`; returns a description of the first failure, nil when all hold.
    public static func failure(_ bytes: [UInt8]) -> String? {
        let result = FleetPipelines.parse(bytes, classes: classes)
        if FleetPipelines.parse(bytes, classes: classes) != result { return "the same bytes read twice give two results" }

        if bytes.count <= FleetPipelines.maxMessageBytes {
            let over = FleetPipelines.maxMessageBytes + 1
            let padded = bytes + [UInt8](repeating: 0x20, count: over - bytes.count)
            let expected = "fleet pipelines: the message is \(over) bytes; at most \(FleetPipelines.maxMessageBytes) (64 KiB)"
            guard case .failure(let r) = FleetPipelines.parse(padded, classes: classes), r.message == expected, r.version == nil else {
                return "padded to \(over) bytes: not refused for its size alone: \(FleetPipelines.parse(padded, classes: classes))"
            }
        }

        switch result {
        case .failure(let r):
            return refusalFailure(r)
        case .success(nil):
            return bytes.isEmpty ? nil : "a payload of \(bytes.count) bytes read as empty"
        case .success(let fleet?):
            return acceptedFailure(fleet, bytes)
        }
    }

    static func refusalFailure(_ r: FleetPipelines.Refusal) -> String? {
        guard r.message.hasPrefix("fleet pipelines") else { return "refusal does not say what it refuses: \(r.message.debugDescription)" }
        if let f = showable(r.message, bound: FleetPipelines.maxRefusalCharacters) { return "refusal \(f)" }
        if let v = r.version, let f = showable(v, bound: 64) { return "refused version \(f)" }
        let status = WireEncoding.fleetRefused(r.message, version: r.version, inForce: nil)
        guard let json = try? JSONValue.parse(status), json["message"]?.string == r.message, json["version"]?.string == r.version else {
            return "the refusal's status is not its JSON: \(status.debugDescription)"
        }
        return nil
    }

    static func acceptedFailure(_ fleet: FleetPipelines, _ bytes: [UInt8]) -> String? {
        guard FleetPipelines.validVersion(fleet.version),
              fleet.version.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 }) else {
            return "accepted version \(fleet.version.debugDescription) is not printable ASCII"
        }
        guard let text = String(validating: bytes, as: UTF8.self), let json = try? JSONValue.parse(text) else {
            return "accepted a message that is not UTF-8 JSON"
        }
        if let path = firstRepeatedKey(json, at: "") { return "accepted a message that names \(path) twice" }
        if let c = fleet.mqtt.keys.first(where: { !classes.contains($0) }) { return "accepted a chain for \(c.rawValue)" }
        guard fleet.pipelines.count <= FleetPipelines.maxPipelines,
              Set(fleet.pipelines.map(\.name)).count == fleet.pipelines.count,
              fleet.pipelines.allSatisfy({ NamedPipeline.validName($0.name) && !$0.chains.isEmpty && $0.origin == .fleet }) else {
            return "accepted pipelines \(fleet.pipelines.map(\.name))"
        }

        let written = Array(canonical(fleet).utf8)
        if written.count <= FleetPipelines.maxMessageBytes {
            let back = FleetPipelines.parse(written, classes: classes)
            guard back == .success(fleet) else {
                return "\(fleet) written as \(String(decoding: written, as: UTF8.self).debugDescription) reads back as \(back)"
            }
        }
        let padded = bytes + [UInt8](repeating: 0x0A, count: FleetPipelines.maxMessageBytes - bytes.count)
        let atBound = FleetPipelines.parse(padded, classes: classes)
        guard atBound == .success(fleet) else { return "padded to exactly the bound: \(atBound)" }
        return nil
    }

    /// At most `bound` characters, none of them a control character (C0, DEL, C1, U+2028/9).
    public static func showable(_ text: String, bound: Int) -> String? {
        if text.count > bound { return "is \(text.count) characters, over \(bound)" }
        if let c = text.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }) {
            return "holds control character U+\(String(c.value, radix: 16)): \(text.debugDescription)"
        }
        return nil
    }

    /// A repeated key found without `JSONValue.repeatedKey`, so the rule is checked by other code than its own.
    public static func firstRepeatedKey(_ value: JSONValue, at path: String) -> String? {
        switch value {
        case .map(let entries):
            for (i, (k, v)) in entries.enumerated() {
                if entries[..<i].contains(where: { $0.0 == k }) { return "\(path)/\(k)" }
                if let inner = firstRepeatedKey(v, at: "\(path)/\(k)") { return inner }
            }
        case .list(let items):
            for (i, v) in items.enumerated() {
                if let inner = firstRepeatedKey(v, at: "\(path)/\(i)") { return inner }
            }
        default: break
        }
        return nil
    }

    /// The message that says `fleet`, written from its values: the operators' own JSON (`OperatorSpec.value`).
    public static func canonical(_ fleet: FleetPipelines) -> String {
        func chains(_ c: [StreamClass: [OperatorSpec]]) -> JSONValue {
            .map(c.keys.sorted().map { ($0.rawValue, .list(c[$0]!.map(\.value))) })
        }
        var entries: [(String, JSONValue)] = [("version", .string(fleet.version)), ("mqtt", chains(fleet.mqtt))]
        if !fleet.pipelines.isEmpty { entries.append(("pipelines", .map(fleet.pipelines.map { ($0.name, chains($0.chains)) }))) }
        return JSONValue.map(entries).json
    }

    public static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) { FuzzFailure.abort("fuzz-fleet", f) }
    }
}
