import FeliCa

/// Student and staff ID cards in the FCF format (Felicitous Common-use Format), in the
/// common area 0xFE00: the ID number in service 0x1A8B. Read as TRETJapanNFCReader's ICU
/// reader reads it (`Sources/FeliCa/FCFCampus/ICU/`; Docs/cards.md, "FCF ID cards"): the
/// low digit of each of block 0's bytes 2-7. That reading comes from one university's
/// cards; other issuers' numbers may be longer, which no public source settles. The card
/// keeps no purse the sources agree on, so the profile has a number and no balance.
///
///     1A8B block 0   .. .. D D D D D D ..     bytes 2-7: one decimal digit each (low nibble)
public enum FCF {
    /// The ID service (block 0: the number).
    public static let idService: ServiceCode = 0x1A8B
    /// The bytes of block 0 that hold the digits.
    public static let digitBytes = 2..<8

    /// What ``CardReader`` reads: block 0 of the ID service, at every depth.
    public static let layout = PurseLayout(
        profile: .fcf, placement: .commonArea, presence: idService,
        services: [ServiceRead(idService, .idNumber, balance: 1, history: 1)],
        keyedTwinMeansPresent: false
    ) { b, c in
        purse(system: c.system, id: b.first(idService))
    }

    /// The ID number of block 0; a digit byte whose low nibble is above 9 is an error.
    public static func number(_ raw: [UInt8]) throws(CardDataError) -> String {
        let b = try Block(raw, "FCF ID block (0x1A8B)")
        var out = ""
        for i in digitBytes {
            let d = b.bytes[i] & 0x0F
            guard d <= 9 else { throw CardDataError(.invalidField, "FCF ID number: byte \(i) (\(hexCode(Int(b.bytes[i])))) holds no decimal digit") }
            out += String(d)
        }
        return out
    }

    /// Block 0 holding `number` (6 digits) as ASCII digits in bytes 2-7.
    public static func encode(number: String) -> [UInt8] {
        var w = BlockWriter()
        for (i, ch) in number.utf8.prefix(digitBytes.count).enumerated() { w.put(ch, at: digitBytes.lowerBound + i) }
        return w.bytes
    }

    /// The ID "purse": a number, no balance.
    public static func purse(system: SystemCode = .common, id: [UInt8]?) -> Purse {
        var p = Purse(profile: .fcf, system: system)
        if let id {
            do throws(CardDataError) { p.number = try number(id) } catch {
                p.issues.append(ServiceIssue(service: idService, content: .idNumber, problem: .unreadable(error.reason)))
            }
        }
        return p
    }
}
