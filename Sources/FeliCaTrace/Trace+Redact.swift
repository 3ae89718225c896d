import FeliCa

extension Trace {
    /// The trace with the card's IDms and card numbers replaced by `redactor`'s pseudonyms
    /// (`felica trace redact`): the IDm in every command and response, the number fields in
    /// the blocks Read Without Encryption returned (found by the command's service and block
    /// list), then every other occurrence of an original in any packet, in the device string
    /// and in the error texts. Every IDm is replaced the same way, so a replay of the result
    /// runs the same session: the IDm a command carries is the one its Polling returned.
    public func redacted(by redactor: inout Redactor) -> Trace {
        var out = self
        // Every IDm first, so each packet is scrubbed of all of them.
        for e in exchanges {
            if let idm = Self.idm(command: e.tx) { _ = redactor.idm(idm) }
            if let rx = e.rx, let idm = Self.idm(response: rx) { _ = redactor.idm(idm) }
        }
        for i in readerIdentities.indices {
            out.readerIdentities[i].idm = readerIdentities[i].idm.map { redactor.idm($0) }
        }
        for (i, e) in exchanges.enumerated() {
            if let rx = e.rx { out.exchanges[i].rx = Self.numbersRedacted(rx, command: e.tx, &redactor) }
        }
        for i in exchanges.indices {
            out.exchanges[i].tx = redactor.scrub(out.exchanges[i].tx)
            out.exchanges[i].rx = out.exchanges[i].rx.map { redactor.scrub($0) }
            if let error = out.exchanges[i].error {
                out.exchanges[i].error = FeliCaError(error.code, redactor.scrub(text: error.reason), statusFlags: error.statusFlags)
            }
        }
        for i in readerIdentities.indices {
            if let error = out.readerIdentities[i].error {
                out.readerIdentities[i].error = FeliCaError(error.code, redactor.scrub(text: error.reason), statusFlags: error.statusFlags)
            }
        }
        out.device = device.map { redactor.scrub(text: $0) }
        return out
    }

    /// The IDm a command carries (`LEN CODE IDm ...`; Polling carries none).
    static func idm(command p: [UInt8]) -> IDm? {
        guard p.count >= 10, p[1] != CommandCode.polling.rawValue else { return nil }
        return IDm(rawValue: p[2..<10].reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// The IDm a response carries (every response starts `LEN CODE IDm`).
    static func idm(response p: [UInt8]) -> IDm? {
        guard p.count >= 10 else { return nil }
        return IDm(rawValue: p[2..<10].reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// A Read Without Encryption response with the number fields of its blocks redacted;
    /// any other packet as it is.
    static func numbersRedacted(_ rx: [UInt8], command tx: [UInt8], _ redactor: inout Redactor) -> [UInt8] {
        guard case .readWithoutEncryption(let c)? = try? Command.decode(tx[...]),
              let r = try? ReadWithoutEncryptionResponse.decode(rx[...], expecting: c.idm), r.status.isSuccess else { return rx }
        var out = rx
        for (i, element) in c.blocks.enumerated() where i < r.blockCount {
            let service = c.services[Int(element.serviceIndex)]
            let start = ReadWithoutEncryptionResponse.headerLength + 16 * i
            let redacted = redactor.block(system: .common, service: service, index: Int(element.blockNumber), Array(rx[start..<(start + 16)]))
            out.replaceSubrange(start..<(start + 16), with: redacted)
        }
        return out
    }
}
