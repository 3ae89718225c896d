import FeliCa
import FeliCaCards
import FuzzSupport

/// The card-profile decoders over arbitrary bytes: every transit history slot that is
/// not empty comes back as a transaction or a malformed entry, never dropped; WAON keeps
/// at most one entry per record; the station-table parser accepts or throws `.badTable`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(fuzzBytes(data, size))
    guard let first = bytes.first else { return 0 }
    // The first byte picks a block length near 16, so wrong lengths are exercised too.
    let length = first % 8 == 0 ? Int(first >> 3) : 16
    var blocks: [[UInt8]] = []
    var i = 1
    while i < bytes.count && blocks.count < 24 {
        blocks.append(Array(bytes[i..<min(i + max(length, 1), bytes.count)]))
        i += max(length, 1)
    }
    guard !blocks.isEmpty else { return 0 }
    let history = TransitIC.decodeHistory(blocks)
    let nonEmpty = blocks.filter { $0.count != 16 || $0[4] != 0 || $0[5] != 0 }.count
    precondition(history.count == nonEmpty, "transit history dropped or invented a slot")
    _ = TransitIC.purse(system: .transit, attributes: blocks[0], history: blocks, gateLog: blocks, pendingEntry: Array(blocks.prefix(2)))
    _ = Edy.purse(number: blocks[0], balance: blocks[0], history: blocks)
    _ = Nanaco.purse(number: blocks[0], balance: blocks[0], points: Array(blocks.prefix(2)), history: blocks)
    let waon = WAON.decodeHistory(blocks)
    precondition(waon.count <= blocks.count / 2, "WAON history has more entries than records")
    do {
        _ = try StationTable(csv: String(decoding: bytes, as: UTF8.self))
    } catch {
        precondition(error.code == .badTable, "station table: unexpected error code \(error.code)")
    }
    return 0
}

@_cdecl("FuzzCards_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzOne)
}
