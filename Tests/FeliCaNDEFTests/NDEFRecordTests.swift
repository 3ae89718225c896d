import FeliCa
import FeliCaJSON
import FeliCaNDEF
import Testing

// NDEF records (NFC Forum NDEF 1.0, URI / Text / Smart Poster RTDs), decoded record type by
// record type from bytes written out by hand to the published layouts.

/// Bytes from spaced hex.
func bytes(_ hex: String) -> [UInt8] { Hex.decode(String(hex.filter { $0 != " " }))! }

func content(_ message: [UInt8]) throws -> [NDEFContent] {
    try NDEFRecord.parseMessage(message).map { r throws(FeliCaError) in try NDEFContent(r) }
}

/// A short well-known record alone in its message: D1 = MB ME SR, TNF 1.
func single(_ type: String, _ payload: [UInt8]) -> [UInt8] {
    [0xD1, UInt8(type.utf8.count), UInt8(payload.count)] + Array(type.utf8) + payload
}

@Test func aURIRecordExpandsItsPrefix() throws {
    // D1 01 0F 55 | 04 "example.com/a": https:// + example.com/a
    let m = bytes("D1 01 0E 55 04") + Array("example.com/a".utf8)
    guard case .uri(let u) = try content(m)[0] else { Issue.record("not a URI"); return }
    #expect(u.uri == "https://example.com/a")
    #expect(u.prefixCode == 4)
}

@Test(arguments: Array(NDEFURI.prefixes.enumerated()))
func everyURIPrefixCodeExpands(_ entry: (offset: Int, element: String)) throws {
    let u = try NDEFURI(payload: [UInt8(entry.offset)] + Array("x".utf8))
    #expect(u.uri == entry.element + "x")
    #expect(u.isKnownPrefix)
}

@Test func aReservedURIPrefixCodeExpandsToNothing() throws {
    let u = try NDEFURI(payload: [0x24] + Array("rest".utf8))
    #expect(u.uri == "rest")
    #expect(!u.isKnownPrefix)
}

@Test func theURIEncoderPicksTheLongestPrefix() throws {
    #expect(NDEFURI.payload("https://www.example.com").first == 0x02)
    #expect(NDEFURI.payload("tel:+81").first == 0x05)
    #expect(NDEFURI.payload("urn:epc:id:x").first == 0x1E)
    #expect(NDEFURI.payload("gopher://x").first == 0x00)
    #expect(try NDEFURI(payload: NDEFURI.payload("urn:nfc:sn:x")).uri == "urn:nfc:sn:x")
}

@Test func aURIThatIsNotUTF8IsAnError() {
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFURI(payload: [0x03, 0xFF, 0xFE]) }
    #expect(throws: FeliCaError.truncated) { try NDEFURI(payload: []) }
}

@Test func aUTF8TextRecordGivesLanguageAndText() throws {
    // status 02 (UTF-8, language of 2 bytes) "en" "Hello"
    guard case .text(let t) = try content(single("T", bytes("02") + Array("enHello".utf8)))[0] else { Issue.record("not text"); return }
    #expect(t.language == "en")
    #expect(t.encoding == .utf8)
    #expect(t.text == "Hello")
}

@Test func aUTF16TextRecordIsReadWithOrWithoutAByteOrderMark() throws {
    // status 85 (UTF-16, 5 bytes of language) "ja-JP", then 「日本」 three ways.
    let be = bytes("65E5 672C"), le = bytes("E565 2C67")
    for body in [bytes("FEFF") + be, bytes("FFFE") + le, be] {
        let t = try NDEFText(payload: [0x85] + Array("ja-JP".utf8) + body)
        #expect(t.language == "ja-JP")
        #expect(t.encoding == .utf16)
        #expect(t.text == "日本")
    }
    // What the encoder writes reads back.
    let t = NDEFText(language: "de", encoding: .utf16, text: "Grüße 𝄞")
    #expect(try NDEFText(payload: t.payload) == t)
}

@Test func aTextRecordThatBreaksItsLayoutIsAnError() {
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFText(payload: [0x42] + Array("enx".utf8)) }  // bit 6 reserved
    #expect(throws: FeliCaError.truncated) { try NDEFText(payload: [0x05] + Array("en".utf8)) }  // language cut
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFText(payload: [0x82] + Array("en".utf8) + [0x00]) }  // odd UTF-16
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFText(payload: [0x82] + Array("en".utf8) + bytes("D800")) }  // lone surrogate
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFText(payload: [0x02] + Array("en".utf8) + [0xC3]) }  // bad UTF-8
    #expect(throws: FeliCaError.truncated) { try NDEFText(payload: []) }
}

/// A Smart Poster: URI, two titles, action "open", size and type.
let posterVector: [UInt8] = {
    let inner = NDEFRecord.encodeMessage([
        NDEFRecord(wellKnown: "U", payload: NDEFURI.payload("https://example.org/poster")),
        NDEFRecord(wellKnown: "T", payload: NDEFText(language: "en", text: "Poster").payload),
        NDEFRecord(wellKnown: "T", payload: NDEFText(language: "fr", text: "Affiche").payload),
        NDEFRecord(wellKnown: "act", payload: [0x02]),
        NDEFRecord(wellKnown: "s", payload: [0x00, 0x00, 0x10, 0x00]),
        NDEFRecord(wellKnown: "t", payload: Array("text/html".utf8)),
    ])
    return single("Sp", inner)
}()

@Test func aSmartPosterGivesItsURITitlesAndAction() throws {
    guard case .smartPoster(let sp) = try content(posterVector)[0] else { Issue.record("not a poster"); return }
    #expect(sp.uri == "https://example.org/poster")
    #expect(sp.titles.map(\.language) == ["en", "fr"])
    #expect(sp.titles.map(\.text) == ["Poster", "Affiche"])
    #expect(sp.action == 2 && sp.actionName == "open")
    #expect(sp.size == 4096)
    #expect(sp.mimeType == "text/html")
    #expect(sp.records.count == 6)
}

@Test func aSmartPosterNeedsExactlyOneURI() {
    let noURI = NDEFRecord.encodeMessage([NDEFRecord(wellKnown: "T", payload: NDEFText(language: "en", text: "x").payload)])
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFSmartPoster(payload: noURI) }
    let u = NDEFRecord(wellKnown: "U", payload: NDEFURI.payload("http://a"))
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFSmartPoster(payload: NDEFRecord.encodeMessage([u, u])) }
    let badAction = NDEFRecord.encodeMessage([u, NDEFRecord(wellKnown: "act", payload: [0, 0])])
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFSmartPoster(payload: badAction) }
    // Its nested message is parsed like any other: cut, it is truncated.
    let cut = Array(NDEFRecord.encodeMessage([u]).dropLast())
    #expect(throws: FeliCaError.truncated) { try NDEFSmartPoster(payload: cut) }
}

@Test func aMediaRecordOfTextIsShownAsTextOtherwiseAsBytes() throws {
    // D2 = MB ME SR, TNF 2 (media type).
    let plain = bytes("D2 0A 05") + Array("text/plain".utf8) + Array("hello".utf8)
    #expect(try content(plain) == [.media(type: "text/plain", text: "hello")])
    let png = bytes("D2 09 04") + Array("image/png".utf8) + bytes("89504E47")
    #expect(try content(png) == [.media(type: "image/png", text: nil)])
    let record = try NDEFRecord.parseMessage(png)[0]
    #expect(NDEFRendering.json(record)["payload"]?.stringValue == "89504e47")
    #expect(NDEFRendering.json(record)["length"]?.intValue == 4)
}

@Test func externalAbsoluteUnknownAndEmptyRecordsKeepTypeAndPayload() throws {
    let external = bytes("D4 0F 02") + Array("example.com:foo".utf8) + bytes("CAFE")  // TNF 4
    #expect(try content(external) == [.external(type: "example.com:foo")])
    let externalRecord = try NDEFRecord.parseMessage(external)[0]
    #expect(NDEFRendering.json(externalRecord)["payload"]?.stringValue == "cafe")
    let absolute = bytes("D3 0C 01") + Array("http://a/b#c".utf8) + [0x01]  // TNF 3
    #expect(try content(absolute) == [.absoluteURI("http://a/b#c")])
    let unknown = bytes("D5 00 03 010203")  // TNF 5: no type
    #expect(try content(unknown) == [.other])
    let lines = NDEFRendering.lines(try NDEFRecord.parseMessage(unknown)[0], number: "1", indent: "")
    #expect(lines == ["Record 1  TNF 5 type \"\"  3 bytes: 010203"])
    #expect(try content(bytes("D0 00 00")) == [.empty])
    // An unknown well-known type is shown by type and payload too.
    let wk = single("Zz", [0xAB])
    #expect(try content(wk) == [.other])
    let wkRecord = try NDEFRecord.parseMessage(wk)[0]
    #expect(NDEFRendering.json(wkRecord)["type"]?.stringValue == "Zz")
}

@Test func aLongRecordUsesFourLengthBytes() throws {
    let payload = [UInt8](repeating: 0x41, count: 300)
    let message = NDEFRecord.encodeMessage([NDEFRecord(tnf: .media, type: Array("text/plain".utf8), payload: payload)])
    #expect(message[0] & 0x10 == 0)  // SR clear
    #expect(Array(message[2..<6]) == [0, 0, 0x01, 0x2C])
    let r = try NDEFRecord.parseMessage(message)
    #expect(r[0].payload == payload)
}

@Test func aRecordIDIsKept() throws {
    // D9 = MB ME SR IL, TNF 1; ID "id1".
    let m = bytes("D9 01 02 03 55") + Array("id1".utf8) + bytes("03 61")
    let r = try NDEFRecord.parseMessage(m)[0]
    #expect(r.id == Array("id1".utf8))
    #expect(NDEFRendering.json(r)["id"]?.stringValue == "id1")
    #expect(NDEFRendering.json(r)["uri"]?.stringValue == "http://a")
}

/// A Text record in three chunks, then a URI.
let chunkedVector: [UInt8] =
    bytes("B1 01 03 54") + bytes("02 65 6E")  // MB CF SR, TNF 1 "T": status, "en"
    + bytes("36 00 03") + Array("abc".utf8)  // CF SR, TNF 6
    + bytes("16 00 02") + Array("de".utf8)  // SR, TNF 6: last chunk
    + bytes("51 01 02 55 00 78")  // ME SR "U" "x"

@Test func chunksJoinIntoOneRecord() throws {
    let c = try content(chunkedVector)
    let uri = try NDEFURI(payload: [0x00, 0x78])
    #expect(c == [.text(NDEFText(language: "en", text: "abcde")), .uri(uri)])
    let message = NDEFRecord.encodeMessage([NDEFRecord(tnf: .media, type: Array("a/b".utf8), payload: Array(0..<40))], chunkSize: 16)
    #expect(try NDEFRecord.parseMessage(message) == [NDEFRecord(tnf: .media, type: Array("a/b".utf8), payload: Array(0..<40))])
}

@Test func chunksOutOfPlaceAreErrorsNamingTheRecord() {
    // TNF 6 with nothing to continue.
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(bytes("D6 00 01 41")) }
    // A middle chunk with a type.
    let typed = bytes("B1 01 01 54 02") + bytes("56 01 01 54 41")
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(typed) }
    // ME on a chunk that announces another.
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(bytes("F1 01 01 54 02")) }
}

@Test func messageFlagsOutOfPlaceAreErrors() {
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(bytes("51 01 01 55 00")) }  // no MB
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(bytes("91 01 01 55 00 D1 01 01 55 00")) }  // MB twice
    #expect(throws: FeliCaError.trailingBytes) { try NDEFRecord.parseMessage(bytes("D1 01 01 55 00 00")) }
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(bytes("D0 01 00 55")) }  // empty record with a type
    #expect(throws: FeliCaError(.invalidField, "")) { try NDEFRecord.parseMessage(bytes("D5 01 00 55")) }  // unknown TNF with a type
    do {
        _ = try NDEFRecord.parseMessage(bytes("91 01 01 55 00 91 01 01 55 00"))
        Issue.record("parsed")
    } catch {
        #expect(error.reason.contains("NDEF record 2"))
        #expect(error.reason.contains("MB"))
    }
}

@Test(arguments: [posterVector, chunkedVector, bytes("D2 0A 05") + Array("text/plain".utf8) + Array("hello".utf8),
                  bytes("D9 01 02 03 55") + Array("id1".utf8) + bytes("03 61"),
                  NDEFRecord.encodeMessage([NDEFRecord(tnf: .media, type: [0x61], payload: [UInt8](repeating: 7, count: 260))])])
func everyStrictPrefixOfAMessageIsTruncated(_ message: [UInt8]) {
    #expect(throws: Never.self) { try NDEFRecord.parseMessage(message) }
    for n in 0..<message.count {
        #expect(throws: FeliCaError.truncated, "prefix of \(n) bytes") { try NDEFRecord.parseMessage(message.prefix(n)) }
    }
}

@Test func aTruncationNamesTheField() {
    do {
        _ = try NDEFRecord.parseMessage(bytes("D1 01 05 55 03 61"))
        Issue.record("parsed")
    } catch {
        #expect(error.code == .truncated)
        #expect(error.reason.contains("NDEF record 1 payload (5 bytes)"))
    }
}

@Test func theJSONOfTheRecordsFollowsTheDocumentedShape() throws {
    let message = NDEFRecord.encodeMessage([
        NDEFRecord(wellKnown: "U", payload: NDEFURI.payload("https://example.com/")),
        NDEFRecord(wellKnown: "T", payload: NDEFText(language: "en", text: "hi").payload),
    ])
    let records = try NDEFRecord.parseMessage(message).map(NDEFRendering.json)
    #expect(records[0].serialized() == #"{"tnf":1,"type":"U","uri":"https://example.com/"}"#)
    #expect(records[1].serialized() == #"{"tnf":1,"type":"T","language":"en","encoding":"UTF-8","text":"hi"}"#)
}
