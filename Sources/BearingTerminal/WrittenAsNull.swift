/// A key of a `--json` result that is written as null when it has no value, where synthesized `Encodable` would
/// leave it out: a script reading the results can rely on every key being there.
@propertyWrapper
struct WrittenAsNull<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}
