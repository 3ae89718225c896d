import FeliCa

/// Codec throughput: the target is at least 5 million of each per second on one core.
func codecBenchmarks() {
    guard section("codec") else { return }
    let idm = IDm(rawValue: 0x0101_1203_1234_5678)
    let pmm = PMm(rawValue: 0x100B_4B42_8485_D0FF)
    let read = try! ReadWithoutEncryptionCommand(idm: idm, service: 0x090F, blocks: 0..<12)
    let encode = measure("encode Read Without Encryption (12 blocks)", iterations: 2_000_000) {
        blackHole(read.encode())
    }
    record("encode a 12-block Read Without Encryption, one core", format(encode) + "/s", model: CardModel.none)
    let data = [UInt8]((0..<(16 * 12)).map { UInt8(truncatingIfNeeded: $0) })
    let response = ReadWithoutEncryptionResponse(idm: idm, status: .success, data: data[...]).encode()
    var checksum = 0
    let decode = measure("decode Read Without Encryption response (12 blocks)", iterations: 2_000_000) {
        let r = try! ReadWithoutEncryptionResponse.decode(response[...], expecting: idm)
        checksum &+= r.blockCount
    }
    record("decode its 12-block response (no copy: blocks are slices of the frame)", format(decode) + "/s", model: CardModel.none)
    let polling = PollingResponse(idm: idm, pmm: pmm, requestData: 0x0003).encode()
    let poll = measure("decode Polling response", iterations: 4_000_000) {
        let r = try! PollingResponse.decode(polling[...])
        checksum &+= Int(r.idm.rawValue & 1)
    }
    record("decode a Polling response", format(poll) + "/s", model: CardModel.none)
    blackHole(checksum)
}
