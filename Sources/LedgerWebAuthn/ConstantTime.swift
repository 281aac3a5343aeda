/// Whether two byte strings are equal, in a time that depends on their length only, so that a
/// caller cannot learn a challenge byte by byte from how fast it is refused.
func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in lhs.indices {
        difference |= lhs[index] ^ rhs[index]
    }
    return difference == 0
}
