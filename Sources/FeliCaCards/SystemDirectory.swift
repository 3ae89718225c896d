import FeliCa

/// A system code that a public list names: who uses it, for what, and where.
public struct KnownSystem: Hashable, Sendable {
    /// What the system is for, in the lists' terms.
    public enum Kind: String, Hashable, Sendable {
        case transit, payment, common, ndef, access, loyalty, id, mobile, general, unfused
    }

    /// The code.
    public var code: SystemCode
    /// The name used here (`OKICA`).
    public var name: String
    /// Other names the lists give the same code (a code two card brands share, or a brand
    /// name besides the operator's).
    public var aliases: [String]
    public var kind: Kind
    /// Country or area (`Japan`, `Hong Kong`, `Global`).
    public var region: String
    /// The public lists that name it (Docs/cards.md, "System codes", gives file and line).
    public var sources: [String]

    public init(_ code: SystemCode, _ name: String, aliases: [String] = [], _ kind: Kind, _ region: String, _ sources: [String]) {
        self.code = code; self.name = name; self.aliases = aliases; self.kind = kind; self.region = region; self.sources = sources
    }

    /// Whether `felica` decodes something there (a purse or ID layout, NDEF, the Lite memory).
    public var isDecoded: Bool { SystemDirectory.isDecoded(code) }
}

/// Every system code the public lists name. The lists are the proxmark3 client's FeliCa
/// system-code list, TRETJapanNFCReader's `FeliCaSystemCode.swift` and Metrodroid's
/// transit modules; where they disagree both readings are kept (Rakuten Edy is 8B61 in
/// one and 8BDC in the other; LuLuCa 04A6 or 804C), each citing its source.
public enum SystemDirectory {
    static let pm3 = "proxmark3"
    static let tret = "TRETJapanNFCReader"
    static let metrodroid = "Metrodroid"

    /// The directory, in code order.
    public static let entries: [KnownSystem] = [
        KnownSystem(0x0003, "transit IC (CJRC)", aliases: ["CJRC", "Suica", "PASMO", "ICOCA"], .transit, "Japan", [pm3, tret]),
        KnownSystem(0x0102, "EZ-Link (legacy)", aliases: ["EZ-Link"], .transit, "Singapore", [pm3]),
        KnownSystem(0x040F, "NicePass", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x04A6, "LuLuCa", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x04C1, "QUICPay", .payment, "Japan", [tret]),
        KnownSystem(0x04C7, "nanaco (own system)", .payment, "Japan", [pm3, tret]),
        KnownSystem(0x12FC, "NDEF", aliases: ["Type 3 Tag"], .ndef, "Global", [pm3, tret]),
        KnownSystem(0x4000, "HCE-F", .general, "Global", [tret]),
        KnownSystem(0x8003, "Yamanashi Kotsu bus", .transit, "Japan", [pm3]),
        KnownSystem(0x8005, "Shenzhen Tong", .transit, "China", [pm3, tret]),
        KnownSystem(0x8008, "Octopus", .transit, "Hong Kong", [pm3, tret]),
        KnownSystem(0x800D, "Himawari bus card", .transit, "Japan", [tret]),
        KnownSystem(0x8016, "Nagasaki Smart Card", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x801E, "AM/PM (Edy issuer marker)", .payment, "Japan", [pm3]),
        KnownSystem(0x8029, "Saitama Railway", .transit, "Japan", [pm3]),
        KnownSystem(0x802B, "Setamaru", .transit, "Japan", [pm3]),
        KnownSystem(0x804C, "Kitami Bus", aliases: ["LuLuCa (TRETJapanNFCReader)"], .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8074, "Ohmi Railway bus", .transit, "Japan", [tret]),
        KnownSystem(0x80DE, "IruCa", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x80E0, "desuca / IC e-card (Shikoku)", aliases: ["desuca", "IC e-card"], .transit, "Japan", [pm3, tret]),
        KnownSystem(0x80EF, "ICa", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8102, "MIWA FKL", .access, "Japan", [pm3]),
        KnownSystem(0x811D, "Karuwaza Club", .loyalty, "Japan", [pm3]),
        KnownSystem(0x8157, "CI-CA", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8182, "ANA QUICPay + nanaco", .payment, "Japan", [pm3]),
        KnownSystem(0x8194, "RapiCa / Iwasaki IC (Kagoshima)", aliases: ["RapiCa", "Iwasaki IC"], .transit, "Japan", [pm3, tret]),
        KnownSystem(0x81A1, "Tebra-F ID", .access, "Japan", [pm3]),
        KnownSystem(0x81CA, "Honda C Card (Edy issuer marker)", .payment, "Japan", [pm3]),
        KnownSystem(0x825E, "MIWA IEL", .access, "Japan", [pm3]),
        KnownSystem(0x8287, "NicoPa", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x832C, "passca / ecomyca (Toyama)", aliases: ["passca", "ecomyca"], .transit, "Japan", [pm3, tret]),
        KnownSystem(0x83CC, "HareCa", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x83EE, "ayuca", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x84A1, "hanica", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x852B, "WAON (issuer marker)", .payment, "Japan", [pm3]),
        KnownSystem(0x854C, "EX-IC", .transit, "Japan", [tret]),
        KnownSystem(0x8592, "PASPY", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x862C, "itappy", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x865E, "SAPICA", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x869B, "Tsukica", .transit, "Japan", [pm3]),
        KnownSystem(0x86A7, "Suica (extra system)", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8760, "FCF campus card", aliases: ["FCF"], .id, "Japan", [tret]),
        KnownSystem(0x88B4, "FeliCa Lite-S", aliases: ["FeliCa Lite"], .common, "Global", [pm3, tret]),
        KnownSystem(0x8B43, "NORUCA", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8B5D, "Ryuto", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8B61, "Rakuten Edy (extra system)", .payment, "Japan", [tret]),
        KnownSystem(0x8B98, "Randen", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x8BDC, "Rakuten Edy (own system)", .payment, "Japan", [pm3]),
        KnownSystem(0x8C0B, "San-in Shinpan (Edy issuer marker)", .payment, "Japan", [pm3]),
        KnownSystem(0x8CC1, "Speedpass", .payment, "Japan", [pm3]),
        KnownSystem(0x8D3F, "Kururu", .transit, "Japan", [pm3]),
        KnownSystem(0x8DB6, "Asahikawa bus", .transit, "Japan", [pm3]),
        KnownSystem(0x8E35, "Skyrail Pass", .transit, "Japan", [pm3]),
        KnownSystem(0x8E4B, "Univ. Co-op IC prepaid (marker)", .payment, "Japan", [tret]),
        KnownSystem(0x8E58, "odeca", .transit, "Japan", [pm3]),
        KnownSystem(0x8F18, "Nankai (Natchi)", .transit, "Japan", [pm3]),
        KnownSystem(0x8FC1, "OKICA", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x9027, "Kumamon IC Card", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x9099, "emica", .transit, "Japan", [pm3]),
        KnownSystem(0x90AB, "Ibappi", .transit, "Japan", [pm3]),
        KnownSystem(0x90B7, "KMT", aliases: ["Kartu Multi Trip"], .transit, "Indonesia", [pm3, metrodroid]),
        KnownSystem(0x90E3, "Dhaka MRT Pass", .transit, "Bangladesh", [pm3]),
        KnownSystem(0x9105, "Starbucks Touch", .loyalty, "Japan", [pm3]),
        KnownSystem(0x927A, "Hayakaken (extra system)", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x9373, "MRT Jakarta", aliases: ["MRTJ", "Kartu Multi Trip Jelajah"], .transit, "Indonesia", [pm3, metrodroid]),
        KnownSystem(0x93EC, "NTasu", .transit, "Japan", [pm3, tret]),
        KnownSystem(0x9450, "HCMC Metro", .transit, "Vietnam", [pm3]),
        KnownSystem(0x9506, "kinoca", .transit, "Japan", [pm3]),
        KnownSystem(0x957A, "FeliCa Secure ID", .id, "Global", [pm3]),
        KnownSystem(0xFE00, "common area", aliases: ["common"], .common, "Japan", [pm3, tret]),
        KnownSystem(0xFE0F, "Osaifu-Keitai container", .mobile, "Japan", [pm3]),
        KnownSystem(0xFEE1, "FeliCa Plug", .general, "Global", [tret]),
    ]

    private static let byCode: [SystemCode: KnownSystem] = Dictionary(uniqueKeysWithValues: entries.map { ($0.code, $0) })

    /// The entry for `code`, nil when no list names it.
    public static func lookup(_ code: SystemCode) -> KnownSystem? { byCode[code] }

    /// Whether `felica` decodes something in `code`: a system a purse or ID layout lives in
    /// (``PurseLayout/all``), the common area, NDEF and the Lite memory.
    public static func isDecoded(_ code: SystemCode) -> Bool {
        if code == .common || code == .ndef || code == .liteS { return true }
        return PurseLayout.all.contains { if case .ownSystem(let codes) = $0.placement { codes.contains(code) } else { false } }
    }

    /// The short name shown next to a code: the name the library has long used where it has
    /// one (`SystemCode.knownName`), else the directory's.
    public static func displayName(of code: SystemCode) -> String? {
        code.knownName ?? lookup(code)?.name
    }

    /// A name folded for comparison: lowercase, letters and digits only.
    static func fold(_ s: String) -> String {
        String(s.lowercased().filter { $0.isLetter || $0.isNumber })
    }

    /// The code a name or alias stands for (`okica`, `kmt`, `MRT Jakarta`), case, spaces
    /// and punctuation ignored. Nil when no entry has that name; an error message when
    /// several do.
    public static func code(named name: String) -> Result<SystemCode, FeliCaError>? {
        let key = fold(name)
        guard !key.isEmpty else { return nil }
        let exact = entries.filter { fold($0.name) == key }
        let matches = exact.isEmpty ? entries.filter { $0.aliases.contains { fold($0) == key } } : exact
        guard let first = matches.first else { return nil }
        if matches.count > 1 {
            let list = matches.map { "\($0.code) (\($0.name))" }.joined(separator: ", ")
            return .failure(FeliCaError(.invalidArgument, "\"\(name)\" names several systems: \(list); give the code"))
        }
        return .success(first.code)
    }
}
