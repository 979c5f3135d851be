import BearingYAML

/// A config's text with its secrets replaced by `<redacted>` and everything else kept byte for byte
/// (comments, layout), for `bearing report`.
///
/// Secrets: the value of a key named `password`, `passphrase`, `token`, `secret`, `psk` or ending in
/// `_password`, `_token`, `_secret` (any case; a mapping or list there loses every scalar), a URL's userinfo
/// password anywhere, comments included (`mqtt://user:pw@host` → `mqtt://user:<redacted>@host`), and the
/// value in a full-line comment such as `# password: old` (a secret commented out). Paths (`password_file`,
/// `tls.key`) stay: their content is the secret, and it is never read.
///
/// The values are found in the YAML parse and replaced where their marks say; the result is parsed again and
/// must be the same tree with those values `<redacted>`. Text that does not parse (or whose secrets cannot be
/// placed) is redacted line by line, conservatively, under a comment saying so.
public enum ConfigRedaction {
    public static let marker = "<redacted>"

    /// Secret strings shorter than this are not searched for elsewhere in the text (they would match
    /// ordinary words); where the parse places them they are redacted whatever their length.
    static let shortestSearched = 6
    /// Nodes visited at most: aliases are shared, so a few nested ones would expand to billions.
    static let budget = 100_000

    public static func isSecretKey(_ name: String) -> Bool {
        let n = name.lowercased()
        return ["password", "passphrase", "token", "secret", "psk"].contains(n)
            || ["_password", "_token", "_secret"].contains { n.hasSuffix($0) }
    }

    public static func redact(_ yaml: String) -> String {
        let text = RedactionText(yaml)
        let root: YAMLNode?
        do {
            root = try YAMLNode.compose(yaml)
        } catch {
            return "# bearing report: not valid YAML (\(error)); secrets redacted line by line, conservatively\n"
                + lineWise(text)
        }
        guard let root else { return finish(text.chars, secrets: []) }
        var finder = SecretFinder(text: text)
        finder.walk(root, parentIndent: -1, flow: false, secret: false)
        if !finder.failed, let redacted = finder.replaced(), finder.verify(redacted, against: root) {
            return finish(redacted, secrets: finder.secretValues)
        }
        return "# bearing report: the secrets could not all be placed in the parse; redacted line by line, conservatively\n"
            + lineWise(text)
    }

    /// The secret strings the config holds in the clear (secret keys' values, URL passwords), for scrubbing
    /// other text the report holds (a config error may quote a value). Empty when the text does not parse.
    public static func secrets(in yaml: String) -> [String] {
        guard let root = try? YAMLNode.compose(yaml) else { return [] }
        var finder = SecretFinder(text: RedactionText(yaml))
        finder.walk(root, parentIndent: -1, flow: false, secret: false)
        return finder.secretValues
    }

    /// `text` with URL passwords and every occurrence of `secrets` (those long enough to search) redacted.
    public static func scrub(_ text: String, secrets: [String]) -> String {
        String(String.UnicodeScalarView(replacing(secrets, in: urlPasswordsRedacted(Array(text.unicodeScalars)))))
    }

    // MARK: - The text passes

    /// URL passwords, full-line comments that name a secret key, and stray copies of the secrets.
    static func finish(_ chars: [Unicode.Scalar], secrets: [String]) -> String {
        var lines = split(urlPasswordsRedacted(chars))
        for i in lines.indices where lines[i].first(where: { $0 != " " && $0 != "\t" }) == "#" {
            if let r = secretValueOnLine(lines[i]), !r.value.isEmpty { lines[i].replaceSubrange(r.value, with: marker.unicodeScalars) }
        }
        return String(String.UnicodeScalarView(replacing(secrets, in: join(lines))))
    }

    /// Every line that names a secret key loses the rest of the line after it, and the lines indented under
    /// it are replaced whole (a block scalar, a nested section, a continued value).
    static func lineWise(_ text: RedactionText) -> String {
        var lines = split(text.chars)
        var under: Int?
        for i in lines.indices {
            let indent = lines[i].prefix { $0 == " " }.count
            let blank = lines[i].allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" }
            if let k = under {
                if blank { continue }
                if indent > k {
                    lines[i] = Array(repeating: " ", count: indent) + Array(marker.unicodeScalars)
                    continue
                }
                under = nil
            }
            if let r = secretValueOnLine(lines[i]) {
                if !r.value.isEmpty { lines[i].replaceSubrange(r.value, with: marker.unicodeScalars) }
                under = indent
            }
        }
        return String(String.UnicodeScalarView(urlPasswordsRedacted(join(lines))))
    }

    /// The first secret key on a line written `KEY: value` or `KEY=value` (quoted keys too), and the range of
    /// its value to the end of the line (empty when the value is on the lines below).
    static func secretValueOnLine(_ line: [Unicode.Scalar]) -> (key: Int, value: Range<Int>)? {
        var end = line.count
        if end > 0, line[end - 1] == "\r" { end -= 1 }
        var i = 0
        while i < end {
            guard isWordCharacter(line[i]), i == 0 || !isWordCharacter(line[i - 1]) else { i += 1; continue }
            var j = i
            while j < end, isWordCharacter(line[j]) { j += 1 }
            let word = String(String.UnicodeScalarView(line[i..<j]))
            var k = j
            if k < end, line[k] == "\"" || line[k] == "'" { k += 1 }
            while k < end, line[k] == " " || line[k] == "\t" { k += 1 }
            if k < end, isSecretKey(word), line[k] == "=" || (line[k] == ":" && (k + 1 == end || line[k + 1] == " " || line[k + 1] == "\t")) {
                var v = k + 1
                while v < end, line[v] == " " || line[v] == "\t" { v += 1 }
                return (i, v..<end)
            }
            i = j
        }
        return nil
    }

    static func isWordCharacter(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    /// The password of every `scheme://user:password@host` redacted. A URL runs to white space, or, when a
    /// quote opens it, to its closing quote; its password from the first `:` after a user name free of
    /// `/?#@` to the last `@` (over-redacting a `host:port/…@…` path rather than leaving a password).
    static func urlPasswordsRedacted(_ chars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(chars.count)
        var copied = 0
        var i = 0
        while i + 3 <= chars.count {
            guard chars[i] == ":", chars[i + 1] == "/", chars[i + 2] == "/" else { i += 1; continue }
            var s = i
            while s > 0, isSchemeCharacter(chars[s - 1]) { s -= 1 }
            let quote: Unicode.Scalar? = s > 0 && (chars[s - 1] == "\"" || chars[s - 1] == "'") ? chars[s - 1] : nil
            let start = i + 3
            var end = start
            while end < chars.count {
                let c = chars[end]
                if c == "\n" || c == "\r" || (quote == nil && (c == " " || c == "\t")) { break }
                if c == "\\", quote == "\"" { end += 2; continue }
                if c == "'", quote == "'" {
                    if end + 1 < chars.count, chars[end + 1] == "'" { end += 2; continue }
                    break
                }
                if c == "\"", quote == "\"" { break }
                end += 1
            }
            end = min(end, chars.count)
            if let r = urlPassword(chars[start..<end]), !chars[r].elementsEqual(marker.unicodeScalars) {
                out += chars[copied..<r.lowerBound]
                out += marker.unicodeScalars
                copied = r.upperBound
            }
            i = max(end, i + 3)
        }
        out += chars[copied...]
        return out
    }

    /// The URL passwords in a string (each URL taken to the string's end).
    static func urlPasswords(in string: String) -> [String] {
        let chars = Array(string.unicodeScalars)
        var found: [String] = []
        var i = 0
        while i + 3 <= chars.count {
            if chars[i] == ":", chars[i + 1] == "/", chars[i + 2] == "/", let r = urlPassword(chars[(i + 3)...]) {
                found.append(String(String.UnicodeScalarView(chars[r])))
            }
            i += 1
        }
        return found
    }

    /// The password's range in an authority-and-rest (what follows `://`), if it has a user and a password.
    static func urlPassword(_ rest: ArraySlice<Unicode.Scalar>) -> Range<Int>? {
        guard let colon = rest.firstIndex(of: ":"),
              !rest[rest.startIndex..<colon].contains(where: { "/?#@".unicodeScalars.contains($0) }),
              let at = rest.lastIndex(of: "@"), at > colon + 1 else { return nil }
        return (colon + 1)..<at
    }

    static func isSchemeCharacter(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "+" || c == "-" || c == ".")
    }

    /// Every occurrence of each secret long enough to search for, replaced.
    static func replacing(_ secrets: [String], in chars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var chars = chars
        for secret in Set(secrets) where secret.unicodeScalars.count >= shortestSearched && !secret.contains(marker) {
            let s = Array(secret.unicodeScalars)
            var out: [Unicode.Scalar] = []
            var i = 0
            while i < chars.count {
                if chars[i] == s[0], i + s.count <= chars.count, chars[i..<(i + s.count)].elementsEqual(s) {
                    out += marker.unicodeScalars
                    i += s.count
                } else {
                    out.append(chars[i])
                    i += 1
                }
            }
            chars = out
        }
        return chars
    }

    static func split(_ chars: [Unicode.Scalar]) -> [[Unicode.Scalar]] {
        chars.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
    }

    static func join(_ lines: [[Unicode.Scalar]]) -> [Unicode.Scalar] {
        Array(lines.joined(separator: ["\n"]))
    }
}

/// The config's text as libyaml counts it: characters (not bytes), lines from 1.
struct RedactionText {
    let chars: [Unicode.Scalar]
    let lineStarts: [Int]

    init(_ s: String) {
        let chars = Array(s.unicodeScalars)
        self.chars = chars
        lineStarts = [0] + chars.indices.filter { chars[$0] == "\n" }.map { $0 + 1 }
    }

    func offset(_ m: YAMLNode.Mark) -> Int? {
        guard m.line >= 1, m.line <= lineStarts.count, m.column >= 1 else { return nil }
        let o = lineStarts[m.line - 1] + m.column - 1
        return o < chars.count ? o : nil
    }
}

/// Walks the parse for the secret scalars and where each stands in the text.
struct SecretFinder {
    let text: RedactionText
    /// Each secret scalar: its mark's offset, the range its text takes and what replaces it.
    var found: [Int: (range: Range<Int>, replacement: String)] = [:]
    var secretValues: [String] = []
    var failed = false
    var visits = 0

    init(text: RedactionText) { self.text = text }

    var chars: [Unicode.Scalar] { text.chars }

    mutating func walk(_ node: YAMLNode, parentIndent: Int, flow: Bool, secret: Bool) {
        visits += 1
        guard visits <= ConfigRedaction.budget, !failed else { failed = true; return }
        switch node {
        case .scalar(let s, let mark):
            secretValues += ConfigRedaction.urlPasswords(in: s.string)
            guard secret, !node.isNull, !s.string.isEmpty else { return }
            secretValues.append(s.string)
            guard let at = text.offset(mark), let range = scalarRange(at, s.style, parentIndent: parentIndent, flow: flow) else {
                failed = true
                return
            }
            let m = ConfigRedaction.marker
            let replacement = s.style == .doubleQuoted ? "\"\(m)\"" : s.style == .singleQuoted ? "'\(m)'" : m
            found[at] = (range, replacement)
        case .mapping(let pairs, let mark):
            let inFlow = flow || opens(mark, "{")
            for (key, value) in pairs {
                let keyIndent = key.mark.column - 1
                if secret { walk(key, parentIndent: parentIndent, flow: inFlow, secret: true) }
                let named = key.string.map(ConfigRedaction.isSecretKey) ?? false
                walk(value, parentIndent: keyIndent, flow: inFlow, secret: secret || named)
            }
        case .sequence(let items, let mark):
            let inFlow = flow || opens(mark, "[")
            for item in items { walk(item, parentIndent: inFlow ? parentIndent : mark.column - 1, flow: inFlow, secret: secret) }
        }
    }

    /// Whether the collection at `mark` is written in flow style (`{`, `[` after any anchor or tag).
    func opens(_ mark: YAMLNode.Mark, _ bracket: Unicode.Scalar) -> Bool {
        guard let o = text.offset(mark) else { return false }
        let i = skipProperties(o)
        return i < chars.count && chars[i] == bracket
    }

    /// Past an anchor (`&a`) and tag (`!!str`) and the space or comment after them.
    func skipProperties(_ start: Int) -> Int {
        var i = start
        while i < chars.count, chars[i] == "&" || chars[i] == "!" {
            while i < chars.count, !" \t\r\n".unicodeScalars.contains(chars[i]) { i += 1 }
            while i < chars.count {
                if " \t\r\n".unicodeScalars.contains(chars[i]) { i += 1 } else if chars[i] == "#" {
                    while i < chars.count, chars[i] != "\n" { i += 1 }
                } else { break }
            }
        }
        return i
    }

    /// The text a scalar takes: quotes and block header included; a plain scalar without trailing space.
    func scalarRange(_ at: Int, _ style: YAMLNode.Scalar.Style, parentIndent: Int, flow: Bool) -> Range<Int>? {
        let i = skipProperties(at)
        guard i < chars.count else { return nil }
        let n = chars.count
        switch style {
        case .doubleQuoted:
            guard chars[i] == "\"" else { return nil }
            var j = i + 1
            while j < n {
                if chars[j] == "\\" { j += 2; continue }
                if chars[j] == "\"" { return i..<(j + 1) }
                j += 1
            }
            return nil
        case .singleQuoted:
            guard chars[i] == "'" else { return nil }
            var j = i + 1
            while j < n {
                if chars[j] == "'" {
                    if j + 1 < n, chars[j + 1] == "'" { j += 2; continue }
                    return i..<(j + 1)
                }
                j += 1
            }
            return nil
        case .literal, .folded:
            guard chars[i] == "|" || chars[i] == ">" else { return nil }
            var end = lineEnd(i)
            var line = nextLine(i)
            while line < n {
                let e = lineEnd(line)
                if !isBlank(line..<e) {
                    guard indent(line) > parentIndent else { break }
                    end = e
                }
                line = nextLine(line)
            }
            return i..<end
        case .plain:
            if flow {
                var j = i
                while j < n {
                    let c = chars[j]
                    if ",[]{}\r\n".unicodeScalars.contains(c) { break }
                    if c == "#", j > i, chars[j - 1] == " " || chars[j - 1] == "\t" { break }
                    if c == ":", j + 1 == n || " \t\r\n,[]{}".unicodeScalars.contains(chars[j + 1]) { break }
                    j += 1
                }
                return i..<trimmed(i, j)
            }
            var (end, commented) = plainLineEnd(i)
            var line = nextLine(i)
            while !commented, line < n {
                if !isBlank(line..<lineEnd(line)) {
                    let first = line + indent(line)
                    guard indent(line) > parentIndent, chars[first] != "#" else { break }
                    (end, commented) = plainLineEnd(first)
                }
                line = nextLine(line)
            }
            return i..<end
        }
    }

    /// Where a plain scalar's text on this line ends (before a ` #` comment and trailing space).
    func plainLineEnd(_ start: Int) -> (end: Int, commented: Bool) {
        let e = lineEnd(start)
        var j = start
        while j < e {
            if chars[j] == "#", j > start, chars[j - 1] == " " || chars[j - 1] == "\t" { return (trimmed(start, j), true) }
            j += 1
        }
        return (trimmed(start, e), false)
    }

    /// The offset of the line break ending the line holding `i` (or the end), before a `\r`.
    func lineEnd(_ i: Int) -> Int {
        var j = i
        while j < chars.count, chars[j] != "\n" { j += 1 }
        return j > i && chars[j - 1] == "\r" ? j - 1 : j
    }

    /// The offset after the line break ending the line holding `i` (or the end).
    func nextLine(_ i: Int) -> Int {
        var j = i
        while j < chars.count, chars[j] != "\n" { j += 1 }
        return min(j + 1, chars.count)
    }

    func indent(_ lineStart: Int) -> Int {
        var j = lineStart
        while j < chars.count, chars[j] == " " { j += 1 }
        return j - lineStart
    }

    func isBlank(_ r: Range<Int>) -> Bool { chars[r].allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" } }

    func trimmed(_ start: Int, _ end: Int) -> Int {
        var e = end
        while e > start, chars[e - 1] == " " || chars[e - 1] == "\t" { e -= 1 }
        return e
    }

    /// The text with each secret's range replaced; nil when two ranges overlap.
    func replaced() -> [Unicode.Scalar]? {
        var out: [Unicode.Scalar] = []
        var copied = 0
        for (range, replacement) in found.values.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            guard range.lowerBound >= copied else { return nil }
            out += chars[copied..<range.lowerBound]
            out += replacement.unicodeScalars
            copied = range.upperBound
        }
        out += chars[copied...]
        return out
    }

    /// Whether `redacted` parses to the original tree with exactly the found scalars `<redacted>`.
    func verify(_ redacted: [Unicode.Scalar], against original: YAMLNode) -> Bool {
        guard let again = try? YAMLNode.compose(String(String.UnicodeScalarView(redacted))) else { return false }
        var left = ConfigRedaction.budget
        func same(_ a: YAMLNode, _ b: YAMLNode) -> Bool {
            left -= 1
            guard left >= 0 else { return false }
            switch (a, b) {
            case (.scalar(let x, let mark), .scalar(let y, _)):
                if let o = text.offset(mark), found[o] != nil { return y.string == ConfigRedaction.marker }
                return x.string == y.string
            case (.mapping(let x, _), .mapping(let y, _)):
                return x.count == y.count && zip(x, y).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
            case (.sequence(let x, _), .sequence(let y, _)):
                return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
            default:
                return false
            }
        }
        return same(original, again)
    }
}
