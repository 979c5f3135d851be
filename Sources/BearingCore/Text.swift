/// String helpers that Foundation would give, kept here so the binary needs only FoundationEssentials.
extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns, and without a leading byte-order mark.
    public func trimmingWhitespace() -> SubSequence {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\r" || f == "\u{FEFF}" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}
