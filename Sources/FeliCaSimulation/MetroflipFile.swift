import FeliCa

/// Metroflip's saved card file, for the FeliCa card it reads (a Suica-family transit card),
/// read into a card image.
///
/// Metroflip (zinongli/Metroflip, a Flipper Zero transit-card app) saves what it read as
/// `Filetype: Flipper Metroflip File`, `Version: 1`, an optional `Device type: FeliCa`,
/// `Card Type: suica`, a `Travel History:` heading and then `Travel NN: <16 hex bytes>`
/// lines, NN counting from 00 in decimal: the blocks of the history service 090F in block
/// order (block 0, the newest record, first), up to the first block the card refused (read
/// as zeros). Nothing else is saved: no IDm, no PMm, no balance block. So the image is system
/// 0003 holding service 090F with exactly those blocks, and a note says what the file lacks;
/// the virtual card answers with the image's default IDm and PMm.
enum MetroflipFile {
    static func fail(_ line: Int, _ what: String) -> FeliCaError {
        FeliCaError(.badInput, "line \(line): \(what)")
    }

    static func image(_ text: String) throws(FeliCaError) -> CardImage {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        var filetype = false, version = false, cardType = false, heading = false
        var blocks: [[UInt8]] = []
        var lastLine = 0
        // Lines end in LF, CRLF (as Metroflip's own example files do) or CR.
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).enumerated() {
            let number = i + 1
            var l = raw.drop(while: blank)
            while let last = l.last, blank(last) { l = l.dropLast() }
            if l.isEmpty || l.hasPrefix("#") { continue }
            lastLine = number
            guard let colon = l.firstIndex(of: ":") else {
                throw fail(number, "\"\(l)\" is not a \"key: value\" line")
            }
            let key = String(l[..<colon])
            let value = l[l.index(after: colon)...].drop(while: blank)
            if !filetype {
                guard key == "Filetype", value == "Flipper Metroflip File" else {
                    throw fail(number, "not a Metroflip file (\"Filetype: Flipper Metroflip File\")")
                }
                filetype = true
                continue
            }
            switch key {
            case "Version":
                guard value == "1" else { throw fail(number, "Metroflip file version \(value): this tool reads version 1") }
                version = true
            case "Device type":
                guard value == "FeliCa" else { throw fail(number, "the device type is \(value), not FeliCa") }
            case "Card Type":
                guard value.lowercased() == "suica" else {
                    throw fail(number, "card type \(value) is not the FeliCa card Metroflip saves (suica)")
                }
                cardType = true
            case "Travel History":
                guard value.isEmpty else { throw fail(number, "\"Travel History:\" is a heading and takes no value") }
                heading = true
            default:
                guard key.hasPrefix("Travel "), let n = Int(key.dropFirst("Travel ".count)) else {
                    throw fail(number, "unknown line \"\(key):\" in a Metroflip Suica file")
                }
                guard heading else { throw fail(number, "\"\(key):\" before the \"Travel History:\" heading") }
                guard n == blocks.count else {
                    throw fail(number, "\"\(key):\" where Travel \(blocks.count < 10 ? "0" : "")\(blocks.count) comes next")
                }
                blocks.append(try importHex(value, count: 16, "line \(number): \(key)"))
            }
        }
        guard filetype else { throw FeliCaError(.badInput, "line 1: not a Metroflip file (\"Filetype: Flipper Metroflip File\")") }
        guard version else { throw fail(lastLine, "no \"Version:\" line (is the file cut short?)") }
        guard cardType else { throw fail(lastLine, "no \"Card Type:\" line (is the file cut short?)") }
        guard !blocks.isEmpty else { throw fail(lastLine, "no \"Travel 00:\" line: the file holds no history (is it cut short?)") }
        var image = CardImage(systems: [
            CardImage.System(code: .transit, services: [CardImage.Service(code: 0x090F, blocks: blocks)]),
        ])
        image.note("Metroflip file: only the travel history (service 090F, \(blocks.count) blocks) is saved; no IDm, PMm or balance block")
        return image
    }
}
