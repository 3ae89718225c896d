import FeliCa
import FeliCaNDEF
import FeliCaSimulation

/// Built-in sample cards: synthetic but realistic data, built with the profile encoders
/// of FeliCaCards so that what the decoders read back is exactly what was written here.
///
/// Every card carries several records, an empty slot or two, and key-protected services
/// (a key version and a block count, no data) as real cards do.
public enum SampleCards {
    public static let names = purseNames + ["univ-coop", "lite-s", "aime"] + regionalNames
    /// Cards of the regional profiles (and one system the public lists name but no public
    /// source decodes: NTasu).
    public static let regionalNames = ["okica", "ryuto", "kmt", "mrtj", "fcf", "ntasu"]
    /// The sample cards with a purse that make up the population `felica order` weighs by
    /// default (the University Co-op card, added later, is left out of it so that its
    /// figures stay comparable).
    public static let purseNames = ["suica", "edy", "nanaco", "waon", "wallet", "octopus", "octopus-shenzhen"]

    public static func image(named name: String) -> CardImage? {
        switch name {
        case "suica": suica
        case "edy": edy
        case "nanaco": nanaco
        case "waon": waon
        case "wallet": wallet
        case "octopus": octopus
        case "octopus-shenzhen": octopusShenzhen
        case "univ-coop": univCoop
        case "lite-s": liteS
        case "aime": aime
        case "okica": okica
        case "ryuto": ryuto
        case "kmt": kmt
        case "mrtj": mrtj
        case "fcf": fcf
        case "ntasu": ntasu
        default: nil
        }
    }

    // MARK: - Cards

    /// A physical Suica (transit-card IC 0x0B). It also lists the common area 0xFE00, as
    /// real Suica cards do; that area holds only key-protected operator services.
    public static var suica: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x100B_4B42_8485_D0FF),
            systems: [
                system(code: .transit, idm: IDm(rawValue: 0x0101_1203_1234_5678),
                                 areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                                 services: transitServices(suicaHistory, balance: 1_234, counter: 0x00A1, gateLog: suicaGateLog) + [
                                     .init(code: 0x1808, keyVersion: 0x0100, blockCount: 3),
                                     .init(code: 0x1848, keyVersion: 0x0100, blockCount: 3),
                                 ]),
                system(code: .common, areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                    .init(code: 0x1A88, keyVersion: 0x0200, blockCount: 2),
                ]),
            ])
    }

    /// A physical Edy card; the extra system 0x8B61 seen on real Edy cards holds nothing readable.
    public static var edy: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x0120_2204_2767_4EFF),
            systems: [
                system(code: .common, idm: IDm(rawValue: 0x0120_0312_AB34_CD56),
                                 areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                                 services: edyServices(number: [0x19, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23], balance: 2_480)),
                system(code: 0x8B61, services: [.init(code: 0x0048, keyVersion: 0x0100, blockCount: 1)]),
            ])
    }

    /// A physical nanaco card.
    public static var nanaco: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x0120_2204_2767_4EFF),
            systems: [
                system(code: .common, idm: IDm(rawValue: 0x0120_0412_5566_7788),
                                 areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                                 services: nanacoServices(number: [0x70, 0x00, 0x12, 0x34, 0x56, 0x78, 0x90, 0x12], balance: 5_128)),
            ])
    }

    /// A physical WAON card whose history ring has wrapped: sequence numbers 0xFFFF, 0x0000
    /// and 0x0001 sit in slots that are not in newest-first order.
    public static var waon: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x0120_2204_2767_4EFF),
            systems: [
                system(code: .common, idm: IDm(rawValue: 0x0120_0512_99AA_BBCC),
                                 areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                                 services: waonServices(number: [0x69, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x90], balance: 1_850)),
            ])
    }

    /// A phone (mobile FeliCa IC) carrying a transit card and Edy, nanaco and WAON at once.
    public static var wallet: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x0314_4B42_8485_D0FF),
            systems: [
                system(code: .transit, idm: IDm(rawValue: 0x0114_2E01_0203_0405),
                                 areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                                 services: transitServices(walletHistory, balance: 3_020, counter: 0x0203, gateLog: []) + [
                                     .init(code: 0x1808, keyVersion: 0x0100, blockCount: 3),
                                 ]),
                system(code: .common, areas: [CardImage.Area(code: .root, end: 0xFFFE)], services:
                    edyServices(number: [0x19, 0x01, 0x98, 0x76, 0x54, 0x32, 0x10, 0x01], balance: 2_480)
                    + nanacoServices(number: [0x70, 0x00, 0x65, 0x43, 0x21, 0x09, 0x87, 0x65], balance: 5_128)
                    + waonServices(number: [0x69, 0x00, 0x00, 0x98, 0x76, 0x54, 0x32, 0x10], balance: 1_850)
                    + [.init(code: 0x4008, keyVersion: 0x0300, blockCount: 4)]),
            ])
    }

    /// An Octopus card holding HK$50.00, stored with the offset of readings made since
    /// 2017-10-01 (500), plus the key-protected services real cards show beside it.
    public static var octopus: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x0011_4B42_8485_D0FF),
            systems: [
                system(code: Octopus.octopusSystem, idm: IDm(rawValue: 0x0130_0A12_3456_7890),
                       areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                       services: [
                           .init(code: Octopus.octopusBalanceService, blocks: [Octopus.encodeBalance(tenths: 500, offset: 500)]),
                           .init(code: 0x0108, keyVersion: 0x0100, blockCount: 1),
                       ]),
            ])
    }

    /// A dual Octopus and Shenzhen Tong card: -HK$14.40 on Octopus (in overdraft), CNY 12.30
    /// on Shenzhen Tong, whose balance service 0118 answers without a key although its
    /// attribute asks for one (as cards do: Metrodroid reads it so).
    public static var octopusShenzhen: CardImage {
        CardImage(
            pmm: PMm(rawValue: 0x0011_4B42_8485_D0FF),
            systems: [
                system(code: Octopus.octopusSystem, idm: IDm(rawValue: 0x0130_0B65_4321_0987),
                       areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                       services: [.init(code: Octopus.octopusBalanceService, blocks: [Octopus.encodeBalance(tenths: -144, offset: 500)])]),
                system(code: Octopus.shenzhenTongSystem, areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                       services: [.init(code: Octopus.shenzhenTongBalanceService, blocks: [Octopus.encodeBalance(tenths: 123, offset: 350)],
                                        answersWithoutKey: true)]),
            ])
    }

    /// A FeliCa Lite-S formatted for NDEF (an NFC Forum Type 3 Tag): it answers 88B4 and,
    /// its MC block's NDEF flag set, 12FC with the same IDm. The message (a URI, a Text and
    /// a Smart Poster record, 7 blocks) takes two reads of Nbr = 4 blocks.
    public static var liteS: CardImage {
        let idm = IDm(rawValue: 0x012E_4C11_2233_4455)
        return CardImage(pmm: litePMm, systems: [
            CardImage.System(code: FeliCaLite.system, idm: idm, services: [liteService(idm: idm, userBlocks: T3TAttributes.blocks(for: liteSMessage), dfc: 0, ndef: true)]),
            CardImage.System(code: T3TAttributes.system, idm: idm, services: []),
        ])
    }

    /// An amusement (arcade) card: a Lite-S whose ID block carries SEGA's data format code
    /// 0078, not formatted for NDEF; S_PAD0 holds 16 bytes of the issuer's (made up here).
    public static var aime: CardImage {
        let idm = IDm(rawValue: 0x012E_5A00_0C0F_FEE0)
        let spad0: [UInt8] = [0x5E, 0x1A, 0x07, 0x3C, 0x91, 0x22, 0xB8, 0x40, 0x0D, 0x6F, 0xE3, 0x58, 0x14, 0xA9, 0x7C, 0x02]
        return CardImage(pmm: litePMm, systems: [
            CardImage.System(code: FeliCaLite.system, idm: idm, services: [liteService(idm: idm, userBlocks: [spad0] + Array(repeating: zero, count: 13), dfc: 0x0078, ndef: false)]),
        ])
    }

    /// The PMm real Lite-S tags report: ROM 00, IC F1.
    static let litePMm = PMm(rawValue: 0x00F1_0000_0001_4300)

    /// The sample NDEF message of ``liteS``.
    public static var liteSMessage: [UInt8] {
        let poster = NDEFRecord.encodeMessage([
            NDEFRecord(wellKnown: "U", payload: NDEFURI.payload("https://github.com/nfcpy/nfcpy")),
            NDEFRecord(wellKnown: "T", payload: NDEFText(language: "en", text: "nfcpy").payload),
            NDEFRecord(wellKnown: "act", payload: [0x00]),
        ])
        return NDEFRecord.encodeMessage([
            NDEFRecord(wellKnown: "U", payload: NDEFURI.payload("https://www.example.com/felica")),
            NDEFRecord(wellKnown: "T", payload: NDEFText(language: "en", text: "Hello from a FeliCa Lite-S").payload),
            NDEFRecord(wellKnown: "Sp", payload: poster),
        ])
    }

    /// Service 000B of a Lite-S: S_PAD0-13 as given, REG, and the system blocks a read
    /// without a MAC returns (SER_C, CK and MAC_A are left out: the virtual card refuses them).
    static func liteService(idm: IDm, userBlocks: [[UInt8]], dfc: UInt16, ndef: Bool) -> CardImage.Service {
        var service = CardImage.Service(code: FeliCaLite.readService, blocks: userBlocks + [[UInt8](repeating: 0xFF, count: 16)])
        let sysc: [UInt8] = [0x88, 0xB4] + [UInt8](repeating: 0, count: 14)
        service.blocksAt = [
            0x80: zero, 0x81: zero,
            FeliCaLite.idBlock: FeliCaLite.IDBlock(idm: idm, dfc: dfc).block,
            0x83: idm.bytes + litePMm.bytes,
            0x85: sysc, 0x86: zero,
            FeliCaLite.memoryConfigurationBlock: FeliCaLite.MemoryConfiguration.block(answersNDEF: ndef),
            0x90: zero, 0x92: zero, 0xA0: zero,
        ]
        return service
    }

    /// A University Co-op student card: the prepaid purse in the common area with its member
    /// number and a history of lunches and charges, beside the card's key-protected
    /// services.
    public static var univCoop: CardImage {
        let history: [UnivCoop.HistoryRecord] = [
            .init(date: day(2026, 11, 27, 12, 35, 27), type: 0x05, amount: 563, balance: 803),
            .init(date: day(2026, 11, 27, 12, 35, 25), type: 0x01, amount: 1_000, balance: 1_366),
            .init(date: day(2026, 11, 26, 12, 31, 19), type: 0x05, amount: 685, balance: 366),
            .init(date: day(2026, 11, 26, 8, 2, 0), type: 0x03, amount: 0, balance: 1_051),
            .init(date: day(2026, 11, 25, 18, 10, 4), type: 0x05, amount: 130, balance: 1_051),
        ]
        let member = UnivCoop.encodeMember("117519000272")
        return CardImage(
            pmm: PMm(rawValue: 0x0332_4282_8247_AAFF),
            systems: [
                system(code: .common, idm: IDm(rawValue: 0x0112_0D44_5566_7788),
                       areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                       services: [
                           .init(code: UnivCoop.memberService, blocks: padded([member], to: 6)),
                           .init(code: UnivCoop.historyService, blocks: padded(history.map { $0.encode() }, to: UnivCoop.historyBlocks)),
                           .init(code: UnivCoop.balanceService, blocks: [UnivCoop.encodeBalance(803)]),
                           .init(code: 0x50C8, keyVersion: 0x0100, blockCount: 2),
                       ]),
            ])
    }

    // MARK: - Regional cards

    /// The PMm of the regional samples: a Standard chip (RC-S962). Which chips these cards
    /// carry is not published; the profiles do not depend on it.
    static let regionalPMm = PMm(rawValue: 0x0120_2204_2767_4EFF)

    /// An OKICA card: Yui Rail rides and charges, a bus ride, the record of its issue.
    public static var okica: CardImage {
        typealias R = OKICA.HistoryRecord
        let history: [R] = [
            R(usage: [0x16, 0x01, 0x00, 0x02], date: day(2026, 11, 28), entry: (0xDC, 0x01), exit: (0xDC, 0x17), balance: 1_630, sequence: 0x0024),
            R(usage: [0x05, 0x0F, 0x00, 0x0F], date: day(2026, 11, 27), entry: (0x0B, 0x01), exit: (0, 0), balance: 1_900, sequence: 0x0023),
            R(usage: [0x08, 0x02, 0x00, 0x00], date: day(2026, 11, 27), entry: (0xDC, 0x01), exit: (0, 0), balance: 2_140, sequence: 0x0022),
            R(usage: [0x16, 0x01, 0x00, 0x02], date: day(2026, 11, 20), entry: (0xDC, 0x0F), exit: (0xDC, 0x1F), balance: 140, sequence: 0x0021),
            R(usage: [0x08, 0x07, 0x00, 0x00], date: day(2026, 11, 20), entry: (0xDC, 0x0F), exit: (0, 0), balance: 440, sequence: 0x0020),
        ]
        return CardImage(pmm: regionalPMm, systems: [
            system(code: OKICA.system, idm: IDm(rawValue: 0x0114_1301_2345_6789), areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                .init(code: OKICA.historyService, blocks: padded(history.map { $0.encode() }, to: OKICA.historyBlocks)),
                .init(code: OKICA.gateLogService, blocks: padded([], to: 3)),
                .init(code: OKICA.pendingEntryService, blocks: padded([], to: 2)),
                .init(code: 0x0288, keyVersion: 0x0100, blockCount: 4),
            ]),
        ])
    }

    /// A Ryuto card: bus rides and a charge, boarding and alighting times on each.
    public static var ryuto: CardImage {
        typealias R = Ryuto.HistoryRecord
        let history: [R] = [
            R(date: day(2026, 11, 27, 18, 42), boarding: (18, 20), boardingStop: 0x0412, alightingStop: 0x0433, type: 0x52, amount: 230, balance: 2_540),
            R(date: day(2026, 11, 27, 8, 5), boarding: (7, 51), boardingStop: 0x0433, alightingStop: 0x0412, type: 0x52, amount: 230, balance: 2_770),
            R(date: day(2026, 11, 26, 17, 30), boarding: (17, 30), boardingStop: 0x0412, alightingStop: 0, type: 0x55, amount: 3_000, balance: 3_000),
        ]
        return CardImage(pmm: regionalPMm, systems: [
            system(code: Ryuto.system, idm: IDm(rawValue: 0x0114_1501_AB12_CD34), areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                .init(code: Ryuto.historyService, blocks: padded(history.map { $0.encode() }, to: Ryuto.historyBlocks)),
                .init(code: 0x8988, keyVersion: 0x0100, blockCount: 2),
            ]),
        ])
    }

    /// The seconds a KMT record stores for a Jakarta local time from 2019 on.
    static func kmtTime(_ d: CardDate) -> UInt32 {
        UInt32(d.daysSince2000 * 86_400 + d.secondsOfDay - 7 * 3600)
    }

    static func jakarta(_ y: Int, _ m: Int, _ d: Int, _ h: Int, _ min: Int, _ s: Int) -> CardDate {
        (try? CardDate(year: y, month: m, day: d, hour: h, minute: min, second: s, utcOffsetMinutes: CardDate.jakarta))
            ?? (try! CardDate(year: 2000, month: 1, day: 1))
    }

    /// A KMT card: commuter-line rides and top-ups, in rupiah and Jakarta time.
    public static var kmt: CardImage {
        typealias R = KMT.HistoryRecord
        let history: [R] = [
            R(time: kmtTime(jakarta(2026, 11, 27, 17, 48, 12)), amount: 5_000, gate: 0x0131, process: 1, sequence: 0x000412),
            R(time: kmtTime(jakarta(2026, 11, 27, 7, 12, 40)), amount: 4_000, gate: 0x0207, process: 1, sequence: 0x000411),
            R(time: kmtTime(jakarta(2026, 11, 26, 19, 2, 5)), amount: 50_000, gate: 0x0207, process: 0, sequence: 0x000410),
            R(time: kmtTime(jakarta(2026, 11, 20, 8, 30, 0)), amount: 3_000, gate: 0x0131, process: 1, sequence: 0x00040F),
        ]
        // Newest in block 0 here; the decoder orders by sequence number anyway.
        return CardImage(pmm: regionalPMm, systems: [
            system(code: KMT.system, idm: IDm(rawValue: 0x0114_2001_5566_7788), areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                .init(code: KMT.numberService, blocks: [Array("0195123456789012".utf8)]),
                .init(code: KMT.balanceService, blocks: [KMT.BalanceBlock(balance: 43_500, lastAmount: 5_000, counter: 0x000412).encode()]),
                .init(code: KMT.historyService, blocks: padded(history.map { $0.encode() }, to: KMT.historyBlocks)),
                .init(code: 0x1010, keyVersion: 0x0100, blockCount: 1),
            ]),
        ])
    }

    /// An MRT Jakarta card: its balance block, and the service 0x100B whose content no public
    /// source decodes (left as a plain block here).
    public static var mrtj: CardImage {
        CardImage(pmm: regionalPMm, systems: [
            system(code: KMT.mrtjSystem, idm: IDm(rawValue: 0x0114_2101_99AA_BBCC), areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                .init(code: 0x100B, blocks: [[0x11, 0x02, 0x03, 0x04, 0x50, 0x60, 0x00, 0x01] + [UInt8](repeating: 0, count: 8)]),
                .init(code: KMT.mrtjBalanceService, blocks: [KMT.BalanceBlock(balance: 86_000, lastAmount: 14_000, counter: 0x000027).encode()]),
            ]),
        ])
    }

    /// A student card in the FCF format: the ID number in the common area, beside the
    /// card's key-protected services.
    public static var fcf: CardImage {
        CardImage(pmm: PMm(rawValue: 0x0120_2204_2767_4EFF), systems: [
            system(code: .common, idm: IDm(rawValue: 0x0114_3001_1122_3344), areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                .init(code: FCF.idService, blocks: [FCF.encode(number: "241057"), zero]),
                .init(code: 0x1A88, keyVersion: 0x0100, blockCount: 2),
            ]),
        ])
    }

    /// A card carrying the NTasu system (0x93EC) with the two services TRETJapanNFCReader
    /// names there (0x408B, 0x80CF). No public source decodes them, so their blocks are
    /// blank here: the card shows what `felica` says of a system it can name but not read.
    public static var ntasu: CardImage {
        CardImage(pmm: regionalPMm, systems: [
            system(code: 0x93EC, idm: IDm(rawValue: 0x0114_4001_0102_0304), areas: [CardImage.Area(code: .root, end: 0xFFFE)], services: [
                .init(code: 0x408B, blocks: padded([], to: 8)),
                .init(code: 0x80CF, blocks: padded([], to: 20)),
            ]),
        ])
    }

    /// A system with its services in code order, the order a card walks them in (so a
    /// dump of the virtual card gives back this image).
    static func system(code: SystemCode, idm: IDm? = nil, areas: [CardImage.Area] = [], services: [CardImage.Service]) -> CardImage.System {
        CardImage.System(code: code, idm: idm, areas: areas, services: services.sorted { $0.code < $1.code })
    }

    // MARK: - Transit data

    static func day(_ y: Int, _ m: Int, _ d: Int, _ h: Int? = nil, _ min: Int? = nil, _ s: Int? = nil) -> CardDate {
        // Literal dates of this file; the tests decode every sample card, so a bad one fails there.
        (try? CardDate(year: y, month: m, day: d, hour: h, minute: min, second: s)) ?? (try! CardDate(year: 2000, month: 1, day: 1))
    }

    typealias Rec = TransitIC.HistoryRecord

    /// Newest first. Balances chain: each amount is the difference with the next record.
    static let suicaHistory: [Rec] = [
        Rec(console: 0x16, process: 0x01, date: day(2026, 11, 27), route: .rail(entryLine: 0x25, entryStation: 0x0A, exitLine: 0x25, exitStation: 0x07),
            balance: 1_234, sequence: 0xA1, region: 0x00),
        Rec(console: 0xC7, process: 0x46, date: day(2026, 11, 27), route: .sale(hour: 12, minute: 34, bytes8to9: 0x0102),
            balance: 1_434, sequence: 0xA0),
        Rec(console: 0x05, process: 0x0D, date: day(2026, 11, 26), route: .bus(operatorLine: 0x0A2B, stop: 0x0103),
            balance: 1_584, sequence: 0x9F),
        Rec(console: 0x09, process: 0x02, date: day(2026, 11, 25), route: .rail(entryLine: 0x25, entryStation: 0x0A, exitLine: 0, exitStation: 0),
            balance: 1_794, sequence: 0x9E),
        Rec(console: 0x16, process: 0x01, date: day(2026, 11, 24), route: .rail(entryLine: 0x01, entryStation: 0x01, exitLine: 0x25, exitStation: 0x0A),
            balance: 794, sequence: 0x9D),
        Rec(console: 0x16, process: 0x01, date: day(2026, 10, 31), route: .rail(entryLine: 0x25, entryStation: 0x07, exitLine: 0x25, exitStation: 0x0A),
            balance: 1_200, sequence: 0x9C),
        Rec(console: 0x16, process: 0x14, date: day(2025, 12, 31), route: .rail(entryLine: 0x25, entryStation: 0x07, exitLine: 0, exitStation: 0),
            balance: 1_400, sequence: 0x9B),
        Rec(console: 0x16, process: 0x81, payment: 0x00, date: day(2025, 12, 30), route: .rail(entryLine: 0xE3, entryStation: 0x01, exitLine: 0xE3, exitStation: 0x25),
            balance: 400, sequence: 0x9A, region: 0xA0),
        Rec(console: 0x07, process: 0x02, date: day(2025, 12, 1), route: .rail(entryLine: 0x01, entryStation: 0x01, exitLine: 0, exitStation: 0),
            balance: 630, sequence: 0x99),
    ]

    static let walletHistory: [Rec] = [
        Rec(console: 0x16, process: 0x01, date: day(2026, 11, 28), route: .rail(entryLine: 0x25, entryStation: 0x0A, exitLine: 0x01, exitStation: 0x01),
            balance: 3_020, sequence: 0x0203),
        Rec(console: 0x1B, process: 0x02, date: day(2026, 11, 28), route: .rail(entryLine: 0, entryStation: 0, exitLine: 0, exitStation: 0),
            balance: 3_426, sequence: 0x0202),
        Rec(console: 0xC8, process: 0x46, date: day(2026, 11, 2), route: .sale(hour: 7, minute: 5, bytes8to9: 0),
            balance: 426, sequence: 0x0201),
    ]

    static let suicaGateLog: [TransitIC.GateRecord] = [
        TransitIC.GateRecord(kind: 0x20, line: 0x25, station: 0x07, gate: 0x0123, date: day(2026, 11, 27, 8, 47), fare: 200),
        TransitIC.GateRecord(kind: 0xA0, line: 0x25, station: 0x0A, gate: 0x0456, date: day(2026, 11, 27, 8, 31), fare: 0),
    ]

    static let zero = [UInt8](repeating: 0, count: 16)

    static func padded(_ blocks: [[UInt8]], to n: Int) -> [[UInt8]] {
        blocks + Array(repeating: zero, count: max(0, n - blocks.count))
    }

    static func transitServices(_ history: [Rec], balance: Int, counter: Int, gateLog: [TransitIC.GateRecord]) -> [CardImage.Service] {
        [
            .init(code: TransitIC.attributeService,
                  blocks: [TransitIC.Attributes(cardType: 2, region: 0, balance: balance, transactionCounter: counter).encode()]),
            .init(code: TransitIC.historyService, blocks: padded(history.map { $0.encode() }, to: TransitIC.historyBlocks)),
            .init(code: TransitIC.gateLogService, blocks: padded(gateLog.map { $0.encode() }, to: TransitIC.gateLogBlocks)),
            .init(code: TransitIC.pendingEntryService, blocks: TransitIC.encodePendingEntry(line: 0, station: 0, date: nil)),
        ]
    }

    // MARK: - E-money data

    static func edyServices(number: [UInt8], balance: Int) -> [CardImage.Service] {
        let history: [Edy.HistoryRecord] = [
            Edy.HistoryRecord(type: 0x20, sequence: 42, date: day(2026, 11, 28, 19, 5, 33), amount: 520, balance: balance),
            Edy.HistoryRecord(type: 0x02, sequence: 41, date: day(2026, 11, 20, 8, 0, 0), amount: 3_000, balance: balance + 520),
            Edy.HistoryRecord(type: 0x20, sequence: 40, date: day(2026, 11, 19, 23, 59, 59), amount: 180, balance: balance + 520 - 3_000),
            Edy.HistoryRecord(type: 0x04, sequence: 39, date: day(2026, 10, 31, 0, 0, 0), amount: 180, balance: balance + 520 - 3_000 + 180),
        ]
        return [
            .init(code: 0x1108, keyVersion: 0x0200, blockCount: 2),
            .init(code: Edy.numberService, blocks: [Edy.encodeNumber(number)]),
            .init(code: Edy.balanceService, blocks: [Edy.encodeBalance(balance)]),
            .init(code: Edy.historyService, blocks: padded(history.map { $0.encode() }, to: Edy.historyBlocks)),
        ]
    }

    static func nanacoServices(number: [UInt8], balance: Int) -> [CardImage.Service] {
        let history: [Nanaco.HistoryRecord] = [
            Nanaco.HistoryRecord(type: 0x47, amount: 372, balance: balance, date: day(2026, 11, 26, 18, 42), sequence: 0x30),
            Nanaco.HistoryRecord(type: 0x6F, amount: 5_000, balance: balance + 372, date: day(2026, 11, 25, 12, 0), sequence: 0x2F),
            Nanaco.HistoryRecord(type: 0x83, amount: 200, balance: balance + 372 - 5_000, date: day(2026, 11, 1, 9, 15), sequence: 0x2E),
            Nanaco.HistoryRecord(type: 0x47, amount: 1_000, balance: balance + 372 - 5_000 - 200, date: day(2026, 2, 28, 23, 59), sequence: 0x2D),
        ]
        return [
            .init(code: Nanaco.numberService, blocks: [Nanaco.encodeNumber(number)]),
            .init(code: Nanaco.balanceService, blocks: [Nanaco.encodeBalance(balance)]),
            .init(code: 0x5608, keyVersion: 0x0100, blockCount: 2),
            .init(code: Nanaco.pointsService, blocks: Nanaco.encodePoints(thisYear: 123, lastYear: 45)),
            .init(code: Nanaco.historyService, blocks: padded(history.map { $0.encode() }, to: Nanaco.historyBlocks)),
        ]
    }

    static func waonServices(number: [UInt8], balance: Int) -> [CardImage.Service] {
        typealias W = WAON.HistoryRecord
        // Slots in ring order: the newest (0x0001) sits between the two older ones.
        let ring: [W] = [
            W(terminal: "MINISTOP-0042", sequence: 0x0000, type: 0x0C, date: day(2026, 11, 27, 10, 0), balance: balance + 650, debit: 0, credit: 2_000),
            W(terminal: "AEON-MALL-01", sequence: 0x0001, type: 0x04, date: day(2026, 11, 28, 20, 15), balance: balance, debit: 650, credit: 0),
            W(terminal: "AEON-STN-0007", sequence: 0xFFFF, type: 0x04, date: day(2026, 11, 20, 17, 30), balance: balance + 650 - 2_000, debit: 1_200, credit: 0),
        ]
        var history: [[UInt8]] = []
        for r in ring { let (a, b) = r.encode(); history += [a, b] }
        return [
            .init(code: WAON.historyService, blocks: padded(history, to: 9)),
            .init(code: WAON.balanceService, blocks: [WAON.encodeBalance(balance)]),
            .init(code: WAON.pointsService, blocks: [WAON.encodePoints(321)]),
            .init(code: WAON.numberService, blocks: [WAON.encodeNumber(number)]),
            .init(code: 0x6848, keyVersion: 0x0400, blockCount: 1),
        ]
    }
}

extension VirtualCard {
    /// A built-in sample card by name (``SampleCards/names``), or a card image file by path.
    public static func named(_ nameOrPath: String, timing: CardTiming = .typical) throws(FeliCaError) -> VirtualCard {
        if let image = SampleCards.image(named: nameOrPath) { return VirtualCard(image: image, timing: timing) }
        if !CardImage.isImagePath(nameOrPath) {
            throw FeliCaError(.badInput, "no built-in card named \"\(nameOrPath)\" (built-in: \(SampleCards.names.joined(separator: ", "))); a card image path must contain '/' or end in .json or .nfc")
        }
        return VirtualCard(image: try CardImage.load(path: nameOrPath), timing: timing)
    }
}
