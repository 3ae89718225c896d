import FeliCa

/// Parses space-separated hex in test vectors.
func bytes(_ hex: String) -> [UInt8] {
    guard let b = Hex.decode(hex) else { fatalError("bad hex in test vector: \(hex)") }
    return b
}

/// Wildcard Polling, no request code, one slot.
let pollingPacket = bytes("06 00 FF FF 01 00")
