import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads the JSON files calibrations are kept in, with errors that name the file and the key.
public enum CalibrationFileDecoding {
    /// Decodes `data` as `T`; `source` names the file and `what` the kind of file in errors, e.g.
    /// `level.json: missing "roll"` or `x.json: not a mounting level file: invalid JSON` (`what` is "a mounting level file").
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, source: String, what: String) throws(CalibrationFitError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw CalibrationFitError("\(source): missing \"\(path(context.codingPath + [key]))\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw CalibrationFitError("\(source): \"\(path(context.codingPath))\" has the wrong type (\(context.debugDescription))")
        } catch let DecodingError.dataCorrupted(context) {
            let at = context.codingPath.isEmpty ? "" : " at \"\(path(context.codingPath))\""
            throw CalibrationFitError("\(source): not \(what): invalid JSON\(at)")
        } catch {
            throw CalibrationFitError("\(source): not \(what): \(error)")
        }
    }

    /// `decode`, then `check` on what was read (the record's own validation): its error is prefixed with `source`.
    public static func decode<T: Decodable, R>(_ type: T.Type, from data: Data, source: String, what: String,
                                        check: (T) throws(CalibrationFitError) -> R) throws(CalibrationFitError) -> T {
        let value = try decode(type, from: data, source: source, what: what)
        do {
            _ = try check(value)
        } catch {
            throw CalibrationFitError("\(source): \(error.message)")
        }
        return value
    }

    public static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacing(".[", with: "[")
    }

    /// Pretty, key-sorted JSON with a final newline.
    public static func encode<T: Encodable>(_ value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain numbers, strings and arrays cannot fail.
        var data = (try? encoder.encode(value)) ?? Data()
        data.append(0x0A)
        return data
    }

    /// Three finite numbers.
    public static func vector(_ values: [Double], _ key: String) throws(CalibrationFitError) -> Vector3 {
        guard values.count == 3, values.allSatisfy(\.isFinite) else { throw CalibrationFitError("\"\(key)\" must be three finite numbers") }
        return Vector3(values[0], values[1], values[2])
    }

    /// Three rows of three finite numbers, a matrix that keeps handedness.
    public static func matrix(_ rows: [[Double]], _ key: String) throws(CalibrationFitError) -> Matrix3 {
        guard rows.count == 3, rows.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isFinite) }) else {
            throw CalibrationFitError("\"\(key)\" must be 3 rows of 3 finite numbers")
        }
        let m = Matrix3(rows[0], rows[1], rows[2])
        guard m.determinant > 0 else {
            throw CalibrationFitError("\"\(key)\" has determinant \(m.determinant): it must be a correction, not a mirror or a collapse")
        }
        return m
    }
}
